"""The Read Intent Protocol: intents, the five actions, coverage and invalidation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import source_at
from docs import long_markdown

from sparseread_mcp import Intent, IntentError, ReadEngine, ReadRequest, Settings, Slot


@pytest.fixture
def manual(tmp_path: Path) -> tuple[ReadEngine, str]:
    text = long_markdown()
    (tmp_path / "manual.md").write_text(text)
    return ReadEngine(Settings(roots=(tmp_path,))), text


def test_focus_finds_the_needle_verbatim(manual: tuple[ReadEngine, str]) -> None:
    engine, text = manual
    pack = engine.read(
        "s", ReadRequest(target="manual.md", intent=Intent(goal="which paragraph", needles=["SEC17-P1-MARK"]))
    )
    assert pack.gate.decision == "sparse"
    assert "SEC17-P1-MARK" in pack.items[0].text
    for item in pack.items:
        assert source_at(text, item.anchor) == item.text
        assert item.pointer.startswith("manual.md@sha256:") and item.pointer.endswith("#" + item.anchor)


def test_first_intent_becomes_the_session_intent_and_fills_unsaid_fields(manual: tuple[ReadEngine, str]) -> None:
    engine, _ = manual
    engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="rates in the tables", want="table")))
    pack = engine.read("s", ReadRequest(target="manual.md", intent=Intent(needles=["rate30"])))
    assert pack.episode.objective == "rates in the tables"
    assert any("rate30" in i.text for i in pack.items)
    card = engine.card("s")
    assert card.session_intent is not None and card.session_intent.goal == "rates in the tables"


def test_underspecified_intent_gets_a_bounded_preview_and_what_to_add(manual: tuple[ReadEngine, str]) -> None:
    engine, _ = manual
    pack = engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="the of and")))
    assert pack.items == []
    assert pack.preview is not None and pack.preview.outline
    assert pack.message and "goal" in pack.message and "needles" in pack.message
    assert pack.tokens <= 8000


def test_refine_never_resends_an_item(manual: tuple[ReadEngine, str]) -> None:
    engine, text = manual
    first = engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="glacier orchard violin")))
    seen = [(i.lines, i.anchor) for i in first.items]
    spans = [source_at(text, i.anchor) for i in first.items]
    for _ in range(5):
        more = engine.read("s", ReadRequest(target="manual.md", action="refine"))
        for item in more.items:
            assert (item.lines, item.anchor) not in seen
            assert item.text not in spans
            seen.append((item.lines, item.anchor))
            spans.append(item.text)
        assert more.episode.id == first.episode.id


def test_a_new_goal_names_what_the_session_already_received_instead_of_sending_it_again(
    manual: tuple[ReadEngine, str],
) -> None:
    engine, _ = manual
    first = engine.read(
        "s", ReadRequest(target="manual.md", intent=Intent(goal="which paragraph", needles=["SEC17-P1-MARK"]))
    )
    other = Intent(goal="the marker of section 17, paragraph 1", needles=["SEC17-P1-MARK"])
    again = engine.read("s", ReadRequest(target="manual.md", action="collect", intent=other))
    assert again.episode.id != first.episode.id  # another objective, another episode
    sent = {i.pointer for i in first.items}
    assert not sent & {i.pointer for i in again.items}  # nothing the session holds is sent again ...
    assert sent & set(again.already_delivered)  # ... it is named,
    assert [c.status for c in again.coverage] == ["found"]  # and what it says still counts
    assert again.items or again.exposure.payload_chars == 0  # naming costs the ledger nothing
    # A refine under the new objective reads on past what the agent holds.
    more = engine.read("s", ReadRequest(target="manual.md", action="refine", intent=other))
    assert more.episode.id == again.episode.id and more.items
    assert not sent & {i.pointer for i in more.items}
    # Another session holds nothing: it gets the text.
    fresh = engine.read("t", ReadRequest(target="manual.md", action="collect", intent=other))
    assert any("SEC17-P1-MARK" in i.text for i in fresh.items)


def test_refine_reads_on_down_the_ranking_until_every_match_was_read(tmp_path: Path) -> None:
    # Forty sections, each naming the term once among other words: more matches than one refine takes.
    filler = " ".join(["the survey recorded routine figures for the quarter"] * 6)
    parts = [f"## Part {n}\n\nPart {n} notes a quasar sighting (QX{n}). {filler}\n" for n in range(40)]
    (tmp_path / "log.md").write_text("\n".join(parts))
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    pack = engine.read("s", ReadRequest(target="log.md", intent=Intent(goal="quasar sighting"), budget_tokens=600))
    read = {m for i in pack.items for m in re.findall(r"QX\d+", i.text)}
    for _ in range(40):
        more = engine.read("s", ReadRequest(target="log.md", action="refine", budget_tokens=600))
        if not more.items:
            break
        read |= {m for i in more.items for m in re.findall(r"QX\d+", i.text)}
    assert read == {f"QX{n}" for n in range(40)}  # no refine came back empty while a match was unread


def test_refine_around_an_anchor_expands_to_the_neighbours(manual: tuple[ReadEngine, str]) -> None:
    engine, _ = manual
    pack = engine.read("s", ReadRequest(target="manual.md", intent=Intent(needles=["SEC20-P1-MARK"])))
    anchor = pack.items[0].anchor
    more = engine.read("s", ReadRequest(target=f"manual.md#{anchor}", action="refine"))
    assert more.items
    first_line = pack.items[0].lines[0]
    assert all(abs(i.lines[0] - first_line) < 40 for i in more.items)


def test_collect_reports_coverage_per_slot_and_never_claims_sufficiency(manual: tuple[ReadEngine, str]) -> None:
    engine, _ = manual
    slots = [
        Slot(id="rate40", question="what is the rate in section 40", aliases=["rate40"]),
        Slot(id="marker", question="unique marker SEC5-P2-MARK", aliases=["SEC5-P2-MARK"]),
        Slot(id="absent", question="quarterly dividend of the zeppelin company"),
    ]
    pack = engine.read("s", ReadRequest(target="manual.md", action="collect", intent=Intent(slots=slots)))
    status = {c.slot: c.status for c in pack.coverage}
    assert status["rate40"] == "found" and status["marker"] == "found"
    assert status["absent"] != "found"
    assert "absent" in pack.unresolved and "rate40" not in pack.unresolved
    found = {c.slot: c.pointers for c in pack.coverage}
    assert any("rate40" in i.text for i in pack.items if i.pointer in found["rate40"])
    assert "sufficient" not in pack.model_dump_json()


def test_verify_a_claim_supported_and_contradicted(manual: tuple[ReadEngine, str]) -> None:
    engine, _ = manual
    ok = engine.read("s", ReadRequest(target="manual.md", action="verify", intent=Intent(goal="rate40 is 120.5%")))
    assert ok.verification is not None and ok.verification.status == "supported"
    assert "120.5%" in ok.items[0].text
    bad = engine.read("t", ReadRequest(target="manual.md", action="verify", intent=Intent(goal="rate40 is 99.5%")))
    assert bad.verification is not None and bad.verification.status == "contradicted"
    with pytest.raises(IntentError, match="claim"):
        engine.read("u", ReadRequest(target="manual.md", action="verify"))


def test_verify_reads_numbers_the_way_filings_write_them(tmp_path: Path) -> None:
    (tmp_path / "cash.md").write_text(
        "# Cash flows\n\nPurchases of property, plant and equipment were (1,577) million in 2018.\n"
    )
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    claim = "purchases of property plant and equipment were $1577.00 million"
    pack = engine.read("s", ReadRequest(target="cash.md", action="verify", intent=Intent(goal=claim)))
    assert pack.verification is not None and pack.verification.status == "supported"
    wrong = engine.read(
        "t", ReadRequest(target="cash.md", action="verify", intent=Intent(goal=claim.replace("77", "78")))
    )
    assert wrong.verification is not None and wrong.verification.status == "contradicted"


def test_pointers_dereference_and_verify_ok_moved_changed(tmp_path: Path) -> None:
    text = long_markdown()
    doc = tmp_path / "manual.md"
    doc.write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pack = engine.read("s", ReadRequest(target="manual.md", intent=Intent(needles=["SEC30-P0-MARK"])))
    pointer = pack.items[0].pointer
    deref = engine.read("d", ReadRequest(target=pointer))
    assert deref.items[0].text == pack.items[0].text
    assert engine.read("v", ReadRequest(target=pointer, action="verify")).verification.status == "ok"  # type: ignore[union-attr]
    doc.write_text("# Preface\n\nA new opening paragraph.\n\n" + text)
    moved = engine.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert moved is not None and moved.status == "moved" and moved.new_anchor
    doc.write_text(text.replace("SEC30-P0-MARK", "SEC30-P0-EDITED"))
    changed = engine.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert changed is not None and changed.status == "changed" and "EDITED" in (changed.diff or "")
    doc.unlink()
    gone = engine.read("v", ReadRequest(target=pointer, action="verify")).verification
    assert gone is not None and gone.status == "gone"


def test_a_changed_file_invalidates_earlier_evidence(tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    doc.write_text(long_markdown())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    first = engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="harbor lantern")))
    doc.write_text(long_markdown(seed=99))
    assert engine.card("s").changed == ["manual.md"]
    second = engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="harbor lantern")))
    assert second.invalidated == [i.pointer for i in first.items]
    assert second.message and "changed" in second.message
    assert second.episode.id != first.episode.id
    card = engine.card("s")
    assert card.changed == []
    assert [e.stale for e in card.episodes] == [True, False]


def test_count_is_an_exact_operation_over_the_whole_file(manual: tuple[ReadEngine, str]) -> None:
    engine, text = manual
    pack = engine.read(
        "s",
        ReadRequest(
            target="manual.md", intent=Intent(goal="how many tables", want="count", needles=["| key | value |"])
        ),
    )
    assert pack.result is not None and pack.result.value == text.count("| key | value |")


def test_scout_returns_the_preview_in_the_pack(manual: tuple[ReadEngine, str]) -> None:
    engine, text = manual
    pack = engine.read("s", ReadRequest(target="manual.md", action="scout"))
    assert pack.preview is not None
    assert pack.preview.full_view_chars == len(text)
    assert pack.preview.route == "sparse"
    assert [o.title for o in pack.preview.outline][:2] == ["Field manual", "Section 1: invoice"]


def test_section_anchor_reads_that_section(manual: tuple[ReadEngine, str]) -> None:
    engine, text = manual
    pack = engine.read("s", ReadRequest(target="manual.md#Section 12: glacier", budget_tokens=4000))
    assert pack.items[0].text.startswith("## Section 12: glacier")
    assert "SEC13" not in pack.items[0].text
    assert source_at(text, pack.items[0].anchor) == pack.items[0].text


def test_repeated_reads_of_an_unchanged_file_do_not_reparse_or_reindex(manual: tuple[ReadEngine, str]) -> None:
    engine, _ = manual
    engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="turbine")))
    parsed = engine.open("manual.md")
    index = parsed.locator_state["bm25.index"]
    for goal in ("harbor", "violin lantern", "orchard"):
        engine.read(f"other-{goal}", ReadRequest(target="manual.md", intent=Intent(goal=goal)))
    assert engine.parse_count == 1
    assert engine.open("manual.md").locator_state["bm25.index"] is index


def test_sessions_and_episodes_are_bounded(manual: tuple[ReadEngine, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from sparseread_mcp.protocol import session as session_module
    from sparseread_mcp.stores.memory import MemorySessionStore

    store = MemorySessionStore(max_sessions=3)
    for key in ("a", "b", "c", "d"):
        store.get(key).intent = Intent(goal=key)
    assert store.get("a").intent is None  # evicted, so a fresh session
    engine, _ = manual
    monkeypatch.setattr(session_module, "MAX_EPISODES", 2)
    first = engine.read("s", ReadRequest(target="manual.md", view="full", budget_tokens=2000))
    for goal in ("turbine", "harbor", "violin"):
        engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal=goal)))
    assert len(engine.sessions.get("s").episodes) == 2
    with pytest.raises(IntentError, match="not a live cursor"):
        engine.read("s", ReadRequest(target="manual.md", cursor=first.cursor))


def test_count_of_a_pattern_needle_counts_its_matches_not_its_text(manual: tuple[ReadEngine, str]) -> None:
    # A `/pattern/` needle is a regular expression everywhere else; counting it as literal text said 0.
    engine, text = manual
    intent = Intent(goal="how many sections", want="count", needles=["/section \\d+:/"])
    pack = engine.read("s", ReadRequest(target="manual.md", intent=intent))
    expected = len(re.findall(r"section \d+:", text, flags=re.IGNORECASE))
    assert expected > 1 and pack.result is not None and pack.result.value == expected
    assert any("/section" in p for p in pack.result.provenance)
