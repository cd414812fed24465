"""Paged documents (a PDF, text with form feeds): where the best hit lies on a page of figures (a statement
printed in a filing) a robust choice reads in windows grown from the best hit, and a passage tied with the
best is in the windows before any grows. A page of running prose keeps the choice; sheets, rows and
records are not pages of prose at all: their anchors stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.locate import LocatorSet, build_query
from sparseread_mcp.locate.exposure import plan_exposure
from sparseread_mcp.protocol.intents import query_for
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.registry import default_registry
from sparseread_mcp.select.calibrate import Answered, calibrate_from
from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.figures import FIGURES_SHARE, best_on_figures, figures_share

LONG = "text|>32k|selective fact"


def parse(root: Path, name: str) -> ParsedArtifact:
    location = Roots((root,)).resolve(name)
    reader = default_registry().reader_for(location.absolute)
    parsed: ParsedArtifact = reader.parse(load_artifact(location, binary=reader.binary), passage_chars=500)
    return parsed


def alike_pages(count: int = 12) -> str:
    """Pages whose lines differ only by their numbers: "page 9 line 4" ties page 9 with page 4."""
    return "\n\f".join(
        "\n".join(f"Page {n} line {k} of the annual report." for k in range(1, 31)) for n in range(1, count + 1)
    )


def filing(statement_page: int = 17) -> list[str]:
    """A filing of 30 pages of narrative; one page is a statement: a title, then rows of figures that share
    no word with the title."""
    pages = [
        f"Item {n}. " + " ".join(f"Narrative {n}.{k} on operations, risk and outlook." for k in range(60))
        for n in range(30)
    ]
    rows = "\n".join(f"{item} {1000 + 37 * k:,} {900 + 29 * k:,}" for k, item in enumerate(ROW_NAMES))
    pages[statement_page] = f"Consolidated statement of cash flows\n(in millions) 2023 2022\n{rows}"
    return pages


def clauses() -> list[str]:
    """A contract in 30 pages of running prose; one clause names the cash flows."""
    pages = [
        f"Article {n}. "
        + " ".join(f"Clause {n}.{k}: the parties agree on terms, notice and remedies." for k in range(50))
        for n in range(30)
    ]
    pages[17] = pages[17].replace("Clause 17.20:", "Clause 17.20: the statement of cash flows is delivered yearly;")
    return pages


ROW_NAMES = ["Depreciation and amortization", "Accounts receivable", "Inventories", "Accrued liabilities"] * 6


def test_prose_pages_are_pages_of_text_never_sheets_rows_or_records(tmp_path: Path) -> None:
    (tmp_path / "paged.txt").write_text(alike_pages(3))
    (tmp_path / "flat.txt").write_text(alike_pages(3).replace("\f", ""))
    (tmp_path / "paged.csv").write_text("item,price\n" + "".join(f"item{i},{i}\n" for i in range(50)) + "\f\n")
    assert parse(tmp_path, "paged.txt").prose_pages
    assert not parse(tmp_path, "flat.txt").prose_pages
    assert not parse(tmp_path, "paged.csv").prose_pages
    pymupdf = pytest.importorskip("pymupdf")
    document = pymupdf.open()
    for n in range(3):
        document.new_page().insert_text((72, 72), f"Page {n + 1} of the annual report.")
    document.save(tmp_path / "report.pdf")
    assert parse(tmp_path, "report.pdf").prose_pages
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["region", "amount"])
    book.create_sheet("Staff").append(["name", "team"])
    book.save(tmp_path / "book.xlsx")
    sheets = parse(tmp_path, "book.xlsx")
    assert sheets.lines.page_count == 2 and not sheets.prose_pages  # sheets count as pages, not as prose


def test_a_passage_tied_with_the_best_is_in_the_windows_before_any_grows(tmp_path: Path) -> None:
    (tmp_path / "report.txt").write_text(alike_pages())
    parsed = parse(tmp_path, "report.txt")
    ranking = LocatorSet().get("bm25").rank(parsed, build_query(["page 9 line 4"], []))
    tied = [i for i, score in ranking if score == ranking[0][1]]
    assert len(tied) == 2  # page 4's first passage has "4" as often as page 9's has "9": a tie
    spans = plan_exposure(parsed, ranking, "windows", 1_500)
    text = parsed.artifact.text
    assert {s.passage for s in spans} >= set(tied)
    assert any("Page 9 line 4 " in text[s.start : s.end] for s in spans)
    assert sum(s.end - s.start for s in spans) <= 1_500
    # The first of the tie already delivered, the second fills the budget: it is still shown.
    first, second = parsed.passages[tied[0]], parsed.passages[tied[1]]
    size = second.end - second.start
    only = plan_exposure(parsed, ranking, "windows", size, skip=lambda a, b: a < first.end and first.start < b)
    assert [(s.start, s.end) for s in only] == [(second.start, second.end)]


def test_a_page_of_figures_is_a_statement_not_prose(tmp_path: Path) -> None:
    statement, narrative = filing()[17], filing()[3]
    assert figures_share(statement) >= FIGURES_SHARE > figures_share(narrative)
    assert figures_share(clauses()[17]) < FIGURES_SHARE  # clause numbers are few among the words
    (tmp_path / "filing.txt").write_text("\n\f".join(filing()))
    (tmp_path / "flat.txt").write_text("\n".join(filing()))
    bm25, query = LocatorSet().get("bm25"), build_query(["consolidated statement of cash flows"], [])
    paged, flat = parse(tmp_path, "filing.txt"), parse(tmp_path, "flat.txt")
    assert best_on_figures(paged, bm25.rank(paged, query))
    assert not best_on_figures(flat, bm25.rank(flat, query))  # no pages: no page of figures
    assert not best_on_figures(paged, [])


def test_a_robust_choice_on_a_page_of_figures_reads_in_windows_a_calibrated_one_stays() -> None:
    def answered(set_name: str, hits: dict[str, bool]) -> Answered:
        return Answered(set_name, LONG, 90_000, {name: (hit, 1400) for name, hit in hits.items()})

    thin = [answered(s, {"bm25 x snippets": i < 12, "bm25 x windows": i < 10}) for s in "ab" for i in range(20)]
    selector = calibrate_from(thin)
    group = "text|>32k|exact computation"  # no calibration requests: the robust default answers
    flat, paged = selector.choose(group, "text"), selector.choose(group, "text", on_figures=True)
    assert flat.robust and flat.configuration == "bm25 x snippets"
    assert paged.robust and paged.configuration == "bm25 x windows" and "page of figures" in paged.reason
    # A configuration calibration trusts for the group is not overridden by pages.
    rows = [answered(s, {"bm25 x snippets": True, "bm25 x windows": i < 10}) for s in "ab" for i in range(40)]
    trusted = calibrate_from(rows).choose(LONG, "text", on_figures=True)
    assert not trusted.robust and trusted.configuration == "bm25 x snippets"
    # The full view is never turned into windows.
    never = [answered(s, {"bm25 x snippets": False}) for s in "ab" for _ in range(40)]
    assert calibrate_from(never).choose(LONG, "text", on_figures=True).configuration == FULL_VIEW


def test_the_default_focus_on_a_page_of_figures_is_a_window_from_the_best_ranked_passage(tmp_path: Path) -> None:
    pages = filing()
    (tmp_path / "filing.txt").write_text("\n\f".join(pages))
    (tmp_path / "flat.txt").write_text("\n".join(pages))
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    intent = Intent(goal="consolidated statement of cash flows")
    pack = engine.read("s", ReadRequest(target="filing.txt", intent=intent))
    assert pack.selection is not None and pack.selection.configuration == "text x bm25 x windows"
    parsed = parse(tmp_path, "filing.txt")
    best = parsed.passages[LocatorSet().get("bm25").rank(parsed, query_for(intent))[0][0]]
    text = parsed.artifact.text
    assert "Consolidated statement of cash flows" in text[best.start : best.end]
    window = next(item for item in pack.items if item.text in text and best.start >= text.index(item.text))
    assert text[best.start : best.end] in window.text  # the window holds the best-ranked passage ...
    assert all(name in window.text for name in ROW_NAMES[:4])  # ... and the statement's rows after it
    assert window.page == 18  # one page: the statement's
    # The same text without pages, and a contract's pages of prose, are not read in windows.
    flat = engine.read("s", ReadRequest(target="flat.txt", intent=intent))
    assert flat.selection is not None and not flat.selection.configuration.endswith("x windows")
    (tmp_path / "contract.txt").write_text("\n\f".join(clauses()))
    prose = engine.read("s", ReadRequest(target="contract.txt", intent=intent))
    assert prose.selection is not None and prose.selection.configuration == pack.selection.configuration.replace(
        "x windows", "x snippets"
    )
    assert any("statement of cash flows is delivered yearly" in item.text for item in prose.items)
