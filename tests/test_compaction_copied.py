"""Compaction keeps what the agent acts on: observations it copied lines from, and the latest interaction."""

from __future__ import annotations

import json

from sparseread_mcp.compaction import CompactionSettings, compact, load, validate
from sparseread_mcp.compaction.router import DefaultRouter, History, features
from sparseread_mcp.compaction.segments import segment
from sparseread_mcp.deadline import deadline

FILLER = "\n".join(f"{k:>6}\t    total_{k} = accumulate(total_{k - 1}, weight)  # ordinary line" for k in range(1, 60))


class Run:
    """An OpenAI-format agent run built call by call."""

    def __init__(self) -> None:
        self.messages: list[dict[str, object]] = [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "Fix the rounding bug."},
        ]

    def step(self, name: str, arguments: dict[str, object], result: str, said: str = "Next.") -> None:
        number = len(self.messages)
        call = {"id": f"c{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        self.messages.append({"role": "assistant", "content": said, "tool_calls": [call]})
        self.messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": result})


def view(path: str, special: str) -> str:
    """A `cat -n` view: the numbered lines of a file, one of them `special`."""
    return f"Here's the result of running `cat -n` on {path}:\n{FILLER}\n    60\t{special}\n    61\t    return result"


def run_with_a_view(*, copy: bool) -> Run:
    """A view of rounding.py, then (when `copy`) an edit whose old text is copied from that view's line 60,
    then a few unrelated commands."""
    run = Run()
    run.step(
        "editor",
        {"command": "view", "path": "/repo/rounding.py"},
        view("/repo/rounding.py", "    result = int(x / unit)"),
    )
    if copy:
        run.step(
            "editor",
            {
                "command": "str_replace",
                "path": "/repo/rounding.py",
                "old_str": "result = int(x / unit)",
                "new_str": "r",
            },
            "The edit was refused: the text matches twice.",
        )
    for k in range(3):
        run.step("shell", {"command": f"ls docs/part{k}"}, "\n".join(f"chapter_{k}_{n}.txt" for n in range(40)))
    return run


def test_an_observation_a_later_action_copied_a_line_from_keeps_its_raw_text() -> None:
    copied = compact(load(run_with_a_view(copy=True).messages))
    kept = json.dumps(copied.transcript.dump())
    assert "total_30 = accumulate(total_29, weight)" in kept  # the whole view, not a summary of it
    assert any(p.committed for p in copied.plan)  # the unrelated listings were compacted
    # Without the copy, the same view is summarized: the rule, not the settings, kept it.
    plain = compact(load(run_with_a_view(copy=False).messages))
    assert "total_30 = accumulate(total_29, weight)" not in json.dumps(plain.transcript.dump())
    assert validate(copied.transcript) is None and copied.tokens_after < copied.tokens_before


def test_a_copy_is_found_through_a_views_line_numbers_and_indentation() -> None:
    run = run_with_a_view(copy=True)
    units = segment(load(run.messages))
    state = History(units)
    the_view, the_edit = (u for u in units if u.kind == "interaction" and "rounding.py" in u.arguments)
    assert features(the_view, state).copied  # "    60\t    result = int(x / unit)" was copied as the old text
    assert not features(the_edit, state).copied
    assert DefaultRouter().score(the_view, state) < 0.6


def test_the_newest_observation_holding_a_copied_line_is_the_one_kept() -> None:
    run = Run()
    line = "    result = int(x / unit)"
    run.step("editor", {"command": "view", "path": "/repo/rounding.py"}, view("/repo/rounding.py", line))
    run.step("editor", {"command": "view", "path": "/repo/rounding.py"}, view("/repo/rounding.py", line))
    run.step(
        "editor", {"command": "str_replace", "path": "/repo/rounding.py", "old_str": line.strip(), "new_str": "r"}, "ok"
    )
    units = [u for u in segment(load(run.messages)) if u.kind == "interaction"]
    state = History(segment(load(run.messages)))
    older, newer = units[0], units[1]
    assert features(newer, state).copied
    assert not features(older, state).copied  # an older copy of the same text is not what the agent acted on


def test_an_echo_of_the_agents_own_text_is_not_kept_as_copied() -> None:
    """A failed edit prints the agent's new text back; the agent retrying with that text is not copying data."""
    run = Run()
    mine = "rounded = round(x / unit, ndigits=0)  # nearest"
    run.step(
        "editor", {"command": "insert", "path": "/repo/rounding.py", "text": mine}, f"Syntax error. Your edit:\n{mine}"
    )
    run.step("editor", {"command": "insert", "path": "/repo/rounding.py", "text": mine}, "ok")
    units = segment(load(run.messages))
    echo = next(u for u in units if u.kind == "interaction")
    assert not features(echo, History(units)).copied


def test_by_default_the_latest_interaction_is_kept_and_a_single_older_one_is_compacted() -> None:
    run = Run()
    run.step("shell", {"command": "ls docs"}, "\n".join(f"a chapter about topic {n} of the guide" for n in range(60)))
    run.step("shell", {"command": "ls src"}, "\n".join(f"a module about topic {n} of the code" for n in range(60)))
    result = compact(load(run.messages))
    assert CompactionSettings().keep_last == 1
    assert [p.interactions for p in result.plan if p.committed] == [1]  # no span gate: one interaction is a span
    kept = json.dumps(result.transcript.dump())
    assert (
        "topic 59 of the code" in kept and "topic 30 of the guide" not in kept
    )  # the latest raw, the older summarized
    assert validate(result.transcript) is None and result.tokens_after < result.tokens_before


def run_editing_from_a_view(*, applied: bool) -> Run:
    """A view; an edit copying its line 60 that fails (or, with `applied`, succeeds on another line first);
    then a retry copying the same line."""
    run = Run()
    line = "    result = int(x / unit)"
    run.step("editor", {"command": "view", "path": "/repo/rounding.py"}, view("/repo/rounding.py", line))
    if applied:
        run.step("editor", {"command": "insert", "path": "/repo/rounding.py", "line": 1, "text": "import math"}, "ok")
    edit = {"command": "str_replace", "path": "/repo/rounding.py", "old_str": line.strip(), "new_str": "r = x"}
    run.step("editor", edit, "ERROR: no replacement was performed, the text occurs twice.")
    run.step(
        "editor", {**edit, "new_str": "r = round(x)"}, "ERROR: no replacement was performed, the text occurs twice."
    )
    return run


def test_a_copied_view_its_call_gives_again_is_replaceable_until_a_call_may_have_changed_the_file() -> None:
    unchanged = run_editing_from_a_view(applied=False)
    units = segment(load(unchanged.messages))
    the_view = next(u for u in units if u.kind == "interaction")
    # Only failed edits since: the view call re-reads the same text, so the summary (which keeps it) will do.
    assert not features(the_view, History(units)).copied
    changed = run_editing_from_a_view(applied=True)
    units = segment(load(changed.messages))
    the_view = next(u for u in units if u.kind == "interaction")
    # An insert into the file succeeded since: re-reading gives other text, so the raw view is kept.
    assert features(the_view, History(units)).copied
    assert DefaultRouter().score(the_view, History(units)) < 0.6


def test_a_call_that_names_no_file_and_succeeds_may_have_changed_any_file() -> None:
    run = run_editing_from_a_view(applied=False)
    run.messages = run.messages[:4]  # the view only
    run.step("edit", {"command": "edit 60:60\n    result = round(x / unit)"}, "File updated.")  # the open file
    run.step("edit", {"command": "edit 61:61\n    result = int(x / unit)"}, "File updated.")
    units = segment(load(run.messages))
    the_view = next(u for u in units if u.kind == "interaction")
    assert features(the_view, History(units)).copied


def _word(k: int) -> str:
    letters = ""
    for _ in range(4):
        k, rest = divmod(k, 26)
        letters += chr(97 + rest)
    return letters


def test_copies_are_found_in_one_pass_over_a_long_history() -> None:
    """Each line is hashed once: views of 40,000 lines and an action copying all of them stay linear (a line
    looked up in every earlier observation would be 40,000 x 3 scans of megabytes)."""
    text = "\n".join(f"{k:>6}\t{_word(k)} of a long and plain file" for k in range(40_000))
    run = Run()
    for k in range(3):
        run.step("editor", {"command": "view", "path": f"/repo/part{k}.txt"}, text)
    run.step("shell", {"command": "make"}, "done")  # a call naming no file succeeded: the views may be stale
    run.step("editor", {"command": "str_replace", "path": "/repo/part2.txt", "old_str": text, "new_str": "x"}, "ok")
    with deadline(120):  # a hang guard, not a stopwatch: the pass takes well under a second
        units = segment(load(run.messages))
        state = History(units)
    views = [u for u in units if u.kind == "interaction"][:3]
    assert [state.copied(u) for u in views] == [False, False, True]  # the newest holder only
