"""A full view is ranked, never blind: on a single-line document its first page begins at the passage
BM25 ranks first (needles steer it), its next pages where the unread matches cluster, and a focus, a
collect and a refine in one episode never send a character twice, within 2L."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import anyio
import pytest
from conftest import item_spans
from flow import read
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.errors import IntentError
from sparseread_mcp.models import Slot
from sparseread_mcp.protocol.intents import query_for
from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.policy import Policy
from sparseread_mcp.select.selector import Selector, group_of
from sparseread_mcp.serve.server import create_server

WORDS = [
    *("river", "harvest", "council", "market", "winter", "bridge", "ledger", "festival", "copper", "quarry"),
    *("railway", "orchard", "garrison", "charter", "province", "merchant", "tariff", "harbour", "granary"),
]


def single_line_document(chars: int = 80_000) -> str:
    """About `chars` characters on one line: numbered filler sentences, two distinctive passages."""
    rng = random.Random(13)
    sentences: list[str] = []
    while sum(len(s) + 1 for s in sentences) < chars:
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        sentences.append(f"Entry {len(sentences)} notes the {words}.")
    n = len(sentences)
    sentences[int(n * 0.62)] = "The World Bank provided aid to Turkey of 1.8 billion dollars after the earthquake."
    sentences[int(n * 0.21)] = "A zeppelin hangar near the coast was rebuilt for the relief flights."
    return " ".join(sentences)


def full_view_engine(tmp_path: Path, text: str, *, table: bool) -> ReadEngine:
    (tmp_path / "article.txt").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    if table:  # evidence that sparse reading fails here: the selector's last resort is the full view
        selector = Selector()
        group = group_of("text", len(text), "selective fact")
        for i in range(40):
            selector.record(group, "bm25 x snippets", success=i < 2, exposed_chars=1400)
            selector.record(group, FULL_VIEW, success=True, exposed_chars=len(text))
        engine.selection = Policy(engine.settings, engine.locators, selector)
    return engine


def best_passage(engine: ReadEngine, intent: Intent) -> str:
    parsed = engine.open("article.txt")
    first = engine.locator.rank(parsed, query_for(intent))[0][0]
    passage = parsed.passages[first]
    return parsed.artifact.text[passage.start : passage.end]


def test_page_one_of_a_single_line_full_view_holds_the_best_passage(tmp_path: Path) -> None:
    text = single_line_document()
    assert "\n" not in text and 75_000 <= len(text) <= 85_000
    engine = full_view_engine(tmp_path, text, table=False)
    goal = Intent(goal="How much aid did the World Bank provide to Turkey?")
    page = engine.read("s", ReadRequest(target="article.txt", view="full", intent=goal, budget_tokens=3000))
    assert page.cursor and len(page.items) == 1 and page.items[0].text != text[: len(page.items[0].text)]
    assert best_passage(engine, goal) in page.items[0].text
    assert "World Bank" in page.items[0].text

    # A needle moves page 1 to the passage it ranks first.
    steered = Intent(goal="How much aid did the World Bank provide to Turkey?", needles=["zeppelin hangar"])
    other = engine.read("t", ReadRequest(target="article.txt", view="full", intent=steered, budget_tokens=3000))
    assert best_passage(engine, steered) in other.items[0].text and "zeppelin hangar" in other.items[0].text
    assert "World Bank" not in other.items[0].text


def test_the_selectors_full_view_is_ranked_too(tmp_path: Path) -> None:
    text = single_line_document()
    engine = full_view_engine(tmp_path, text, table=True)
    goal = Intent(goal="How much aid did the World Bank provide to Turkey?")
    page = engine.read("s", ReadRequest(target="article.txt", intent=goal, budget_tokens=3000))
    assert page.gate.decision == "full_view" and page.cursor
    assert "World Bank" in page.items[0].text and "best match" in (page.selection.reason if page.selection else "")


def test_focus_collect_and_refine_in_one_episode_never_send_a_character_twice(tmp_path: Path) -> None:
    text = single_line_document()
    engine = full_view_engine(tmp_path, text, table=True)
    goal = "How much aid did the World Bank provide to Turkey?"
    focus = engine.read("s", ReadRequest(target="article.txt", intent=Intent(goal=goal), budget_tokens=3000))
    slots = [Slot(id="hangar", question="Where was the zeppelin hangar rebuilt?")]
    both = Intent(goal=goal, slots=slots)
    collect = engine.read("s", ReadRequest(target="article.txt", action="collect", intent=both, budget_tokens=3000))
    refine = engine.read("s", ReadRequest(target="article.txt", action="refine", budget_tokens=3000))
    packs = [focus, collect, refine]
    assert len({p.episode.id for p in packs}) == 1
    assert all(p.items for p in packs), "each call sends something new, not 'continue with the cursor'"
    assert "zeppelin hangar" in collect.items[0].text  # the collect's page begins at its own best match
    spans = sorted(item_spans(text, packs))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    # The rest comes with the cursor, still never twice; the whole episode stays within 2L.
    pages = list(packs)
    cursor = refine.cursor
    while cursor:
        pages.append(engine.read("s", ReadRequest(target="article.txt", cursor=cursor, budget_tokens=3000)))
        cursor = pages[-1].cursor
    spans = sorted(item_spans(text, pages))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert "".join(text[s:e] for s, e in spans).replace(" ", "") == text.replace(" ", "")
    last = pages[-1].exposure
    assert last.episode_chars + last.full_view_delivered_chars <= 2 * last.full_view_chars


def test_ranked_pages_of_a_multi_line_file_stay_whole_lines_and_cover_it_once(tmp_path: Path) -> None:
    lines = [
        f"Row {i}: the {WORDS[i % len(WORDS)]} and the {WORDS[(i * 7) % len(WORDS)]} of year {i}." for i in range(2500)
    ]
    lines[1700] = "Row 1700: the zeppelin hangar was rebuilt by the harbour guild."
    lines[600] = "Row 600: the World Bank gave aid to the province after the flood."
    text = "\n".join(lines) + "\n"
    engine = full_view_engine(tmp_path, text, table=True)
    goal = "Which aid did the World Bank give?"
    focus = engine.read("s", ReadRequest(target="article.txt", intent=Intent(goal=goal), budget_tokens=2000))
    # Page 1 begins at the best passage, at a line start, well past the file's start.
    assert "World Bank" in focus.items[0].text and focus.items[0].text.startswith("Row 5")
    slots = [Slot(id="hangar", question="Who rebuilt the zeppelin hangar?")]
    collect = engine.read(
        "s",
        ReadRequest(target="article.txt", action="collect", intent=Intent(goal=goal, slots=slots), budget_tokens=2000),
    )
    assert "zeppelin hangar" in collect.items[0].text and collect.items[0].text.startswith("Row 1")
    pages = [focus, collect]
    while pages[-1].cursor:
        pages.append(engine.read("s", ReadRequest(target="article.txt", cursor=pages[-1].cursor, budget_tokens=2000)))
    assert len(pages) < 60
    for page in pages:
        for item in page.items:  # whole lines: every page's pointer names exactly its text
            shown = item.text.rstrip("\n").split("\n")  # the last page keeps the file's final newline
            assert shown[0] in lines and shown[-1] in lines
    spans = sorted(item_spans(text, pages))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert "".join(text[s:e] for s, e in spans).replace("\n", "") == text.replace("\n", "")


def test_an_earlier_cursor_stays_live_and_never_resends(tmp_path: Path) -> None:
    text = single_line_document()
    engine = full_view_engine(tmp_path, text, table=True)
    goal = "How much aid did the World Bank provide to Turkey?"
    focus = engine.read("s", ReadRequest(target="article.txt", intent=Intent(goal=goal), budget_tokens=3000))
    refine = engine.read(
        "s", ReadRequest(target="article.txt", action="refine", intent=Intent(goal=goal, needles=["zeppelin"]))
    )
    assert focus.cursor and refine.items and "zeppelin" in refine.items[0].text
    later = engine.read("s", ReadRequest(target="article.txt", cursor=focus.cursor, budget_tokens=3000))
    spans = sorted(item_spans(text, [focus, refine, later]))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    with pytest.raises(IntentError):
        engine.read("s", ReadRequest(target="article.txt", cursor=f"{focus.episode.id}:{'9' * 5000}"))


def _rows_with_partial_matches(partial: range) -> str:
    """3,000 numbered rows: row 2100 holds every word of the goal (the best single match); each row of
    `partial` holds two of its rarer words."""
    lines = [
        f"Row {i}: the {WORDS[i % len(WORDS)]} and the {WORDS[(i * 7) % len(WORDS)]} of year {i}." for i in range(3000)
    ]
    lines[2100] = "Row 2100: the lighthouse keeper logged the storm surge and the ferry delay."
    for row in partial:
        lines[row] = f"Row {row}: the storm surge flooded the quay at berth {row}."
    return "\n".join(lines) + "\n"


@pytest.mark.anyio
async def test_the_next_page_goes_where_the_unread_matches_cluster(tmp_path: Path) -> None:
    """Page 1 of a full view begins at the best match; the cursor's next page is where the matches not read
    yet are densest (the cluster), not the rows after page 1. The pages are still one full view: every
    character once. Through the official MCP client."""
    cluster = range(600, 640, 8)  # five rows a fifth of the way down, within one page
    text = _rows_with_partial_matches(cluster)
    (tmp_path / "article.txt").write_text(text)
    goal = {"goal": "lighthouse keeper storm surge ferry delay"}
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            pages = [await read(client, target="article.txt", view="full", intent=goal, budget_tokens=2000)]
            while pages[-1].get("cursor") and len(pages) < 100:
                pages.append(await read(client, target="article.txt", cursor=pages[-1]["cursor"], budget_tokens=2000))
    first, second = (page["items"][0]["text"] for page in pages[:2])
    assert "lighthouse keeper" in first
    assert all(f"berth {row}." in second for row in cluster)
    spans = sorted((text.index(t), text.index(t) + len(t)) for t in (p["items"][0]["text"] for p in pages))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert "".join(text[s:e] for s, e in spans).replace("\n", "") == text.replace("\n", "")


def test_page_one_begins_early_enough_to_hold_the_matches_just_before_the_best(tmp_path: Path) -> None:
    """Page 1 still holds the best match, and begins before it where that page then holds more of the
    ranked passages: five rows that each match part of the goal, just above the row that matches all of it."""
    above = range(2060, 2095, 8)
    text = _rows_with_partial_matches(above)
    engine = full_view_engine(tmp_path, text, table=False)
    goal = Intent(goal="lighthouse keeper storm surge ferry delay")
    first = engine.read("s", ReadRequest(target="article.txt", view="full", intent=goal, budget_tokens=3000))
    assert "lighthouse keeper" in first.items[0].text
    assert all(f"berth {row}." in first.items[0].text for row in above)
