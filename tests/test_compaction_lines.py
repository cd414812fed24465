"""Line elision (issue #31): the agent's actions stay intact, summaries are verbatim lines, a listing is not an
error, a view is never a run of line numbers, and what a later turn uses is still in the compacted history."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Settings, compact_history
from sparseread_mcp.compaction import load, load_file, validate
from sparseread_mcp.compaction.elide import HEADER, MARK, resolve
from sparseread_mcp.serve.server import create_server

RUNS = Path(__file__).parent / "fixtures" / "runs"
NEW_STR = "\n".join(
    f"    padded_cols_{n} = max(len(cell) for cell in column_{n})  # the agent's own long edit" for n in range(12)
)
LISTING = "\n".join(
    ["total 48"]
    + [f"-rw-r--r-- 1 root root {4096 + n} Apr 30 09:56 chandra_time_{n}.fits" for n in range(20)]
    + ["-rw-r--r-- 1 root root 2880 Apr 30 09:56 invalid test1.fits", "drwxr-xr-x 2 root root 4096 Apr 30 09:56 errors"]
)
VIEW = "\n".join(
    f"{n:>6}\t    total = total + weight * value  # accumulate the weighted sum, step {n}" for n in range(600, 680)
).replace("   640\t    total = total + weight * value", "   640\t    return weighted_total_v2(total, value)")


def _call(number: int, name: str, **arguments: object) -> dict[str, object]:
    call = {"id": f"call_{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": f"Step {number}.", "tool_calls": [call]}


def _result(number: int, text: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": f"call_{number}", "content": text}


def _run() -> list[dict[str, object]]:
    """A coding run: a listing, a view, the agent's edit, then views of other files (all later than these)."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the table padding configurable."},
        _call(1, "execute_bash", command="ls -l data"),
        _result(1, LISTING),
        _call(2, "str_replace_editor", command="view", path="/repo/src/sums.py"),
        _result(2, VIEW),
        _call(
            3, "str_replace_editor", command="str_replace", path="/repo/src/table.py", old_str="pass", new_str=NEW_STR
        ),
        _result(3, "The file /repo/src/table.py has been edited.\n" + "\n".join(NEW_STR.split("\n")[:3])),
    ]
    for n in range(4, 9):
        prose = "\n".join(
            f"This paragraph of the guide, number {n}, explains layout in plain words." for _ in range(30)
        )
        messages += [_call(n, "str_replace_editor", command="view", path=f"/repo/docs/guide{n}.md"), _result(n, prose)]
    # the directory listed again, without the odd file: the old listing's other lines are held by this one
    again = "\n".join(line for line in LISTING.split("\n") if "invalid" not in line)
    return [*messages, _call(9, "execute_bash", command="ls -l data"), _result(9, again)]


def _results(messages: list[dict[str, object]]) -> dict[str, str]:
    return {str(m["tool_call_id"]): str(m["content"]) for m in messages if m["role"] == "tool"}


def test_the_agents_own_edit_survives_whole_and_every_call_keeps_its_result() -> None:
    original = _run()
    compacted = compact_history(original)
    assert validate(load(compacted)) is None
    assert [m for m in compacted if m["role"] != "tool"] == [m for m in original if m["role"] != "tool"]
    edit = json.loads(compacted[6]["tool_calls"][0]["function"]["arguments"])  # type: ignore[index]
    assert edit["new_str"] == NEW_STR
    assert sum(len(str(m["content"])) for m in compacted) < 0.5 * sum(len(str(m["content"])) for m in original)


def test_a_directory_listing_is_never_summarised_as_an_error() -> None:
    shortened = _results(compact_history(_run(), caution=0.0))["call_1"]
    assert shortened.startswith(HEADER)  # a newer listing holds all but one of its lines
    kept = [line for line in shortened.split("\n")[1:] if line != MARK]
    assert kept == ["-rw-r--r-- 1 root root 2880 Apr 30 09:56 invalid test1.fits"]  # verbatim, nothing added
    assert "error:" not in shortened.lower() and "saw:" not in shortened


def test_line_numbers_never_stand_for_a_view() -> None:
    # an old view: what stays of it is whole lines (the one with an id), never its numbers alone
    shortened = _results(compact_history(_run(), caution=0.0))["call_2"]
    kept = [line for line in shortened.split("\n")[1:] if line != MARK]
    assert kept == [line for line in VIEW.split("\n") if "weighted_total_v2" in line]
    assert shortened.split("\n")[1:] == [MARK, kept[0], MARK]
    assert shortened.split("\n")[0] == f"{HEADER} call_2]"  # the header names the full text, no count


def test_the_full_text_of_a_shortened_result_is_one_lookup_away() -> None:
    archive: dict[str, str] = {}
    compacted = compact_history(_run(), archive=archive)
    for call_id, text in _results(compacted).items():
        if text.startswith(HEADER):
            assert text.split("\n", 1)[0] == f"{HEADER} {call_id}]"
            assert archive[call_id] == _results(_run())[call_id]
            assert resolve(archive, call_id) == archive[call_id]
    assert archive


def test_anthropic_messages_keep_their_blocks_and_pairing() -> None:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix the padding."}]
    prose = "\n".join("This paragraph of the guide explains the layout in plain words." for _ in range(30))
    for number, text in ((1, prose), (2, LISTING), (3, "done")):
        use = {"type": "tool_use", "id": f"toolu_{number}", "name": "bash", "input": {"command": f"step {number}"}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Next."}, use]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": text}
        messages.append({"role": "user", "content": [result, {"type": "text", "text": f"user note {number}"}]})
    compacted = compact_history(messages, caution=0.0)
    assert validate(load(compacted, "anthropic")) is None
    assert [m for m in compacted if m["role"] == "assistant"] == [m for m in messages if m["role"] == "assistant"]
    first = compacted[2]["content"]
    assert isinstance(first, list) and first[1] == {"type": "text", "text": "user note 1"}
    assert str(first[0]["content"]).startswith(HEADER)


def _strings(text: str) -> set[str]:
    """What a turn may copy from a result: names with `_`, `.`, `/`, a digit or an inner capital, numbers."""
    out = set()
    for token in re.findall(r"[\w./:-]+", text):
        token = token.strip("./:-")
        if re.fullmatch(r"\d{3,}", token) or (
            len(token) >= 4 and re.search(r"[_./\d]|[a-z][A-Z]", token) and re.search(r"[A-Za-z]", token)
        ):
            out.add(token)
    return out


def _lost(
    run: list[dict[str, object]], shorten: Callable[[list[dict[str, object]]], list[dict[str, object]]]
) -> tuple[list[str], int, int]:
    """Replay `run` in a closed loop, shortening every 2 turns: the strings a turn writes that first appeared in
    a tool result and that what the model is sent no longer holds; how many were checked; results shortened."""
    turns = [t for t, m in enumerate(run) if m["role"] == "assistant" and t > 0]
    sent: list[dict[str, object]] = []
    lost: list[str] = []
    used = shortened = 0
    for number, t in enumerate(turns, start=1):
        sent = sent + run[len(sent) : t] if sent else run[:t]
        if number % 2 == 0:
            sent = shorten(sent)
        shortened = max(shortened, sum(str(m.get("content", "")).startswith(HEADER) for m in sent))
        text = json.dumps(sent, ensure_ascii=False).replace("\\n", "\n").replace('\\"', '"')
        action = str(run[t].get("content") or "") + json.dumps(run[t].get("tool_calls") or [])
        earlier = [str(m.get("content") or "") + json.dumps(m.get("tool_calls") or []) for m in run[:t]]
        for string in _strings(action.replace("\\n", "\n")):
            first = next((i for i, body in enumerate(earlier) if string in body), None)
            if first is not None and run[first]["role"] == "tool":
                used += 1
                if string not in text:
                    lost.append(f"turn {t}: {string}")
    return lost, used, shortened


def _mask(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """What agent frameworks ship: every tool result but the last replaced by a placeholder."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "tool"), default=len(messages))
    return [{**m, "content": "[masked]"} if m["role"] == "tool" and i < last else m for i, m in enumerate(messages)]


@pytest.mark.parametrize("name", ["pydicom__pydicom-1458.jsonl", "airline_task033_trial0.jsonl"])
def test_a_later_turns_identifiers_are_in_the_compacted_history_on_a_recorded_run(name: str) -> None:
    run = load_file((RUNS / name).read_text(encoding="utf-8")).dump()
    lost, used, shortened = _lost(run, compact_history)
    assert lost == [] and used >= 10 and shortened >= 3  # strings were reused and results were shortened
    if name.startswith("airline"):  # the check bites: masking all but the last result loses some
        assert _lost(run, _mask)[0]


@pytest.mark.anyio
async def test_sro_compact_shortens_old_results_and_keeps_the_calls(tmp_path: Path) -> None:
    original = _run()
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        result = await client.call_tool("sro_compact", {"messages": original})
        spans = await client.call_tool("sro_compact", {"messages": original, "mode": "spans"})
    assert not result.is_error and answer_record(result) is not None
    body = answer_record(result)
    assert body["tokens_after"] < body["tokens_before"] and validate(load(body["messages"])) is None
    edit = json.loads(body["messages"][6]["tool_calls"][0]["function"]["arguments"])
    assert edit["new_str"] == NEW_STR
    assert any(entry["committed"] for entry in body["plan"])
    assert not spans.is_error  # the span compactor is still there on request
