"""Bounded line diffs: a unified diff while the lines that differ are few, where they differ past that."""

from __future__ import annotations

import pytest

from sparseread_mcp.files import textdiff
from sparseread_mcp.files.textdiff import line_diff


def test_a_small_edit_in_a_long_text_is_a_unified_diff() -> None:
    before = "".join(f"line {n}\n" for n in range(50_000))
    after = before.replace("line 25000\n", "line 25000 edited\n")
    diff = line_diff(before, after, old_label="a", new_label="b")
    assert diff.exact and "-line 25000\n+line 25000 edited" in diff.text


def test_past_the_bound_the_answer_names_the_changed_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textdiff, "MAX_DIFF_LINES", 10)
    before = "".join(f"line {n}\n" for n in range(40))
    lines = before.split("\n")
    for n in (5, 6, 7, 20, 30):
        lines[n] = f"edited {n}"
    diff = line_diff(before, "\n".join(lines), old_label="a", new_label="b")
    assert not diff.exact
    assert "new or edited lines now at L6-L8, L21, L31" in diff.text
    assert "5 old lines removed or edited" in diff.text
