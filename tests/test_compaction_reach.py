"""How far the agent reaches back, and which keys outlive the horizon (issue #31): a key the agent already
typed is not a reach into old results, a number passed as a JSON argument is a use, a view's line number
glued to a word is not an id, a file name is a lasting key, and a result of which nothing stays is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from sparseread_mcp import Settings, compact_history
from sparseread_mcp.compaction import load
from sparseread_mcp.compaction.elide import DEFAULT_CAUTION, HEADER, reach
from sparseread_mcp.compaction.keys import keys
from sparseread_mcp.serve.server import create_server

PROSE = "This line of the page explains the layout in plain words and names nothing."


def _call(number: int, name: str, **arguments: object) -> dict[str, object]:
    call = {"id": f"call_{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _result(number: int, text: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": f"call_{number}", "content": text}


def _helper_view(letter: str) -> str:
    """A result with one line holding a plain identifier (no digit, no path: not a lasting key)."""
    return "\n".join([f"def helper_{letter}x(): pass", *[PROSE] * 19])


def _run_reusing_its_own_key() -> list[dict[str, object]]:
    """The agent copies `threshold_value` from the first result at once, then types it again 12 results on."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Tune the config."},
        _call(1, "execute_bash", command="cat config.txt"),
        _result(1, "\n".join(["threshold_value = 10", *[PROSE] * 19])),
        _call(2, "execute_bash", command="grep threshold_value config.txt"),
        _result(2, _helper_view("a")),
    ]
    for n in range(3, 13):
        messages += [_call(n, "execute_bash", command=f"cat part{n}.txt"), _result(n, _helper_view(chr(ord("a") + n)))]
    return [*messages, _call(13, "execute_bash", command="echo threshold_value"), _result(13, "threshold_value")]


def test_a_key_the_agent_already_typed_is_not_a_reach_into_old_results() -> None:
    messages = _run_reusing_its_own_key()
    # Its own message holds `threshold_value` since call 2: only the first copy (1 result back) was a reach.
    assert reach(load(messages)) == 1
    out = {str(m["tool_call_id"]): str(m["content"]) for m in compact_history(messages) if m["role"] == "tool"}
    # 4 results back is past the horizon (the larger of 3 and caution x the reach): its plain identifier goes ...
    assert out["call_10"].startswith(HEADER) and "helper_kx" not in out["call_10"]
    # ... while the results within the horizon keep theirs.
    assert "helper_lx" in out["call_11"] and "helper_mx" in out["call_12"]


def test_a_number_passed_as_a_json_argument_is_a_use_of_the_result_that_printed_it() -> None:
    state = "\n".join(['{"index": 1242, "text": "Documents"}', *[PROSE] * 10])
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "Open the documents folder."},
        _call(1, "browser_get_state"),
        _result(1, state),
        *[m for n in range(2, 5) for m in (_call(n, "browser_scroll"), _result(n, f"Scrolled {n}"))],
        _call(5, "browser_click", index=1242),
        _result(5, "Clicked"),
    ]
    assert reach(load(messages)) == 4  # the click copied 1242 from 4 results back


def test_a_views_line_number_glued_to_a_word_is_not_an_id() -> None:
    assert keys("4:EXTRAS_REQUIRE = {") == {"EXTRAS_REQUIRE"}
    assert keys("1491:class Mapping(Field):") == {"1491"}
    assert "HAT028" in keys("flight HAT028") and "src/a.py:12:def" in keys("src/a.py:12:def foo")
    view = "\n".join(
        ["[File: /repo/setup.py (60 lines total)]"]
        + [f"{n}:EXTRAS_{'ABCDEFGHIJKLMNOPQRST'[n - 1]}ONLY = {{" for n in range(1, 21)]
    )
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix setup."}, _call(1, "open"), _result(1, view)]
    for n in range(2, 9):
        messages += [_call(n, "bash"), _result(n, "\n".join([PROSE] * 10))]
    out = {str(m["tool_call_id"]): str(m["content"]) for m in compact_history(messages) if m["role"] == "tool"}
    # Past the horizon a view keeps its path, not its lines: `3:EXTRAS_CONLY` is a line of code, not an id.
    assert "/repo/setup.py" in out["call_1"] and "EXTRAS_" not in out["call_1"]


def test_a_file_name_outlives_the_horizon_like_a_path() -> None:
    listing = "\n".join(["App.tsx", "PullRequestViewer.tsx", "index_page", *[PROSE] * 10])
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "Fix the viewer."},
        _call(1, "ls"),
        _result(1, listing),
    ]
    for n in range(2, 9):
        messages += [_call(n, "bash"), _result(n, "\n".join([PROSE] * 10))]
    out = {str(m["tool_call_id"]): str(m["content"]) for m in compact_history(messages) if m["role"] == "tool"}
    assert out["call_1"].startswith(HEADER)
    assert "PullRequestViewer.tsx" in out["call_1"] and "App.tsx" in out["call_1"]
    assert "index_page" not in out["call_1"]  # a plain identifier does not outlive it


@pytest.mark.anyio
async def test_a_result_of_which_nothing_stays_is_one_line_and_reads_back_the_same(tmp_path: Path) -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Read the guide."}]
    for n in range(1, 4):
        messages += [_call(n, "view"), _result(n, "\n".join([PROSE] * 30))]
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        first = await client.call_tool("sro_compact", {"messages": messages})
        assert first.structured_content is not None
        again = await client.call_tool("sro_compact", {"messages": first.structured_content["messages"]})
    assert again.structured_content is not None
    old = next(m for m in first.structured_content["messages"] if m["role"] == "tool")["content"]
    assert old == f"{HEADER} call_1]"  # no mark line, no count: the header names the full text
    assert again.structured_content["messages"] == first.structured_content["messages"]


@pytest.mark.anyio
async def test_the_tools_default_caution_is_the_librarys(tmp_path: Path) -> None:
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["sro_compact"].input_schema["properties"]["caution"]["default"] == DEFAULT_CAUTION


def _view(first: int, count: int) -> str:
    """A numbered view of a file (`cat -n`), each line holding a plain identifier: not a lasting key."""
    return "\n".join(f"{first + n:>6}\tcase_label_{chr(97 + n % 26)}{chr(97 + n // 26)}x = 0" for n in range(count))


def test_lines_around_one_the_agent_typed_keep_their_keys_past_the_horizon() -> None:
    """The agent views lines 300-329, then inserts after line 315; ten results later the view is past the
    horizon, yet the lines within two of 315 (and of 300 and 329, which it typed too) keep their line numbers
    (it views and edits that region by number), while the rest of the view keeps none."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix the match."},
        _call(1, "str_replace_editor", command="view", path="/w/match.c", view_range=[300, 329]),
        _result(1, _view(300, 30)),
        _call(2, "str_replace_editor", command="insert", path="/w/match.c", insert_line=315, new_str="x();"),
        _result(2, "The file /w/match.c has been edited."),
    ]
    for n in range(3, 13):
        messages += [_call(n, "execute_bash", command=f"cat part{n}.txt"), _result(n, _helper_view(chr(97 + n)))]
    messages += [_call(13, "execute_bash", command="make"), _result(13, "make: Nothing to be done.")]
    out = {str(m["tool_call_id"]): str(m["content"]) for m in compact_history(messages) if m["role"] == "tool"}
    view = out["call_1"]
    assert view.startswith(HEADER)
    assert all(f"{n:>6}\t" in view for n in range(313, 318))  # 315 and the two lines on either side
    assert not any(f"{n:>6}\t" in view for n in (306, 312, 318, 323))  # far from every number it typed
