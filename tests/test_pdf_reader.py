"""PDF: page anchors, the table of contents, page limits, and clear errors for unreadable files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings, UnsupportedArtifact

pymupdf = pytest.importorskip("pymupdf")


def make_pdf(path: Path, pages: list[str], *, toc: list[list[object]] | None = None, **save: object) -> None:
    document = pymupdf.open()
    for text in pages:
        page = document.new_page()
        y = 72
        for line in text.split("\n"):
            page.insert_text((72, y), line, fontsize=10)
            y += 14
    if toc:
        document.set_toc(toc)
    document.save(path, **save)
    document.close()


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@pytest.fixture
def report(tmp_path: Path) -> ReadEngine:
    pages = []
    for n in range(1, 31):
        body = "\n".join(f"Page {n} line {k}: the turbine report continues with item {n}-{k}." for k in range(1, 25))
        if n == 17:
            body += "\nThe warranty reserve was EUR 4.2 million (MARKER-P17)."
        pages.append(f"Chapter heading {n}\n{body}")
    make_pdf(tmp_path / "report.pdf", pages, toc=[[1, "Overview", 1], [1, "Warranty", 17], [2, "Reserve", 17]])
    return ReadEngine(Settings(roots=(tmp_path,)))


def test_preview_outline_is_the_toc_with_page_anchors(report: ReadEngine) -> None:
    preview = report.preview("s", "report.pdf")
    assert preview.artifact.type == "pdf"
    assert preview.signals["pages"] == 30
    assert [(o.title, o.anchor, o.level) for o in preview.outline] == [
        ("Overview", "p1", 1),
        ("Warranty", "p17", 1),
        ("Reserve", "p17", 2),
    ]


def test_focus_returns_page_anchored_items(report: ReadEngine) -> None:
    pack = report.read("s", ReadRequest(target="report.pdf", intent=Intent(goal="warranty reserve amount")))
    top = pack.items[0]
    assert top.page == 17 and top.anchor.startswith("p17:L")
    assert "MARKER-P17" in top.text
    again = report.read("v", ReadRequest(target=top.pointer))
    assert again.items[0].text == top.text


def test_a_page_read_is_that_page(report: ReadEngine, tmp_path: Path) -> None:
    pack = report.read("s", ReadRequest(target="report.pdf#p17", budget_tokens=4000))
    item = pack.items[0]
    assert item.page == 17 and item.anchor.startswith("p17:L1-")
    document = pymupdf.open(tmp_path / "report.pdf")
    assert words(item.text) == words(document[16].get_text())
    lines = report.read("t", ReadRequest(target="report.pdf#p17:L2-L3"))
    assert lines.items[0].text.split("\n") == item.text.split("\n")[1:3]


def test_full_view_pages_span_at_most_twenty_pages(report: ReadEngine) -> None:
    pack = report.read("s", ReadRequest(target="report.pdf", view="full", budget_tokens=22_000))
    assert pack.cursor is not None
    assert pack.items[0].page == 1
    assert "Chapter heading 16" in pack.items[0].text and "Chapter heading 21" not in pack.items[0].text
    assert pack.view == "sections" and pack.left_out and "cursor" in pack.left_out  # ends where p17 starts


def test_unreadable_pdfs_get_clear_errors(tmp_path: Path) -> None:
    make_pdf(
        tmp_path / "locked.pdf", ["secret text"], encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="owner"
    )
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\nthis is not really a pdf")
    make_pdf(tmp_path / "scanned.pdf", ["", "", ""])
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    with pytest.raises(UnsupportedArtifact, match="encrypted"):
        engine.preview("s", "locked.pdf")
    with pytest.raises(UnsupportedArtifact, match="not a readable PDF"):
        engine.preview("s", "broken.pdf")
    with pytest.raises(UnsupportedArtifact, match="no text layer"):
        engine.preview("s", "scanned.pdf")


def test_financebench_filing_pages_match_the_pdf(financebench: Path) -> None:
    engine = ReadEngine(Settings(roots=(financebench / "pdfs",)))
    preview = engine.preview("s", "3M_2018_10K.pdf")
    assert preview.signals["pages"] == 160
    pack = engine.read(
        "s",
        ReadRequest(
            target="3M_2018_10K.pdf", intent=Intent(goal="purchases of property, plant and equipment cash flow")
        ),
    )
    document = pymupdf.open(financebench / "pdfs" / "3M_2018_10K.pdf")
    for item in pack.items:
        page_words = set(words(document[item.page - 1].get_text()))
        assert set(words(item.text)) <= page_words, f"{item.anchor} is not on page {item.page}"
