"""SWE-agent-shaped runs: a view superseded by an edit's echo is replaceable, and summaries never repeat
what the history keeps verbatim elsewhere (the task, the system prompt, earlier summaries)."""

from __future__ import annotations

import json
import random

from sparseread_mcp.compaction import compact, load, validate
from sparseread_mcp.compaction.marks import salient
from sparseread_mcp.compaction.router import History, features
from sparseread_mcp.compaction.segments import segment
from sparseread_mcp.compaction.summarize import Elsewhere, ExtractiveSummarizer, _kept_marks, held_marks, unit_lines

TARGET = "return int(value.total_seconds() / base_unit.total_seconds())"
FIXED = "return int(round(value.total_seconds() / base_unit.total_seconds()))"


def window(first: int, special: str, *, count: int = 40) -> str:
    """SWE-agent's `open` window: a header, then numbered lines `1457:<text>`, one of them `special`."""
    body = [f"{first + k}:        weight_{first + k} = scale_{first + k}(value, unit_{k % 7})" for k in range(count)]
    body[count // 2] = f"{first + count // 2}:        {special}"
    return "[File: src/pkg/fields.py (1997 lines total)]\n" + "\n".join(body) + "\n(Open file: src/pkg/fields.py)"


def swe_run(*, echo_lines: int) -> list[dict[str, object]]:
    """Open a window, edit a line copied from it (the edit succeeds and echoes `echo_lines` lines of the
    changed region), then run a script that uses the issue's identifier and the echo's new line number."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an autonomous programmer with open, edit and bash commands."},
        {"role": "user", "content": "ISSUE: TimeDelta_ms1474 rounds down; see src/pkg/fields.py line 1474."},
    ]

    def step(name: str, arguments: dict[str, object], result: str, said: str) -> None:
        number = len(messages)
        call = {"id": f"c{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        messages.append({"role": "assistant", "content": said, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": result})

    step("open", {"path": "src/pkg/fields.py", "line_number": 1474}, window(1454, TARGET), "Let's open the file.")
    echo = window(1454 + 20 - echo_lines // 2, FIXED, count=echo_lines)
    step("edit", {"search": TARGET, "replace": FIXED}, "Text replaced.\n" + echo, "Round instead of truncating.")
    for k in range(4):
        step("bash", {"command": f"python reproduce_{k}.py"}, f"run {k}: TimeDelta_ms1474 gives 345", "Check it.")
    return messages


def test_a_view_an_edit_echo_shows_again_is_superseded_and_compacted() -> None:
    messages = swe_run(echo_lines=40)
    units = segment(load(messages))
    state = History(units)
    the_view = next(u for u in units if u.tools == ("open",))
    assert not features(the_view, state).copied  # the edit copied from it, but its echo shows the region again
    result = compact(load(messages))
    kept = json.dumps(result.transcript.dump())
    assert "weight_1460 = scale_1460" in kept  # the echo (the newer text) is what stays raw or summarized
    assert kept.count("weight_1460 = scale_1460") == 1  # the older view is not kept beside it
    assert validate(result.transcript) is None and result.tokens_after < result.tokens_before


def test_a_view_whose_region_is_not_shown_again_keeps_its_raw_text() -> None:
    messages = swe_run(echo_lines=6)  # the echo shows 6 of the view's 40 lines: not superseded
    units = segment(load(messages))
    the_view = next(u for u in units if u.tools == ("open",))
    assert features(the_view, History(units)).copied
    kept = json.dumps(compact(load(messages)).transcript.dump())
    assert "weight_1460 = scale_1460" in kept  # far from the echo's lines: only the raw view holds it


def test_a_superseded_run_keeps_every_identifier_later_actions_use() -> None:
    messages = swe_run(echo_lines=40)
    for t, message in enumerate(messages):
        if message["role"] != "assistant" or t < 4:
            continue
        earlier = " ".join(str(m["content"]) for m in messages[:t] if m["role"] == "tool")
        action = json.dumps(message)
        used = {s for s in salient(action) if s in earlier}
        result = compact(load(messages[:t]))
        text = json.dumps(result.transcript.dump())
        assert all(s in text for s in used), (t, sorted(s for s in used if s not in text))
        assert validate(result.transcript) is None and result.tokens_after <= result.tokens_before


def test_a_summary_leaves_out_what_the_task_holds_and_the_router_counts_it_as_kept() -> None:
    messages = swe_run(echo_lines=40)
    units = segment(load(messages))
    held = held_marks(units)
    assert "TimeDelta_ms1474" in held and "src/pkg/fields.py" in held  # the user's issue holds them
    run = next(u for u in units if u.tools == ("bash",))
    plain = ExtractiveSummarizer().summarize("S1", [run])
    lean = ExtractiveSummarizer(elsewhere=Elsewhere(held=held)).summarize("S1", [run])
    assert "TimeDelta_ms1474" in plain and "TimeDelta_ms1474" not in lean
    assert len(lean) < len(plain)
    # A later action reuses the identifier: the summary without it still counts as keeping it (the task does).
    assert features(run, History(units)).survives == 1.0
    result = compact(load(messages))
    kept = json.dumps(result.transcript.dump())
    assert "TimeDelta_ms1474" in kept and any(p.committed for p in result.plan)


def test_an_error_line_is_listed_once_per_span() -> None:
    refusal = "Your proposed edit has introduced new syntax error(s). Please retry your edit command."
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix it."}]
    for k in range(3):
        call = {"id": f"e{k}", "type": "function", "function": {"name": "edit", "arguments": f'{{"n": {k}}}'}}
        messages.append({"role": "assistant", "content": "Try again.", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"e{k}", "content": f"{refusal}\nattempt_{k}0 failed"})
    span = [u for u in segment(load(messages)) if u.kind == "interaction"]
    summary = ExtractiveSummarizer().summarize("S1", span)
    assert summary.count("Your proposed edit has introduced") == 1
    assert all(f"attempt_{k}0" in summary for k in range(3))


def test_a_views_numbered_lines_are_file_text_not_reported_errors() -> None:
    code = "\n".join(
        [
            "[File: src/pkg/fields.py (1997 lines total)]",
            "1480:        except (TypeError, ValueError) as error_case1480:",
            '1481:            raise self.make_error("invalid") from error_case1480',
            "   312\texcept OverflowError as error:",
        ]
    )
    view = {"role": "tool", "tool_call_id": "v", "content": code}
    run = {"role": "tool", "tool_call_id": "r", "content": "Traceback (most recent call last):\nValueError: bad unit"}
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix it."}]
    for call_id, name, result in (("v", "open", view), ("r", "bash", run)):
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages += [{"role": "assistant", "content": "Next.", "tool_calls": [call]}, result]
    the_view, the_run = (u for u in segment(load(messages)) if u.kind == "interaction")
    summary = ExtractiveSummarizer().summarize("S1", [the_view])
    assert "error:" not in summary and "1481:" not in summary  # no line of the file as a report, nor whole
    assert "error_case1480" in summary  # its names are still marks of their own
    assert "error: Traceback (most recent call last):" in ExtractiveSummarizer().summarize("S2", [the_run])


def test_a_summary_names_call_arguments_bare_and_lists_a_mark_a_call_of_the_span_shows_once() -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix it."}]
    steps = [
        ("find_file", {"name": "handler.py"}, "Found: /repo/pkg/handler_v2.py"),
        ("open", {"path": "/repo/pkg/handler_v2.py", "view_range": [10, 40]}, "10: def handle(): pass"),
    ]
    for k, (name, arguments, result) in enumerate(steps):
        call = {"id": f"c{k}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        messages += [
            {"role": "assistant", "content": "Next.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": result},
        ]
    summary = ExtractiveSummarizer().summarize("S1", [u for u in segment(load(messages)) if u.kind == "interaction"])
    assert "open(path=/repo/pkg/handler_v2.py, view_range=[10, 40])" in summary  # no JSON quotes to escape again
    assert summary.count("/repo/pkg/handler_v2.py") == 1  # the later call shows it: the earlier result's list skips it


def test_a_mark_a_later_interaction_lists_is_left_to_it_and_every_later_use_still_finds_it() -> None:
    messages = swe_run(echo_lines=40)
    units = segment(load(messages))
    elsewhere = Elsewhere.of(units)
    first, second = [u for u in units if u.tools == ("bash",)][:2]
    assert elsewhere.listed["345"] > second.index  # the last run lists it
    assert "345" not in "\n".join(unit_lines(first, elsewhere=elsewhere))
    assert "345" in "\n".join(unit_lines(first, elsewhere=Elsewhere(held=elsewhere.held)))
    test_a_superseded_run_keeps_every_identifier_later_actions_use()  # the replay still finds every used string


def test_a_summary_keeps_listing_a_mark_when_fewer_marks_compete() -> None:
    """What `Elsewhere` relies on: the marks a summary lists are a prefix of a fixed order within a budget."""
    rng = random.Random(7)
    for _ in range(200):
        marks = {f"name_{rng.randrange(10 ** rng.randrange(1, 9))}x{k}" for k in range(rng.randrange(1, 120))}
        full = _kept_marks(set(marks), "", 400, set())
        fewer = {m for m in marks if rng.random() < 0.6}
        assert set(full) & fewer <= set(_kept_marks(fewer, "", 400, set()))
