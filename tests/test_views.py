"""Budgeted Reads: every view at a budget that fits and at one that does not, for five artifact types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docs import long_markdown

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.wire import wire_blocks


def make(tmp_path: Path, kind: str) -> tuple[str, str]:
    """(file name, a section anchor) for a generated artifact of `kind`, big enough to need budgets."""
    if kind == "markdown":
        (tmp_path / "manual.md").write_text(long_markdown(sections=40))
        return "manual.md", "Section 12: glacier"
    if kind == "code":
        body = "".join(
            f"class Service{i}:\n    '''Service number {i}.'''\n\n"
            + "".join(f"    def step_{k}(self, x):\n        return x * {k} + {i}\n\n" for k in range(12))
            for i in range(12)
        )
        (tmp_path / "services.py").write_text(body)
        return "services.py", "Service7"
    if kind == "pdf":
        pymupdf = pytest.importorskip("pymupdf")
        document = pymupdf.open()
        for n in range(20):
            page = document.new_page()
            for k in range(40):
                page.insert_text((72, 60 + 17 * k), f"Page {n + 1} line {k + 1}: figures for unit {n}-{k}.", fontsize=9)
        document.set_toc([[1, f"Part {n + 1}", n + 1] for n in range(0, 20, 4)])
        document.save(tmp_path / "report.pdf")
        return "report.pdf", "p9"
    if kind == "csv":
        header = ",".join(["id", "name", *(f"measure_{c}" for c in range(30))])
        rows = "".join(f"{i},name {i}," + ",".join(str(i * c) for c in range(30)) + "\n" for i in range(1, 700))
        (tmp_path / "rows.csv").write_text(header + "\n" + rows)
        return "rows.csv", "row=500"
    (tmp_path / "data.json").write_text(
        json.dumps(
            {"meta": {"v": 1}, "items": [{"id": i, "tags": ["a", "b"], "note": f"n{i}"} for i in range(600)]}, indent=1
        )
    )
    return "data.json", "$.items[3]"


KINDS = ["markdown", "code", "pdf", "csv", "json"]


@pytest.mark.parametrize("kind", KINDS)
def test_full_fits_or_degrades_to_sections_outline_card(tmp_path: Path, kind: str) -> None:
    name, _ = make(tmp_path, kind)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    whole = engine.read("a", ReadRequest(target=name, view="full", budget_tokens=22_500))
    parts = [whole]
    while parts[-1].cursor:
        parts.append(engine.read("a", ReadRequest(target=name, cursor=parts[-1].cursor, budget_tokens=22_500)))
    full_text = "\n".join(p.items[0].text for p in parts)
    assert all(p.tokens <= 22_500 for p in parts)
    if len(parts) == 1:
        assert whole.view == "full" and whole.left_out is None
    small = engine.read("b", ReadRequest(target=name, view="full", budget_tokens=1200))
    assert small.view in ("sections", "lines") and small.cursor and small.left_out
    assert full_text.startswith(small.items[0].text)
    assert small.tokens <= 1200 and small.truncated is False


@pytest.mark.parametrize("kind", KINDS)
def test_outline_and_card(tmp_path: Path, kind: str) -> None:
    name, _ = make(tmp_path, kind)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    roomy = engine.read("a", ReadRequest(target=name, view="outline", budget_tokens=22_500))
    assert roomy.view == "outline" and roomy.preview is not None and roomy.preview.outline
    cramped = engine.read("b", ReadRequest(target=name, view="outline", budget_tokens=400))
    assert cramped.tokens <= 400
    if roomy.tokens > 400:  # the whole outline does not fit: it degrades, and says so
        assert cramped.view == "card" or (cramped.preview is not None and not cramped.preview.outline_complete)
    card = engine.read("c", ReadRequest(target=name, view="card", budget_tokens=600))
    assert card.view == "card" and card.preview is not None and card.preview.outline == []
    assert card.preview.full_view_chars > 0 and card.tokens <= 600


@pytest.mark.parametrize("kind", KINDS)
def test_section_reads_fit_or_become_the_outline_of_the_section(tmp_path: Path, kind: str) -> None:
    name, anchor = make(tmp_path, kind)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    fits = engine.read("a", ReadRequest(target=f"{name}#{anchor}", view="section", budget_tokens=22_500))
    assert fits.items and fits.tokens <= 22_500
    over = engine.read("b", ReadRequest(target=f"{name}#L1-L300", view="lines", budget_tokens=650))
    assert over.items == [] and over.tokens <= 650 and over.view in ("outline", "card")
    assert over.message and "sub-range" in over.message


def test_summary_without_a_model_degrades_to_the_outline(tmp_path: Path) -> None:
    name, _ = make(tmp_path, "markdown")
    pack = ReadEngine(Settings(roots=(tmp_path,))).read("s", ReadRequest(target=name, view="summary"))
    assert pack.view == "outline" and pack.generated is False
    assert pack.message and "no summarizer" in pack.message


def test_tokenizer_choice_and_margin_are_reported_and_respected(tmp_path: Path) -> None:
    name, _ = make(tmp_path, "markdown")
    for tokenizer, margin, label in [
        ("cl100k_base", 0.0, "cl100k_base"),
        ("chars", 0.0, "chars"),
        ("o200k_base", 0.5, "o200k_base+50%"),
    ]:
        engine = ReadEngine(Settings(roots=(tmp_path,), tokenizer=tokenizer, token_margin=margin))
        pack = engine.read("s", ReadRequest(target=name, view="full", budget_tokens=2000))
        assert pack.tokenizer == label and pack.tokens <= 2000
        assert sum(engine.counter.count(b) for b in wire_blocks(pack)) <= 2000
