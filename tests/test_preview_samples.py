"""A preview's samples: where its intent's best matches are, else passages spread through the file."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from conftest import source_at
from docs import long_markdown, single_line
from flow import call
from mcp import Client, StdioServerParameters
from test_mcp_transports import installed_command

from sparseread_mcp import Intent, ReadEngine, Settings


def test_a_preview_with_an_intent_samples_its_best_matches(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    plain = engine.preview("a", "manual.md")
    asked = engine.preview("b", "manual.md", Intent(needles=["SEC37-P1-MARK"]))
    assert plain.route == asked.route == "sparse"
    assert not any("SEC37-P1" in s.text for s in plain.samples)  # spread through the file
    first_line = int(asked.samples[0].anchor.split(":")[0].split("-")[0].lstrip("L"))
    assert "SEC37-P1-MARK" in long_markdown().split("\n")[first_line - 1]  # the opening of the needle's passage
    # Each sample is verbatim at its pointer, the opening of its passage, and no longer than a sample.
    for sample in asked.samples:
        assert source_at(long_markdown(), sample.anchor) == sample.text and len(sample.text) <= 240


def _statement(rows_before: int = 14) -> str:
    """A filing's cash-flow statement as PDF extraction leaves it: a label line, then one number per line,
    the rows one block with no blank line between them, inside enough prose to be read sparsely."""
    prose = "\n\n".join(
        f"Paragraph {n} discusses the segment results, the markets served and the outlook for the year."
        for n in range(120)
    )
    rows = [f"Other adjustment {n}\n \n({n * 7 + 3})\n \n({n * 5 + 1})" for n in range(rows_before)]
    rows += ["Purchases of property, plant and equipment (PP&E)\n \n(1,577)\n \n(1,373)"]
    rows += [f"Proceeds from item {n}\n \n{n * 11}\n \n{n * 13}" for n in range(4)]
    return f"{prose}\n\nConsolidated Statement of Cash Flows\n" + "\n".join(rows) + f"\n\n{prose}\n"


def test_a_sample_shows_where_its_passage_says_the_intent_not_the_number_it_opens_with(tmp_path: Path) -> None:
    """The matched passage opens with rows of numbers; its sample begins at the row the question names
    and carries that row's figures, verbatim at its pointer."""
    text = _statement()
    (tmp_path / "filing.txt").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    ask = "What were the purchases of property, plant and equipment?"
    preview = engine.preview("s", "filing.txt", Intent(goal=ask), budget_tokens=2_000)
    assert preview.route == "sparse" and preview.samples
    best = preview.samples[0]
    assert best.text.startswith("Purchases of property, plant and equipment") and "(1,577)" in best.text
    assert best.text.rstrip().endswith("(1,373)")  # that row, to its last figure, and not the next one
    assert source_at(text, best.anchor) == best.text and len(best.text) <= 240
    # Without an intent a sample is still the opening of a passage spread through the file.
    plain = engine.preview("t", "filing.txt", budget_tokens=2_000)
    assert all(source_at(text, s.anchor) == s.text for s in plain.samples)


def test_an_outline_cut_to_the_budget_keeps_the_section_that_holds_the_match(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown(sections=120))
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    plain = engine.preview("a", "manual.md", budget_tokens=700)
    asked = engine.preview("b", "manual.md", Intent(needles=["SEC117-P1-MARK"]), budget_tokens=700)
    assert not plain.outline_complete and not asked.outline_complete  # both cut to the budget
    wanted = "Section 117:"
    assert not any(e.title.startswith(wanted) for e in plain.outline)  # the tail goes first
    assert any(e.title.startswith(wanted) for e in asked.outline)  # unless the intent matched there
    starts = [e.lines[0] for e in asked.outline]
    assert asked.tokens <= 700 and starts == sorted(starts)  # still in the document's order


def test_a_sample_in_a_long_line_begins_at_the_sentence_that_says_the_intent_and_ends_at_a_space(
    tmp_path: Path,
) -> None:
    text = single_line(sentences=2_000)
    (tmp_path / "one.txt").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    preview = engine.preview("s", "one.txt", Intent(needles=["S1500X"]), budget_tokens=2_000)
    best = preview.samples[0]
    assert best.text.startswith("Sentence 1500 ") and source_at(text, best.anchor) == best.text
    columns = re.fullmatch(r"L1:C(\d+)-C(\d+)", best.anchor)
    assert columns is not None
    last = int(columns.group(2))  # 1-based and inclusive: text[last] is the character after the sample
    assert len(best.text) <= 240 and text[last : last + 1] == " "  # cut at a space, not inside a word


@pytest.mark.anyio
async def test_over_stdio_a_sample_states_the_row_and_its_pointer_verifies(tmp_path: Path) -> None:
    """The installed server, the official client: the sample an agent is shown can be cited as it is."""
    (tmp_path / "filing.txt").write_text(_statement())
    params = StdioServerParameters(command=installed_command(), args=["--root", str(tmp_path)])
    ask = "What were the purchases of property, plant and equipment?"
    with anyio.fail_after(120):
        async with Client(params) as client:
            preview = await call(client, "sro_preview", {"path": "filing.txt", "intent": {"goal": ask}})
            best = preview["samples"][0]
            assert best["text"].startswith("Purchases of property") and "(1,577)" in best["text"]
            checked = await call(client, "sro_read", {"target": best["pointer"], "action": "verify"})
    assert checked["verification"]["status"] == "ok"
