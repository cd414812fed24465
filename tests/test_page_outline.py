"""A paged text's outline is its table of contents: the pages that begin with a title, not every page."""

from __future__ import annotations

from pathlib import Path

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.readers.page_outline import is_title

RUNNING = "Table of Contents\nACME, INC."


def filing() -> str:
    """A filing as text from a PDF: a running header on every page, most pages beginning mid-sentence."""
    body = "the company continued to report results across its segments, and the figures below follow from it,"
    pages = [
        f"{RUNNING}\nCONSOLIDATED BALANCE SHEETS\nTotal assets 23,717 22,536\n{body}",
        f"{RUNNING}\n{body}\nanother line of running text that ends the page.",
        f"{RUNNING}\nCONSOLIDATED BALANCE SHEETS\nTotal liabilities 9,100 8,200 (continued)",
        f"{RUNNING}\nResults of operations\nRevenues rose 7 percent to 39,117, led by footwear.\n{body}",
        f"{RUNNING}\n• a bullet that began on the page before\n{body}",
        f"{RUNNING}\nCONSOLIDATED STATEMENTS OF CASH FLOWS\nCash provided by operations 5,903 4,955",
    ]
    return "\n\f".join(pages)


def test_the_outline_is_the_pages_that_begin_with_a_title(tmp_path: Path) -> None:
    (tmp_path / "filing.txt").write_text(filing())
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    outline = engine.preview("s", "filing.txt").outline
    # The running header is on every page: no entry is named after it. A page beginning mid-sentence or
    # with a bullet belongs to the entry before it; the same title on the next page continues its entry.
    assert [(o.title, o.anchor) for o in outline] == [
        ("CONSOLIDATED BALANCE SHEETS", "p1"),
        ("Results of operations", "p4"),
        ("CONSOLIDATED STATEMENTS OF CASH FLOWS", "p6"),
    ]
    assert outline[0].lines[0] == 1 and outline[1].lines[0] == outline[0].lines[1] + 1  # pages 1-3, then 4-5
    # An entry's title reads its section: the pages up to the next title.
    section = engine.read("s", ReadRequest(target="filing.txt#CONSOLIDATED BALANCE SHEETS", budget_tokens=4000))
    text = "".join(i.text for i in section.items)
    assert "Total assets 23,717" in text and "Total liabilities 9,100" in text and "Revenues rose" not in text


def test_a_title_is_short_and_not_broken_off() -> None:
    for title in ("CONSOLIDATED BALANCE SHEETS", "Results of Operations", "Item 7.", "Cash flows from operations"):
        assert is_title(title), title
    for line in (
        "by additional countries of a global minimum tax, could negatively impact the Company's tax rate",
        "• Foreign exchange",
        "The Company expects revenue to grow in every segment.",
        "Sales of the Company's Pharmaceutical and MedTech products are subject to pricing pressure,",
        "2022 2021",
        "(c)",
    ):
        assert not is_title(line), line
