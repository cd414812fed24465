"""A preview's samples: where its intent's best matches are, else passages spread through the file."""

from __future__ import annotations

from pathlib import Path

from conftest import source_at
from docs import long_markdown

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
