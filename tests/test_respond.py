"""One response path (gate/respond.py): every answer of every tool fits its budget, and a small budget
degrades (fewer items, then pointers only, then the card) instead of failing."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from docs import long_markdown
from mcp import Client

from sparseread_mcp import BudgetTooSmall, Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.config import MIN_BUDGET_TOKENS
from sparseread_mcp.gate.respond import fit_card, fit_pack, handle_reserve, shrink_pack
from sparseread_mcp.protocol.card import build_card
from sparseread_mcp.serve.server import _with_handle, create_server
from sparseread_mcp.wire import wire_blocks, wire_dict

ACTIONS = ("scout", "focus", "collect", "refine", "verify")
_SENTENCE = "The kiln fires at 1200 degrees on Tuesdays, and the glaze room closes at noon on Fridays for cleaning."


def _tree(root: Path) -> None:
    (root / "manual.md").write_text(long_markdown(sections=30))
    (root / "small.md").write_text(f"# Small\n\n{_SENTENCE}\n")
    (root / "app.py").write_text(
        "".join(f"class C{i}:\n    def m{k}(self):\n        return {i * k}\n\n" for i in range(40) for k in range(3))
    )
    (root / "rows.csv").write_text("id,city,amount\n" + "".join(f"{i},City{i},{i * 3}\n" for i in range(1, 600)))
    (root / "data.json").write_text(json.dumps({"items": [{"id": i, "tag": f"t{i % 7}"} for i in range(300)]}))


def _request(target: str, action: str, view: str | None, budget: int) -> ReadRequest:
    slots = [{"id": "where", "question": "which section mentions the harbor"}] if action == "collect" else None
    intent = Intent.model_validate({"goal": "turbine harbor section 7 City77", "slots": slots})
    return ReadRequest(target=target, action=action, view=view, intent=intent, budget_tokens=budget)  # type: ignore[arg-type]


def _card_floor(engine: ReadEngine, target: str) -> int:
    """The smallest answer about `target`, as the wire counts it: its card with everything sheddable shed (a
    directory has no card: its answer's frame with no item)."""
    if target == ".":
        answer = engine.read("floor", _request(".", "focus", None, 8_000))
        return shrink_pack(answer.model_copy(update={"items": []}), 0, engine.counter).tokens
    card = engine.read("floor", _request(target, "focus", "card", 8_000))  # the same intent: the same coverage
    return shrink_pack(card, 0, engine.counter).tokens


@pytest.mark.parametrize("target", ["manual.md", "small.md", "app.py", "rows.csv", "data.json", "."])
def test_every_action_and_view_answers_within_small_budgets(tmp_path: Path, target: str) -> None:
    """Budgets from the floor up answer within themselves; a refusal only where not even the card fits."""
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    floor = _card_floor(engine, target)
    answered = 0
    for budget in (MIN_BUDGET_TOKENS, 300, 450):
        for action in ACTIONS:
            if target == "." and action == "verify":
                continue  # a directory has no claim to verify (an IntentError, tested elsewhere)
            for view in (None, "full", "outline", "card"):
                session = f"{action}-{view}-{budget}"
                try:
                    preview = engine.preview(session, target, budget_tokens=budget)
                    assert preview.tokens <= budget
                    assert sum(engine.counter.count(b) for b in wire_blocks(preview)) <= budget
                    pack = engine.read(session, _request(target, action, view, budget))
                except BudgetTooSmall:
                    assert budget < floor, f"{action}/{view} refused at {budget} though the card needs {floor}"
                    continue
                assert pack.tokens <= budget and sum(engine.counter.count(b) for b in wire_blocks(pack)) <= budget
                assert pack.truncated is False
                answered += 1
    assert answered  # the sweep did answer, not only refuse


def test_budget_300_answers_every_action_with_the_default_tokenizer(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    for target in ("manual.md", "app.py", "rows.csv", "."):
        for action in ACTIONS:
            if target == "." and action == "verify":
                continue
            pack = engine.read(f"s-{target}-{action}", _request(target, action, None, 300))
            assert pack.tokens <= 300, (target, action)


def test_no_passage_fits_answers_with_pointers_and_charges_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,), passage_chars=2_400))  # passages of ~250 tokens
    goal = Intent(goal="turbine harbor")
    roomy = engine.read("a", ReadRequest(target="manual.md", intent=goal, budget_tokens=8_000))
    assert roomy.items and roomy.view == "snippets"
    tight = engine.read("b", ReadRequest(target="manual.md", intent=goal, budget_tokens=200))
    assert tight.items == [] and tight.view == "pointers" and tight.tokens <= 200
    assert tight.left_out is not None and "did not fit budget_tokens=200" in tight.left_out
    assert "none fits budget_tokens=200" in tight.gate.reason
    assert tight.exposure.episode_chars == 0  # nothing delivered, nothing charged
    pointer = tight.left_out.split(": ", 1)[1].split(" ")[0].rstrip(",;")
    assert pointer == roomy.items[0].pointer  # the best passage, named by the pointer it would have had
    again = engine.read("b", ReadRequest(target="manual.md", intent=goal, budget_tokens=8_000))
    assert again.items and again.items[0].pointer == pointer  # never delivered, so not "already delivered"


def test_a_fallback_too_large_for_the_budget_answers_without_delivering(tmp_path: Path) -> None:
    text = "\n\n".join(f"Ledger entry {i}: the ledger balance moved by {i * 7} units on day {i}." for i in range(60))
    (tmp_path / "short.md").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    engine.read("s", ReadRequest(target="short.md", intent=Intent(goal="ledger balance entry"), budget_tokens=8_000))
    pack = engine.read("s", ReadRequest(target="short.md", action="refine", budget_tokens=300))
    while pack.gate.decision == "sparse" and pack.items:
        pack = engine.read("s", ReadRequest(target="short.md", action="refine", budget_tokens=300))
    assert pack.tokens <= 300


def test_a_large_file_range_over_the_budget_names_sub_ranges(tmp_path: Path) -> None:
    (tmp_path / "big.log").write_text("".join(f"line {i} of a log too large to parse whole\n" for i in range(4_000)))
    engine = ReadEngine(Settings(roots=(tmp_path,), max_parse_bytes=10_000))
    pack = engine.read("s", ReadRequest(target="big.log#L1-L400", budget_tokens=600))
    assert pack.items == [] and pack.view == "pointers" and pack.tokens <= 600
    assert pack.left_out is not None and "big.log#L1-L" in pack.left_out
    first = pack.left_out.split(": ", 1)[1].split(",")[0]
    sub = engine.read("s", ReadRequest(target=first, budget_tokens=600))
    assert sub.items and sub.items[0].text.startswith("line 0 of") and sub.tokens <= 600


def test_the_card_fits_small_budgets_with_a_long_session(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    goal = "a very long goal " * 300
    for n in range(12):
        engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal=f"{goal} {n}"), budget_tokens=2_000))
    card = engine.card("s", budget_tokens=MIN_BUDGET_TOKENS, trace=True)
    assert card.tokens <= MIN_BUDGET_TOKENS and card.left_out
    session = engine.sessions.get("s")
    assert fit_card(build_card(session, changed=[]), 300, engine.counter).tokens <= 300


def test_the_session_handle_fits_in_the_room_kept_for_it(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    handle = "rs-" + "ab" * 12
    reserve = handle_reserve(handle, engine.counter)
    for budget in (300, 1_000):
        pack = engine.read("s", _request("manual.md", "focus", None, budget), reserve_tokens=reserve)
        preview = engine.preview("s", "manual.md", budget_tokens=budget, reserve_tokens=reserve)
        card = engine.card("s", budget_tokens=budget, reserve_tokens=reserve)
        for answer in (pack, preview, card):
            sent = _with_handle(answer, handle, engine.counter)
            assert sum(engine.counter.count(b) for b in wire_blocks(sent)) <= budget


@pytest.mark.anyio
async def test_every_tool_answers_within_300_tokens_through_the_mcp_client(tmp_path: Path) -> None:
    _tree(tmp_path)
    settings = Settings(roots=(tmp_path,))
    engine = ReadEngine(settings)
    with anyio.fail_after(60):
        async with Client(create_server(settings, engine=engine)) as client:
            calls: list[tuple[str, dict[str, object]]] = [
                ("sro_preview", {"path": "manual.md"}),
                ("sro_preview", {"path": "."}),
                ("sro_card", {"trace": True}),
            ]
            for target in ("manual.md", "rows.csv", "."):
                for action in ACTIONS:
                    if target == "." and action == "verify":
                        continue
                    request = _request(target, action, None, 300)
                    intent = request.intent.model_dump(exclude_none=True) if request.intent else {}
                    calls.append(("sro_read", {"target": target, "action": action, "intent": intent}))
            calls.append(("sro_read", {"target": "manual.md", "view": "full"}))
            for tool, arguments in calls:
                result = await client.call_tool(tool, {**arguments, "budget_tokens": 300})
                assert not result.is_error, (tool, arguments, result.content)
                text = result.content[0].text  # type: ignore[union-attr]
                assert engine.counter.count(text) <= 300, (tool, arguments)


def test_a_follow_up_on_a_file_held_whole_has_a_minimal_frame(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    assert engine.preview("s", "small.md").content is not None  # native: the whole file came with it
    claim = _SENTENCE.lower()  # a long claim: its echo is clipped
    verify = engine.read("s", ReadRequest(target="small.md", action="verify", intent=Intent(goal=claim)))
    assert verify.verification is not None and verify.verification.status == "supported"
    assert verify.items == [] and verify.already_delivered  # named, not resent
    assert verify.next == [] and all(c.pointers == [] for c in verify.coverage)  # nothing said twice
    wire = wire_dict(verify)  # nor what the pointers and the decision already say: the verdict alone
    assert set(wire) == {"verification", "tokens"} and set(wire["verification"]) == {"status", "pointer"}
    assert len(verify.episode.objective) <= 80 and verify.episode.objective.endswith("...")
    fresh = engine.read("t", ReadRequest(target="small.md", action="verify", intent=Intent(goal=claim)))
    assert fresh.items and fresh.tokens > verify.tokens  # a session without the file gets its text


def test_the_ladder_sheds_hints_then_echoes_and_never_items(tmp_path: Path) -> None:
    _tree(tmp_path)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    # A goal the file only partly holds: a `found` answer leaves out the robust default's hint.
    intent = Intent(goal="turbine harbor zeppelin")
    pack = engine.read("s", ReadRequest(target="manual.md", intent=intent, budget_tokens=8_000))
    assert pack.items and pack.next  # the lean wire sends few hints: at least one to shed
    one_less = fit_pack(pack, pack.tokens - 1, engine.counter)
    assert one_less.items == pack.items and one_less.next == pack.next[:-1]  # the last hint goes first
    assert one_less.scope == pack.scope and one_less.gate == pack.gate  # echoes only once hints are gone
    smallest = shrink_pack(pack, 0, engine.counter)
    # An ordinary batch's echoes (scope, gate, selection) are not on the wire: shedding them costs nothing.
    assert smallest.items == pack.items and smallest.next == [] and smallest.tokens <= one_less.tokens
    assert smallest.exposure == pack.exposure  # the ledger is never shed
    with pytest.raises(BudgetTooSmall, match="raise budget_tokens"):
        fit_pack(pack, smallest.tokens - 1, engine.counter)
