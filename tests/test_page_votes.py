"""A refine on a paged document weighs pages by the votes of the goal's best passages, by the page's whole
text and by the page's own title matched against the goal (protocol/page_votes.py): a statement whose
figures share no word with the question, but whose title names it, is read before pages that only repeat the
question's common words. Tests of one kind of vote turn the others off where they would also reach the page."""

from __future__ import annotations

import random
from pathlib import Path

import anyio
import pytest
from flow import read
from mcp import Client

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.locate.terms import terms
from sparseread_mcp.protocol import actions, page_votes
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.serve.server import create_server

FILLER = ("river", "harvest", "council", "market", "winter", "bridge", "ledger", "festival", "copper", "quarry")
GOAL = "the cost of sales, as the consolidated statement of income gives it"


def _filing(tmp_path: Path) -> ParsedArtifact:
    """Twelve pages under the same running header; page 9 is the statement, titled, with figures only."""
    pages = []
    for n in range(1, 13):
        if n == 9:
            body = ["Consolidated Statements of Income"] + [f"Row {k} {k * 41:,} {k * 37:,}" for k in range(30)]
        else:
            line = "Cost of sales in unit {}.{} rose with the harvest, the market and the weather, as every year."
            body = [f"Discussion {n}"] + [line.format(n, k) for k in range(12)]
        pages.append("\n".join(["ACME Corp annual report", *body]))
    (tmp_path / "filing.txt").write_text("\n\f".join(pages) + "\n")
    return ReadEngine(Settings(roots=(tmp_path,))).open("filing.txt")


def _prose_ranking(parsed: ParsedArtifact) -> list[tuple[int, float]]:
    """A ranking whose passages are all on prose pages (the statement's figures match no goal word)."""
    statement = parsed.lines.page_span(9)
    prose = [p.index for p in parsed.passages if not statement[0] <= p.start < statement[1]]
    return [(index, 1.0 - k / 100) for k, index in enumerate(prose[:30])]


def test_a_page_whose_title_names_the_goal_is_voted_with_the_best(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A title that holds every word of the goal votes as much as the best page's passages do; one that
    holds some of them, that share of it: either way a statement no passage reached is among the pages read."""
    monkeypatch.setattr(page_votes, "PAGE_TEXT_VOTES", 0.0)
    parsed = _filing(tmp_path)
    ranking = _prose_ranking(parsed)
    every = page_votes.page_votes(parsed, ranking, tuple(terms("the consolidated statement of income")))
    some = page_votes.page_votes(parsed, ranking, tuple(terms(GOAL)))
    best = max(vote for page, vote in every.items() if page != 9)
    assert every[9] == pytest.approx(best), every
    assert 0 < some[9] < best and 9 in actions.page_order(parsed, some), some


def test_without_title_or_page_votes_the_statement_gets_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_votes, "TITLE_VOTES", 0.0)
    monkeypatch.setattr(page_votes, "PAGE_TEXT_VOTES", 0.0)
    parsed = _filing(tmp_path)
    votes = page_votes.page_votes(parsed, _prose_ranking(parsed), tuple(terms(GOAL)))
    assert 9 not in votes, votes


def test_a_running_header_on_every_page_votes_for_none(tmp_path: Path) -> None:
    """The header's words are in every title and on every page: no page gains, so the order stays the
    passages'."""
    parsed = _filing(tmp_path)
    ranking = _prose_ranking(parsed)
    plain = page_votes.page_votes(parsed, ranking, ())
    header = page_votes.page_votes(parsed, ranking, tuple(terms("ACME annual report")))
    assert actions.page_order(parsed, header) == actions.page_order(parsed, plain)


def _report(tmp_path: Path) -> Path:
    """Twelve pages under three running lines; page 9 names its statement on its fourth line, above figures
    that share no word with the goal; page 2 discusses the statement's cost of sales line by line, pages 3-7
    once each."""
    rng = random.Random(5)
    pages = []
    for n in range(1, 13):
        if n == 9:
            body = ["Consolidated Statements of Income"] + [f"Row {k} {k * 41:,} {k * 37:,}" for k in range(30)]
        else:
            body = [f"Discussion {n}"]
            for k in range(12):
                words = " ".join(rng.choice(FILLER) for _ in range(12))
                said = f"Cost of sales in the consolidated statement of income of unit {n}.{k} rose: {words}."
                body.append(said if n == 2 or (n < 8 and k == 5) else f"{words}.")
        pages.append("\n".join(["ACME Corp", "Annual Report 2024", "Table of Contents", *body]))
    (tmp_path / "report.txt").write_text("\n\f".join(pages) + "\n")
    return tmp_path


async def _refined(root: Path, refines: int) -> list[str]:
    """The texts a focus and `refines` refines send, through the official MCP client."""
    goal = {"goal": "the cost of sales in the consolidated statement of income"}
    texts = []
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,), location="bm25"))) as client:
            texts += [i["text"] for i in (await read(client, target="report.txt", intent=goal))["items"]]
            for _ in range(refines):
                texts += [i["text"] for i in (await read(client, target="report.txt", action="refine"))["items"]]
    return texts


@pytest.mark.anyio
async def test_a_statement_named_below_the_running_lines_is_among_the_pages_refined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page head votes past the running lines (their words are in every head and weigh nothing): the
    statement is read by the second refine, after the page of prose that names the goal on every line and before
    those that name it once. With the indexed title's depth (three lines) its head is the running lines alone,
    and it is not. (The page read whole would also reach the statement, by its title line: off here.)"""
    monkeypatch.setattr(page_votes, "PAGE_TEXT_VOTES", 0.0)
    root = _report(tmp_path)
    assert any("Row 7 287" in text for text in await _refined(root, refines=2))
    monkeypatch.setattr(page_votes, "TITLE_LINES", 3)
    assert not any("Row 7 287" in text for text in await _refined(root, refines=2))


def _spread(tmp_path: Path) -> ParsedArtifact:
    """Eight pages of filler; page 3 names each of the goal's words once, on lines of its own, page 6 only
    one of them, and every page carries the same running header."""
    rng = random.Random(7)
    named = {3: ["segment", "operating margin", "change in 2022"], 6: ["segment"]}
    pages = []
    for n in range(1, 9):
        lines = [" ".join(rng.choice(FILLER) for _ in range(12)) + "." for _ in range(15)]
        for k, words in enumerate(named.get(n, [])):
            lines[4 * k + 2] = f"{' '.join(rng.choice(FILLER) for _ in range(8))} {words}."
        pages.append("\n".join(["ACME Corp annual report", *lines]))
    (tmp_path / "spread.txt").write_text("\n\f".join(pages) + "\n")
    return ReadEngine(Settings(roots=(tmp_path,))).open("spread.txt")


def test_a_page_that_holds_the_goal_across_its_lines_is_voted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """None of page 3's passages is among the best (the ranking here holds filler pages only), but read
    whole it holds every word of the goal: it votes the page-text share of the best passage vote, more than
    page 6, which holds one of them. The running header's words, on every page, vote for none."""
    parsed = _spread(tmp_path)
    filler = (p for p in parsed.passages if parsed.lines.page_of(p.start) not in (3, 6))
    ranking = [(p.index, 1.0 - k / 100) for k, p in enumerate(filler)]
    goal = tuple(terms("What drove the segment operating margin change in 2022?"))
    votes = page_votes.page_votes(parsed, ranking[:30], goal)
    top = max(vote for page, vote in votes.items() if page not in (3, 6))
    assert votes[3] == pytest.approx(page_votes.PAGE_TEXT_VOTES * top), votes
    assert 0 < votes[6] < votes[3]
    header = page_votes.page_votes(parsed, ranking[:30], tuple(terms("ACME annual report")))
    assert 3 not in header and 6 not in header
    monkeypatch.setattr(page_votes, "PAGE_TEXT_VOTES", 0.0)
    assert 3 not in page_votes.page_votes(parsed, ranking[:30], goal)


def test_a_page_head_ends_at_running_text_or_figures() -> None:
    assert page_votes.page_head("Table of Contents\n \nPART II\nINCOME STATEMENTS\n$ 61,502 75,956\nRevenue") == (
        "Table of Contents PART II INCOME STATEMENTS"
    )
    assert page_votes.page_head("Results\n" + "word " * 30 + "\nNext") == "Results"


def _long_discussion(tmp_path: Path) -> Path:
    """Ten pages: page 3 a long page of prose (about 7,000 characters) that repeats the goal's words on
    every line, page 7 a short statement titled with them, whose figures below its first passage answer;
    the rest filler."""
    rng = random.Random(11)
    pages = []
    for n in range(1, 11):
        if n == 3:
            said = "Cost of sales in the consolidated statement of income of unit {} rose: {}."
            body = [said.format(k, " ".join(rng.choice(FILLER) for _ in range(10))) for k in range(50)]
        elif n == 7:
            body = ["Consolidated Statements of Income"] + [f"Row {k} {k * 41:,} {k * 37:,}" for k in range(60)]
        else:
            body = [" ".join(rng.choice(FILLER) for _ in range(12)) + "." for _ in range(20)]
        pages.append("\n".join([f"Discussion {n}", *body]))
    (tmp_path / "report.txt").write_text("\n\f".join(pages) + "\n")
    return tmp_path


@pytest.mark.anyio
async def test_a_long_page_of_prose_gives_way_to_a_short_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best-voted page's rest is longer than PAGE_REST_CHARS: the first refine sends the next-voted page
    that fits, the statement, instead of thousands of characters that repeat what the focus sent. With the
    old cap (8,000) the long page's rest comes first and the statement is not in the first refine. (Votes
    per page length off: they alone would also put the statement first.)"""
    monkeypatch.setattr(page_votes, "LENGTH_NORM", 0.0)
    root = _long_discussion(tmp_path)
    focus, refined = await _refined(root, refines=0), await _refined(root, refines=1)
    assert not any("Row 40 1,640" in text for text in focus)
    assert any("Row 40 1,640" in text for text in refined)
    monkeypatch.setattr(actions, "PAGE_REST_CHARS", 8_000)
    assert not any("Row 40 1,640" in text for text in await _refined(root, refines=1))


def test_votes_are_weighed_per_page_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pages with the same votes: the shorter one offers them for less reading and comes first; a one-line
    divider page is not taken for the densest page of all (it counts as SHORTEST_SHARE of the mean)."""
    long_page = "\n".join(f"Discussion line {k} of the year, the market and the weather." for k in range(60))
    short_page = "\n".join(f"Row {k} {k * 41:,}" for k in range(20))
    pages = [long_page, short_page, "Part II", long_page, short_page]
    (tmp_path / "doc.txt").write_text("\n\f".join(pages) + "\n")
    parsed = ReadEngine(Settings(roots=(tmp_path,))).open("doc.txt")
    weighed = page_votes.per_length(parsed, {1: 1.0, 2: 1.0, 3: 1.0})
    assert weighed[2] > weighed[1]
    assert weighed[3] == pytest.approx(1.0 / page_votes.SHORTEST_SHARE**page_votes.LENGTH_NORM)
    monkeypatch.setattr(page_votes, "LENGTH_NORM", 0.0)
    assert page_votes.per_length(parsed, {1: 1.0, 2: 1.0}) == {1: 1.0, 2: 1.0}


@pytest.mark.anyio
async def test_per_length_a_short_statement_comes_before_a_long_page_that_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cap the long page fits under (8,000), votes per page length still send the statement first:
    the long page's votes are its length more than its evidence. Off, the long page comes first."""
    monkeypatch.setattr(actions, "PAGE_REST_CHARS", 8_000)
    root = _long_discussion(tmp_path)
    assert any("Row 40 1,640" in text for text in await _refined(root, refines=1))
    monkeypatch.setattr(page_votes, "LENGTH_NORM", 0.0)
    assert not any("Row 40 1,640" in text for text in await _refined(root, refines=1))
