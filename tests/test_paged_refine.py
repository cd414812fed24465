"""Refine after a collect: it reads with the session's goal, and on a paged document it sends the rest of
the page where the best passages concentrate (evidence there is often the whole page: a statement, a
table), one page per refine, never a character twice."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from conftest import item_spans

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.models import EvidencePack, Slot
from sparseread_mcp.protocol import actions
from sparseread_mcp.select.figures import page_of_figures

FILLER = [
    *("river", "harvest", "council", "market", "winter", "bridge", "ledger", "festival", "copper", "quarry"),
    *("railway", "orchard", "garrison", "charter", "province", "merchant", "tariff", "harbour", "granary"),
]
GOAL = "What were the purchases of property, plant and equipment in the cash flow statement?"


def filler_lines(rng: random.Random, count: int, tag: str) -> list[str]:
    return [f"{tag} line {k}: the " + " ".join(rng.choice(FILLER) for _ in range(9)) + "." for k in range(count)]


def statement_page(rng: random.Random) -> list[str]:
    """A page whose lines mention the goal's words only here and there, between unrelated rows."""
    lines = ["Consolidated Statement of Cash Flows (millions)"]
    for k in range(70):
        lines.append(f"Row {k} of the statement: " + " ".join(rng.choice(FILLER) for _ in range(6)) + f" {k * 37}")
        if k in (5, 33, 62):
            lines.append(f"Purchases of property, plant and equipment in quarter {k} {1_500 + k}")
    lines.append("Net cash used in investing activities 2,041")
    return lines


def paged_document(pages: int = 16, statement: int = 11, mention: int = 4) -> tuple[str, int]:
    """Pages separated by form feeds: one of them the statement, another (`mention`) naming the goal's
    words once in its prose; the statement's page number (1-based)."""
    rng = random.Random(13)
    texts = []
    for n in range(1, pages + 1):
        lines = statement_page(rng) if n == statement else filler_lines(rng, 30, f"p{n}")
        if n == mention:
            lines[14] = "Capital spending: purchases of property, plant and equipment rose in the year."
        texts.append("\n".join(lines))
    return "\n\f".join(texts) + "\n", statement


def scattered_document() -> str:
    """No pages: the goal's words in eight places far apart, filler between."""
    rng = random.Random(7)
    lines = filler_lines(rng, 480, "l")
    for k in range(8):
        lines[30 + 60 * k] = f"Purchases of property, plant and equipment at site {k}: {1_200 + 13 * k} (cash flow)."
    return "\n".join(lines) + "\n"


def engine_for(tmp_path: Path, text: str) -> ReadEngine:
    (tmp_path / "filing.txt").write_text(text)
    return ReadEngine(Settings(roots=(tmp_path,)))


def collect_then_refine(engine: ReadEngine, refines: int) -> list[EvidencePack]:
    intent = Intent(goal=GOAL, slots=[Slot(id="answer", question=GOAL, aliases=[])])
    packs = [engine.read("s", ReadRequest(target="filing.txt", action="collect", intent=intent))]
    packs += [engine.read("s", ReadRequest(target="filing.txt", action="refine")) for _ in range(refines)]
    return packs


def test_a_refine_after_a_collect_sends_the_rest_of_the_best_page(tmp_path: Path) -> None:
    text, statement = paged_document()
    engine = engine_for(tmp_path, text)
    packs = collect_then_refine(engine, refines=1)
    assert all(p.gate.decision == "sparse" for p in packs)
    start, end = engine.open("filing.txt").lines.page_span(statement)
    shown = item_spans(text, packs)
    covered = {i for s, e in shown for i in range(s, e)}
    missing = [i for i in range(start, end) if not text[i].isspace() and i not in covered]
    assert not missing, f"{len(missing)} characters of the statement page not sent"
    before = {i for s, e in item_spans(text, packs[:1]) for i in range(s, e)}
    assert any(i not in before for i in range(start, end) if not text[i].isspace()), "the collect sent it all"


def test_later_refines_move_to_other_pages_and_never_resend(tmp_path: Path) -> None:
    text, _ = paged_document()
    engine = engine_for(tmp_path, text)
    packs = collect_then_refine(engine, refines=3)
    shown = sorted(item_spans(text, packs))
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(shown)), "a character was sent twice"
    parsed = engine.open("filing.txt")
    pages = [{parsed.lines.page_of(s) for s, _ in item_spans(text, [p])} for p in packs[1:3]]
    assert pages[0] == {11} and 4 in pages[1], pages


def test_without_pages_a_refine_reads_with_the_session_goal_not_only_neighbours(tmp_path: Path) -> None:
    flat = scattered_document()
    engine = engine_for(tmp_path, flat)
    parsed = engine.open("filing.txt")
    assert not parsed.lines.page_count
    packs = collect_then_refine(engine, refines=1)

    def passages(spans: list[tuple[int, int]]) -> set[int]:
        return {p.index for s, e in spans for p in parsed.passages if p.start < e and s < p.end}

    collected = passages(item_spans(flat, packs[:1]))
    refined = passages(item_spans(flat, packs[1:]))
    neighbours = {i + k for i in collected for k in (-1, 1)}
    assert refined - neighbours, "a refine that states no goal offered only neighbours"


def test_a_page_too_large_to_send_gives_way_to_passages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text, _ = paged_document()
    engine = engine_for(tmp_path, text)
    monkeypatch.setattr(actions, "PAGE_REST_CHARS", 200)
    packs = collect_then_refine(engine, refines=1)
    refined = item_spans(text, packs[1:])
    assert refined and all(e - s <= 2 * engine.settings.passage_chars for s, e in refined)


def figures_page(rng: random.Random, title: str) -> list[str]:
    """A page of figures that shares none of the goal's words: another statement of the same filing."""
    rows = [f"{rng.choice(FILLER).title()} {rng.choice(FILLER)} {1_000 + 13 * k:,} {900 + 11 * k:,}" for k in range(40)]
    return [title, *rows]


def test_after_the_best_page_of_figures_the_pages_of_figures_beside_it_come_before_the_next_voted(
    tmp_path: Path,
) -> None:
    # An answer that combines two statements: the second sits two pages before the best one, with a page of
    # prose between them; the next-voted page is prose elsewhere that names the goal's words once.
    text, statement = paged_document()
    pages = text.split("\n\f")
    rng = random.Random(5)
    pages[statement - 3] = "\n".join(figures_page(rng, "Consolidated Balance Sheets (millions)"))
    text = "\n\f".join(pages)
    engine = engine_for(tmp_path, text)
    packs = collect_then_refine(engine, refines=2)
    parsed = engine.open("filing.txt")
    refined = [{parsed.lines.page_of(s) for s, _ in item_spans(text, [p])} for p in packs[1:]]
    assert refined[0] == {statement}, refined
    assert refined[1] == {statement - 2}, f"sent {refined[1]}, not the page of figures beside the best page"
    shown = sorted(item_spans(text, packs))
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(shown)), "a character was sent twice"


def test_pages_of_prose_beside_the_best_page_are_not_taken_for_statements(tmp_path: Path) -> None:
    text, statement = paged_document()
    engine = engine_for(tmp_path, text)
    parsed = engine.open("filing.txt")
    assert page_of_figures(parsed, statement)
    assert not any(page_of_figures(parsed, statement + k) for k in (-2, -1, 1, 2))
    assert actions.page_order(parsed, {statement: 2.0, 4: 1.0}) == [statement, 4]
