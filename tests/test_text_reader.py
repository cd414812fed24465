from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, source_at
from docs import long_markdown, single_line

from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.readers.text import TextReader


def parse(path: Path, passage_chars: int = 600):  # type: ignore[no-untyped-def]
    roots = Roots((path.parent,))
    return TextReader().parse(load_artifact(roots.resolve(path.name)), passage_chars=passage_chars)


def test_every_passage_is_verbatim_at_its_anchor(tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    doc.write_text(long_markdown())
    parsed = parse(doc)
    text = doc.read_text()
    assert len(parsed.passages) > 50
    for passage in parsed.passages:
        assert source_at(text, parsed.anchor_of(passage).format()) == parsed.text_of(passage)


def test_structure_is_kept_whole() -> None:
    parsed = parse(FIXTURES / "contract.md", passage_chars=200)
    texts = [parsed.text_of(p) for p in parsed.passages]
    fence = next(t for t in texts if "def late_fee" in t)
    assert "```python" in fence and fence.rstrip().endswith("```")
    table = next(t for t in texts if "Base service" in t)
    assert "| Express lane | 650 EUR |" in table
    assert any(t.startswith("## Renewal") and "ZEBRA-RENEWAL-7731" in t for t in texts)


def test_outline_is_the_heading_tree_with_line_spans() -> None:
    parsed = parse(FIXTURES / "contract.md")
    titles = [(e.title, e.level) for e in parsed.outline]
    assert titles[:3] == [("Service agreement", 1), ("Term", 2), ("Renewal", 2)]
    renewal = next(e for e in parsed.outline if e.title == "Renewal")
    lines = (FIXTURES / "contract.md").read_text().split("\n")
    assert lines[renewal.first_line - 1] == "## Renewal"
    assert lines[renewal.last_line].startswith("## Fees")
    top = parsed.outline[0]
    assert top.last_line >= renewal.last_line


def test_single_line_documents_split_into_sentences_with_columns(tmp_path: Path) -> None:
    doc = tmp_path / "scraped.txt"
    doc.write_text(single_line())
    parsed = parse(doc)
    text = doc.read_text()
    assert len(parsed.passages) > 10
    for passage in parsed.passages:
        anchor = parsed.anchor_of(passage).format()
        assert anchor.startswith("L1:C")
        assert source_at(text, anchor) == parsed.text_of(passage)
        assert parsed.text_of(passage).rstrip().endswith(")."), "cut inside a sentence"
        assert len(parsed.text_of(passage)) <= 2 * 600


def test_form_feeds_become_pages(tmp_path: Path) -> None:
    doc = tmp_path / "filing.txt"
    doc.write_text("Cover page\n\nintro text\n\fPage two title\n\nsecond page body\n\fThird page\nbody three\n")
    parsed = parse(doc)
    pages = {parsed.text_of(p).strip("\f").split("\n")[0]: parsed.page_of(p) for p in parsed.passages}
    assert pages["Cover page"] == 1
    assert pages["Page two title"] == 2
    assert pages["Third page"] == 3
    assert [e.anchor for e in parsed.outline] == ["p1", "p2", "p3"]


def test_crlf_and_unicode_stay_verbatim(tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    content = "# Título\r\n\r\nCafé naïve résumé — ünïcode 文字.\r\nSecond line.\r\n"
    doc.write_bytes(content.encode())
    parsed = parse(doc)
    for passage in parsed.passages:
        assert source_at(content, parsed.anchor_of(passage).format()) == parsed.text_of(passage)


def test_long_paragraphs_split_between_lines_where_sentences_end(tmp_path: Path) -> None:
    # Semantic line breaks: each sentence starts a line and long ones wrap onto a second line.
    lines = []
    for i in range(80):
        lines.append(f"Clause {i} binds the carrier to deliver parcel batch {i} on time, in full and")
        lines.append(f"with the documents that customs requires for batch {i}.")
    doc = tmp_path / "clauses.md"
    doc.write_text("\n".join(lines) + "\n")
    parsed = parse(doc, passage_chars=500)
    assert len(parsed.passages) > 5
    for passage in parsed.passages:
        assert parsed.anchor_of(passage).kind == "lines"
        assert parsed.text_of(passage).rstrip().endswith("."), "a piece ended inside a sentence"


def test_tatqa_reports_locate_the_annotated_paragraph(tatqa: Path) -> None:
    """Real financial reports (table + paragraphs): the annotated paragraph comes back, verbatim."""
    import json

    from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings

    rows = [json.loads(line) for line in (tatqa / "questions.jsonl").read_text().splitlines()]
    text_questions = [r for r in rows if r["answer_from"] == "text" and r["gold_paragraph_spans"]][:40]
    engine = ReadEngine(Settings(roots=(tatqa / "docs",), native_fit_tokens=0))
    hits = 0
    for row in text_questions:
        name = Path(row["doc_file"]).name
        source = (tatqa / "docs" / name).read_text()
        pack = engine.read(row["qid"], ReadRequest(target=name, intent=Intent(goal=row["question"])))
        found = False
        for item in pack.items:
            assert source_at(source, item.anchor) == item.text
            start = source.index(item.text)
            found = found or any(start <= s and start + len(item.text) >= e for s, e in row["gold_paragraph_spans"])
        hits += found
    assert hits >= 0.7 * len(text_questions), f"{hits}/{len(text_questions)}"
