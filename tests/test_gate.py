"""The Budgeted Read Gate: native fit, E <= L checked before delivery, one honest full-view fallback."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, source_at
from docs import long_markdown

from sparseread_mcp import BudgetTooSmall, Intent, ReadEngine, ReadRequest, Settings


def test_small_artifact_goes_straight_to_the_full_view(tmp_path: Path) -> None:
    (tmp_path / "contract.md").write_text((FIXTURES / "contract.md").read_text())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pack = engine.read("s", ReadRequest(target="contract.md", intent=Intent(goal="renewal notice period")))
    assert pack.gate.decision == "native_fit"
    assert [i.text for i in pack.items] == [(tmp_path / "contract.md").read_text()]
    assert pack.exposure.episode_chars == 0
    assert pack.exposure.full_view_delivered_chars == pack.exposure.full_view_chars


def test_need_full_gets_the_full_view_paged_with_a_cursor(tmp_path: Path) -> None:
    text = long_markdown(sections=80)
    (tmp_path / "manual.md").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pack = engine.read("s", ReadRequest(target="manual.md", intent=Intent(need_full=True), budget_tokens=3000))
    pages = [pack]
    while pages[-1].cursor:
        pages.append(engine.read("s", ReadRequest(target="manual.md", cursor=pages[-1].cursor, budget_tokens=3000)))
    assert len(pages) > 3
    assert all(p.tokens <= 3000 for p in pages)
    assert "\n".join(p.items[0].text for p in pages) == text
    for p in pages:
        assert source_at(text, p.items[0].anchor) == p.items[0].text
    assert pages[-1].exposure.full_view_delivered_chars <= len(text)


def test_a_batch_that_would_pass_L_is_withheld_and_the_full_view_sent_once(tmp_path: Path) -> None:
    # Every paragraph matches, so refine keeps finding new passages until the ledger says stop.
    text = "\n\n".join(f"Ledger entry {i}: the ledger balance moved by {i * 7} units on day {i}." for i in range(60))
    (tmp_path / "short.md").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    goal = Intent(goal="ledger balance entry")
    packs = [engine.read("s", ReadRequest(target="short.md", intent=goal))]
    while packs[-1].gate.decision == "sparse" and len(packs) < 60:
        packs.append(engine.read("s", ReadRequest(target="short.md", action="refine")))
    fallback = packs[-1]
    assert fallback.gate.decision == "fallback"
    sparse_pointers = [i.pointer for p in packs[:-1] for i in p.items]
    assert fallback.retire == sparse_pointers
    assert fallback.items[0].text == text[: len(fallback.items[0].text)]
    again = engine.read("s", ReadRequest(target="short.md", action="refine"))
    assert again.items == [] and again.gate.decision == "full_view"
    total = sum(p.exposure.payload_chars for p in [*packs, again])
    assert total <= 2 * len(text)
    assert all(p.exposure.episode_chars <= p.exposure.full_view_chars for p in packs)


def test_every_response_stays_within_its_budget(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    for budget in (700, 1200, 2000, 8000):
        pack = engine.read(
            f"s{budget}", ReadRequest(target="manual.md", intent=Intent(goal="turbine harbor"), budget_tokens=budget)
        )
        assert pack.tokens <= budget
        assert pack.truncated is False


def test_budget_out_of_range_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    with pytest.raises(BudgetTooSmall, match=r"200\.\.22500"):
        engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="x"), budget_tokens=100))
    with pytest.raises(BudgetTooSmall, match=r"200\.\.22500"):
        engine.read("s", ReadRequest(target="manual.md", intent=Intent(goal="x"), budget_tokens=50_000))


def test_a_range_larger_than_the_budget_suggests_sub_ranges(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    pack = engine.read("s", ReadRequest(target="manual.md#L1-L200", budget_tokens=600))
    assert pack.items == []
    assert pack.message and "larger than budget_tokens" in pack.message
    assert pack.next and all(n.startswith("sub-range: #L") for n in pack.next)


def test_the_card_lists_what_the_full_view_made_retirable(tmp_path: Path) -> None:
    text = "\n\n".join(f"Ledger entry {i}: the ledger balance moved by {i * 7} units on day {i}." for i in range(60))
    (tmp_path / "short.md").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    first = engine.read("s", ReadRequest(target="short.md", intent=Intent(goal="ledger balance entry")))
    pack = first
    while pack.gate.decision == "sparse":
        pack = engine.read("s", ReadRequest(target="short.md", action="refine"))
    card = engine.card("s")
    retired = [r.split(" ")[0] for r in card.retirable if "superseded by the full view" in r]
    assert retired == pack.retire and first.items[0].pointer in retired
