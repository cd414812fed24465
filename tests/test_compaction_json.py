"""One-line JSON results (a booking agent's records) and the pointers shortened results name."""

from __future__ import annotations

import json

from sparseread_mcp import compact_history
from sparseread_mcp.compaction.elide import HEADER, MARK, pointer, resolve
from sparseread_mcp.compaction.handles import handles
from sparseread_mcp.tokens import TokenCounter


def _record(code: str, flight: str, price: int) -> str:
    return json.dumps(
        {
            "reservation_id": code,
            "user_id": "omar_davis_3817",
            "status": "confirmed",
            "cabin": "economy",
            "flights": [
                {"origin": "SFO", "destination": "BOS", "flight_number": flight, "date": "2024-05-16", "price": price}
            ],
            "passengers": [{"first_name": "Omar", "last_name": "Davis", "dob": "1982-10-19"}],
            "payment_history": [{"payment_id": "gift_card_6847880", "amount": price + 40}],
            "created_at": "2024-05-11T01:11:41",
            "insurance": "no",
        }
    )


def _run(call_ids: list[str]) -> list[dict[str, object]]:
    """A booking run: one record per call, each a one-line JSON result; the same user and card in every one."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Look at my reservations."},
    ]
    for n, call_id in enumerate(call_ids):
        arguments = json.dumps({"reservation_id": f"R{n:03d}X"})
        call = {"id": call_id, "type": "function", "function": {"name": "get_reservation", "arguments": arguments}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        content = _record(f"R{n:03d}X", f"HAT{100 + n}", 300 + 17 * n)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return messages


def _results(messages: list[dict[str, object]]) -> dict[str, str]:
    return {str(m["tool_call_id"]): str(m["content"]) for m in messages if m["role"] == "tool"}


def test_a_json_results_ids_dates_and_amounts_survive_and_what_stays_is_verbatim() -> None:
    ids = [f"call_{n}" for n in range(6)]
    # caution=None: every result keeps every key it alone holds, whatever its age
    original, compacted = _results(_run(ids)), _results(compact_history(_run(ids), caution=None))
    shortened = [call_id for call_id in ids if compacted[call_id].startswith(HEADER)]
    assert shortened  # the repeated members (user, card, names, created_at) are held by newer records
    for call_id in shortened:
        _, line = compacted[call_id].split("\n")
        record = json.loads(original[call_id])
        flight = record["flights"][0]
        amount = record["payment_history"][0]["amount"]
        for value in (flight["flight_number"], f'"price": {flight["price"]}', f'"amount": {amount}'):
            assert value in line  # what this record alone holds stays
        assert len(line) < len(original[call_id])
        for piece in line.split(f" {MARK} "):
            assert piece in original[call_id]  # members kept verbatim, never rewritten
    every = "\n".join(compacted.values())
    for key in ("omar_davis_3817", "gift_card_6847880", "2024-05-16", "1982-10-19", "2024-05-11T01:11:41"):
        assert key in every  # a repeated key stays once, in its newest copy


def test_a_pointer_names_a_piece_of_a_long_call_id_and_one_lookup_resolves_it() -> None:
    ids = [f"call_Qw8rT9x8Yz7Lk3Mn4Op5B{n}q" for n in range(6)]
    archive: dict[str, str] = {}
    compacted = _results(compact_history(_run(ids), archive=archive))
    headers = [text.split("\n", 1)[0] for text in compacted.values() if text.startswith(HEADER)]
    assert headers
    for call_id, text in compacted.items():
        if text.startswith(HEADER):
            named = pointer(text)
            assert named and named in call_id and len(named) < len(call_id)
            assert not any(named in other for other in ids if other != call_id)
            assert resolve(archive, named) == _results(_run(ids))[call_id]


def test_a_pointer_is_the_cheapest_piece_no_other_id_holds_and_never_costs_more_than_the_ids_end() -> None:
    counter = TokenCounter()
    ids = [
        "call_iYvPHzJ3KZ16qbCZIyHq5lNb",
        "call_623Ldcmi5Sz2YCJ2lY7O9oD5",
        "toolu_01",
        "toolu_02",
        "call_1",
        "call_12",
    ]
    named = handles(ids)
    archive = {call_id: f"result of {call_id}" for call_id in ids}
    for call_id in ids:
        piece = named[call_id]
        assert piece in call_id
        assert piece == call_id or not any(piece in other for other in ids if other != call_id)
        assert resolve(archive, piece) == archive[call_id]  # one lookup, the right call (a whole id first)
        end = call_id[-4:] if len(call_id) > 8 else call_id  # what the pointer was before
        assert counter.count(f" {piece}]") <= counter.count(f" {end}]")
    assert counter.count(f" {named['toolu_01']}]") < counter.count(" toolu_01]")  # a numbered id: its number
    assert named["call_1"] == "call_1"  # every piece of it is in `call_12` too: the whole id


def test_calls_ending_alike_are_named_by_a_piece_no_other_id_holds() -> None:
    ids = [f"call_{n}{'A' * 20}Mn4Op5Bq" for n in range(6)]  # every id ends with the same 28 characters
    archive: dict[str, str] = {}
    compacted = _results(compact_history(_run(ids), archive=archive))
    assert any(text.startswith(HEADER) for text in compacted.values())
    for call_id, text in compacted.items():
        if text.startswith(HEADER):
            named = pointer(text)
            assert named and named in call_id and len(named) < len(call_id)
            assert not any(named in other for other in ids if other != call_id)
            assert resolve(archive, named) == _results(_run(ids))[call_id]  # one lookup, the right result


def test_an_old_json_result_keeps_its_ids_and_compacting_again_keeps_them() -> None:
    ids = [f"call_{n}" for n in range(6)]
    once = compact_history(_run(ids))  # the default: the oldest records are past the horizon
    twice = compact_history(once)
    for history in (once, twice):
        text = "\n".join(_results(history).values())
        assert all(f"HAT{100 + n}" in text for n in range(6))  # ids mixing letters and digits last


def _profile() -> str:
    """A user's profile: two cards, each with its last four digits (a number: not a lasting key)."""
    cards = {
        "credit_card_4303738": {"source": "credit_card", "brand": "mastercard", "last_four": "7719"},
        "credit_card_2408938": {"source": "credit_card", "brand": "visa", "last_four": "2135"},
    }
    return json.dumps({"user_id": "daiki_muller_1116", "name": {"first_name": "Daiki"}, "payment_methods": cards})


def _paying_run() -> list[dict[str, object]]:
    """The profile first, then eight records (the profile is far past the horizon), then a booking that pays
    with the first card; the agent will next tell the user the card's last four digits."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an airline agent."},
        {"role": "user", "content": "Book it and tell me which card you charged."},
    ]

    def step(call_id: str, name: str, arguments: dict[str, object], result: str) -> None:
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})

    step("call_p", "get_user_details", {"user_id": "daiki_muller_1116"}, _profile())
    for n in range(8):
        step(f"call_{n}", "get_reservation", {"reservation_id": f"R{n:03d}X"}, _record(f"R{n:03d}X", f"HAT{n}", 300))
    booking = {"flight_number": "HAT7", "payment_id": "credit_card_2408938"}
    step("call_b", "book_reservation", booking, json.dumps({"reservation_id": "NEW123", "status": "confirmed"}))
    return messages


def test_a_record_the_agent_acted_on_keeps_its_fields_past_the_horizon() -> None:
    # caution=0: the horizon is its floor, so the profile is stale and keeps only lasting keys ...
    paid = _results(compact_history(_paying_run(), caution=0.0))["call_p"]
    assert paid.startswith(HEADER)
    # ... but the card the agent charged is a record it acted on: its last four digits, which the agent is
    # about to tell the user, stay verbatim (the card's id is in the agent's own call, not in what stays).
    assert '"last_four": "2135"' in paid and len(paid) < len(_profile())


def _view_run(call_ids: list[str]) -> list[dict[str, object]]:
    """One view per call: each a unique line among lines of plain prose."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "Read the files."}]
    for n, call_id in enumerate(call_ids):
        call = {"id": call_id, "type": "function", "function": {"name": "view", "arguments": "{}"}}
        text = "\n".join([f"def helper_{n}_value(): pass", *["Plain words that name nothing at all."] * 12])
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": text},
        ]
    return messages


def test_a_pointer_stays_unambiguous_when_a_later_call_ends_the_same_way() -> None:
    # Recorded ids like `call_ahToD2vM0aQWJPkRmy5cumru__dup1`: calls made later may share their last characters.
    ids = ["call_0Qw8rT9x8Yz7Lk3Mn4Op__dup1", "call_1", "call_2", "call_9Zx8rT9x8Yz7Lk3Mn4Op__dup1", "call_4"]
    archive: dict[str, str] = {}
    first = compact_history(_view_run(ids[:3]), archive=archive)  # the first result's pointer is chosen now ...
    assert str(first[2]["content"]).startswith(HEADER)
    grown = [*first, *_view_run(ids)[len(first) :]]
    later = _results(compact_history(grown, archive=archive))  # ... and a later call ends the same way
    assert later[ids[0]].startswith(HEADER) and later[ids[3]].startswith(HEADER)
    for call_id, text in later.items():
        if text.startswith(HEADER):
            named = pointer(text)
            assert named and resolve(archive, named) == _results(_view_run(ids))[call_id]  # one lookup, right one
