"""Hostile transcripts for compaction (issue 12, item 6): the user's words survive, every pattern runs in
linear time under the call's deadline, malformed shapes get typed errors, and no input escapes that."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from flow import answer_record
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sparseread_mcp import Settings
from sparseread_mcp.compaction import CompactionSettings, compact_messages, load, validate
from sparseread_mcp.compaction.marks import _RUN, identifiers, paths
from sparseread_mcp.compaction.segments import Unit
from sparseread_mcp.compaction.transcript import MAX_CHARS, MAX_DEPTH, MAX_MESSAGES, MAX_NODES
from sparseread_mcp.deadline import Deadline, TimedOut, deadline
from sparseread_mcp.errors import IntentError, SparsereadError

LOOSE = CompactionSettings(keep_last=1, tau=0.6, kappa=1, min_tokens=100)
ARGS = {"min_interactions": 1, "min_tokens": 100, "keep_last": 1}
INSTRUCTION = "USER-SAYS: stop reading docs and write the failing test first"


def _anthropic(steps: int, *, mixed: dict[int, list[dict[str, object]]]) -> list[dict[str, object]]:
    """A Claude-style run; the user message of step i also holds `mixed[i]` after its tool_result."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "Summarize the repo."}]
    for i in range(steps):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading file {i}."},
                    {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"docs/p{i}.md"}},
                ],
            }
        )
        result: dict[str, object] = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "text " * 200}
        messages.append({"role": "user", "content": [result, *mixed.get(i, [])]})
    return messages


def _openai(steps: int, *, user_after: set[int]) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Fix the build."}]
    for i in range(steps):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": f'{{"n": {i}}}'}}
        messages.append({"role": "assistant", "content": f"Step {i}.", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "text " * 200})
        if i in user_after:
            messages.append({"role": "user", "content": f"{INSTRUCTION} ({i})"})
    return messages


def user_blocks(messages: Sequence[dict[str, object]]) -> list[str]:
    """Everything the user said, in order: string contents and every block that is not a tool_result."""
    out = []
    for message in messages:
        if message.get("role") not in ("user", "system"):
            continue
        content = message.get("content")
        if isinstance(content, list):
            out += [json.dumps(b, sort_keys=True) for b in content if not _is_result(b)]
        else:
            out.append(json.dumps(content))
    return out


def _is_result(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


# 1. The user's words next to tool results are never dropped.


@pytest.mark.anyio
async def test_user_text_next_to_a_tool_result_survives_sro_compact(tmp_path: Path) -> None:
    from mcp import Client

    from sparseread_mcp.serve.server import create_server

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    extra = {3: [{"type": "text", "text": INSTRUCTION}], 6: [image, {"type": "text", "text": "and this one"}]}
    original = _anthropic(12, mixed=extra)
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        with anyio.fail_after(60):
            result = await client.call_tool("sro_compact", {"messages": original, **ARGS})
    assert not result.is_error and answer_record(result) is not None
    body = answer_record(result)
    assert any(span["committed"] for span in body["plan"]), body["plan"]  # the mixed messages were compacted
    assert body["tokens_after"] < body["tokens_before"]
    assert user_blocks(body["messages"]) == user_blocks(original)
    assert validate(load(body["messages"])) is None


def test_user_text_stays_in_place_between_summaries() -> None:
    extra = {2: [{"type": "text", "text": INSTRUCTION}]}
    original = _anthropic(10, mixed=extra)
    out = compact_messages(original, settings=LOOSE).messages
    summaries = [i for i, m in enumerate(out) if "compacted span" in json.dumps(m)]
    kept = next(i for i, m in enumerate(out) if INSTRUCTION in json.dumps(m))
    # Steps 0-2 are summarized before the instruction, the later ones after it: the order holds.
    assert summaries and summaries[0] < kept < summaries[-1]
    assert out[kept] == {"role": "user", "content": [{"type": "text", "text": INSTRUCTION}]}


def test_user_text_that_names_a_result_keeps_that_interaction() -> None:
    body = "config value QX-7731 is stale\n" + "text " * 200
    original = _anthropic(10, mixed={2: [{"type": "text", "text": "why is QX-7731 stale?"}]})
    original[6]["content"][0]["content"] = body  # type: ignore[index]
    out = compact_messages(original, settings=LOOSE).messages
    assert "config value QX-7731 is stale" in json.dumps(out)


def test_openai_user_message_after_tool_messages_survives() -> None:
    original = _openai(12, user_after={2, 7})
    result = compact_messages(original, settings=LOOSE)
    assert any(p.committed for p in result.plan)
    assert user_blocks(result.messages) == user_blocks(original)
    assert validate(load(result.messages)) is None


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_a_forced_format_never_drops_user_blocks(fmt: str) -> None:
    for original in (_anthropic(8, mixed={1: [{"type": "text", "text": INSTRUCTION}]}), _openai(8, user_after={1})):
        result = compact_messages(original, fmt=fmt, settings=LOOSE)  # type: ignore[arg-type]
        assert user_blocks(result.messages) == user_blocks(original)


@pytest.mark.parametrize("shape", ["array", "json lines", "object"])
def test_every_file_shape_keeps_user_blocks(shape: str) -> None:
    from sparseread_mcp.compaction import compact, load_file

    original = _anthropic(10, mixed={4: [{"type": "text", "text": INSTRUCTION}]})
    text = {
        "array": json.dumps(original),
        "json lines": "\n".join(json.dumps(m) for m in original),
        "object": json.dumps({"messages": original}),
    }[shape]
    result = compact(load_file(text), settings=LOOSE)
    assert any(p.committed for p in result.plan)
    assert user_blocks(result.transcript.dump()) == user_blocks(original)


# 2. Linear time, under the deadline.

HOSTILE = [
    ("", "a-", 100_000),
    ("", "a", 200_000),
    ("", "a/", 100_000),
    ("", "./", 100_000),
    ("", "a.", 100_000),
    ("", "1.", 100_000),
    ("", "1", 200_000),
    ("", "a1-", 66_667),
    ("", "-", 200_000),
    ("", "aaaaaaa@", 25_000),
    ("", "a/b.", 50_000),
    (".", " ", 200_000),
    ("@abcdef0#", "x", 200_000),
    ("", "é", 200_000),
    ("", "error ", 33_333),
    ('"source":"', "a", 200_000),
    ('"source":"a@abcdef0"', '["#a', 50_000),
]
#: Each runs every string above in a child process: the old patterns took minutes on one (244 s on
#: 120 KB of `a-a-a-`), so a hang shows as the child's timeout, never as a slow assertion.
PATTERN_USERS = {
    "salient": "from sparseread_mcp.compaction.marks import salient as f",
    "error_lines": "from sparseread_mcp.compaction.marks import error_lines as f",
    "first_sentence": "from sparseread_mcp.compaction.summarize import _first_sentence as f",
    "source_pointers": "from sparseread_mcp.wire_source import source_pointers as f",
    "quoted_lines": "from sparseread_mcp.compaction.learned import _action_lines\nf = lambda s: _action_lines(s, [s])",
    "summary": "from sparseread_mcp.compaction.segments import Unit\n"
    "from sparseread_mcp.compaction.summarize import ExtractiveSummarizer\n"
    "f = lambda s: ExtractiveSummarizer().summarize('S1', [Unit(index=0, messages=(0,), kind='interaction', "
    "arguments=s, observation=s, reasoning=s)])",
}


@pytest.mark.parametrize("user", sorted(PATTERN_USERS))
def test_every_pattern_is_linear_on_hostile_text(user: str) -> None:
    script = f"{PATTERN_USERS[user]}\nfor head, unit, times in {HOSTILE!r}:\n    f(head + unit * times)\nprint('done')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "done" in done.stdout, done.stderr[-2000:]


ASCII_TEXT = st.lists(
    st.sampled_from(["a", "b1", "src", "x9z", "-", ".", "/", " ", "py", "json", "md", "_", "..", "//", "./"]),
    max_size=14,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=ASCII_TEXT)
def test_marks_are_the_ones_the_old_patterns_found(text: str) -> None:
    """The linear scanners answer as the old regexes did (on ASCII; they differ next to non-ASCII letters)."""
    old_identifier = re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{5,}\b")
    old_path = re.compile(
        r"(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}|\b[\w-]+\.(?:py|js|ts|go|rs|java|c|h|md|json|ya?ml|toml|txt|csv|log)\b"
    )
    runs = [r.group() for r in _RUN.finditer(text)]
    assert {m for r in runs for m in identifiers(r)} == set(old_identifier.findall(text))
    assert {m for r in runs for m in paths(r)} == set(old_path.findall(text))


@pytest.mark.anyio
async def test_sro_compact_of_a_hostile_tool_result_answers_in_time(tmp_path: Path) -> None:
    from mcp import Client

    from sparseread_mcp.serve.server import create_server

    original = _openai(6, user_after=set())
    original[2]["content"] = "a-" * 100_000  # the 244 s attack, larger
    # The call limit is a hang guard, not a stopwatch: about 1 s of work here, 244 s and more when the
    # patterns were quadratic, so 30 s tells the two apart on a machine whose cores are busy elsewhere.
    async with Client(create_server(Settings(roots=(tmp_path,), call_timeout_seconds=30))) as client:
        with anyio.fail_after(120):
            result = await client.call_tool("sro_compact", {"messages": original, **ARGS})
    assert not result.is_error, result.content
    assert answer_record(result) is not None
    assert answer_record(result)["tokens_after"] <= answer_record(result)["tokens_before"]


def _heavy() -> list[dict[str, object]]:
    """Many distinct marks, each looked up in megabytes of later arguments: far past a 2 s limit."""
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    call = {"id": "a", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
    messages.append({"role": "tool", "tool_call_id": "a", "content": " ".join(f"qz{k:07d}" for k in range(150_000))})
    for i in range(3):
        later = {"id": f"b{i}", "type": "function", "function": {"name": "run", "arguments": "qy0000000 " * 100_000}}
        messages.append({"role": "assistant", "content": "", "tool_calls": [later]})
        messages.append({"role": "tool", "tool_call_id": f"b{i}", "content": "ok"})
    return messages


@pytest.mark.anyio
async def test_a_huge_transcript_stops_at_the_call_limit_with_a_typed_error(tmp_path: Path) -> None:
    from mcp import Client

    from sparseread_mcp.serve.server import create_server

    async with Client(create_server(Settings(roots=(tmp_path,), call_timeout_seconds=2))) as client:
        with anyio.fail_after(120):
            result = await client.call_tool("sro_compact", {"messages": _heavy(), "keep_last": 0})
            assert result.is_error
            assert "limit" in str(result.content) and "internal error" not in str(result.content)
            again = await client.call_tool("sro_compact", {"messages": _openai(3, user_after=set())})
    assert not again.is_error  # the server answers the next call


class _CancelAfter:
    """A router (or summarizer) that cancels the call after its first answer, as a client would."""

    name = "cancelling"

    def __init__(self, limit: Deadline) -> None:
        self.limit = limit
        self.calls = 0

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float:
        self.calls += 1
        self.limit.cancelled.set()
        return 1.0

    def summarize(self, span_id: str, units: Sequence[Unit]) -> str:
        self.calls += 1
        self.limit.cancelled.set()
        return "short"


@pytest.mark.parametrize("stage", ["router", "summarizer"])
def test_the_loops_stop_at_the_deadline_and_the_history_is_intact(stage: str, tmp_path: Path) -> None:
    from sparseread_mcp.compaction import compact

    original = _openai(12, user_after={3})
    sent = copy.deepcopy(original)
    audit = tmp_path / "audit.jsonl"
    with deadline(600) as limit:
        hook = _CancelAfter(limit)
        options = {"router": hook} if stage == "router" else {"summarizer": hook}
        with pytest.raises(TimedOut):
            compact(load(original), settings=LOOSE, audit=audit, **options)  # type: ignore[arg-type]
    assert hook.calls == 1  # stopped at the next checkpoint, not at the end
    assert original == sent and not audit.exists()


# 3. Malformed shapes: typed errors that name the message and the field.

_CALL = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
MALFORMED: list[tuple[str, object, str]] = [
    ("not a list", {"role": "user", "content": "hi"}, "JSON array of message objects"),
    ("a message that is a string", ["hello"], "message 0 is a string"),
    ("role that is a number", [{"role": 7, "content": "x"}], "message 0 has a 'role' that is a number"),
    ("block without type", [{"role": "user", "content": [{"text": "hi"}]}], "item 0 of 'content' has no 'type'"),
    ("block that is a list", [{"role": "user", "content": [["x"]]}], "item 0 of 'content' is an array"),
    ("content that is a number", [{"role": "user", "content": 5}], "'content' is a number"),
    ("content that is an object", [{"role": "user", "content": {"a": 1}}], "'content' is an object"),
    ("tool_calls not a list", [{"role": "assistant", "tool_calls": "abc"}], "'tool_calls' is a string"),
    ("tool call without id", [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}], "no 'id'"),
    ("function not an object", [{"role": "assistant", "tool_calls": [{"id": "c", "function": 3}]}], "'function'"),
    (
        "arguments not a string",
        [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]}],
        "send the arguments as a JSON string",
    ),
    (
        "tool message without its call id",
        [{"role": "assistant", "tool_calls": [_CALL]}, {"role": "tool", "content": "ok"}],
        "message 1 (tool) has no 'tool_call_id'",
    ),
    (
        "tool_result without tool_use_id",
        [{"role": "user", "content": [{"type": "tool_result", "content": "x"}, {"type": "tool_use"}]}],
        "no 'tool_use_id'",
    ),
    (
        "tool_use with a numeric id",
        [{"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "f", "input": {}}]}],
        "as 'id'; send a string",
    ),
    (
        "tool_result without a matching tool_use",
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "x"}]}],
        "answers call 'ghost', which no earlier message opened",
    ),
    (
        "tool message without a matching call",
        [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "ghost" * 50, "content": "x"}],
        "which no earlier message opened",
    ),
    ("a call never answered", [{"role": "assistant", "tool_calls": [_CALL]}], "calls without results: 'c1'"),
    ("a repeated call id", [{"role": "assistant", "tool_calls": [_CALL, _CALL]}], "repeats call id 'c1'"),
    ("nested junk", [{"role": "user", "content": "x", "meta": {"a": [[[[{"b": [[[]]]}]]]] * 3}}], ""),
    (
        "a number too long to write",
        [{"role": "user", "content": "x", "meta": 10**5000}],
        "send such a value as a string",
    ),
    ("a role that is a huge number", [{"role": 10**5000, "content": "x"}], "send such a value as a string"),
    ("a value that is not JSON", [{"role": "user", "content": "x", "meta": {1, 2}}], "send JSON values only"),
]


def _nested(depth: int) -> object:
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("case", "messages", "says"), MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_transcripts_get_typed_errors(case: str, messages: object, says: str) -> None:
    if not says:  # valid, however odd: it compacts
        assert validate(load(messages)) is None
        return
    with pytest.raises(IntentError) as caught:
        compact_messages(messages)  # type: ignore[arg-type]
    message = str(caught.value)
    assert says in message and len(message) < 400, message


def test_deep_nesting_and_huge_counts_are_refused_before_any_walk() -> None:
    deep = [{"role": "user", "content": [{"type": "text", "text": "x", "meta": _nested(100_000)}]}]
    with pytest.raises(IntentError, match=f"over {MAX_DEPTH} levels deep"):
        load(deep)
    with pytest.raises(IntentError, match="messages, over the limit"):
        load([{"role": "user", "content": "x"}] * (MAX_MESSAGES + 1))
    with pytest.raises(IntentError, match="characters"):
        load([{"role": "user", "content": "x" * (MAX_CHARS + 1)}])
    with pytest.raises(IntentError, match="JSON values"):
        load([{"role": "user", "content": "x", "meta": [0] * (MAX_NODES + 1)}])
    with pytest.raises(IntentError, match=r"nests deeper|not JSON"):
        from sparseread_mcp.compaction import load_file

        load_file("[" * 100_000 + "]" * 100_000)


@pytest.mark.anyio
async def test_sro_compact_answers_malformed_shapes_with_typed_errors(tmp_path: Path) -> None:
    from mcp import Client

    from sparseread_mcp.serve.server import create_server

    cases = [m for _, m, says in MALFORMED if says and isinstance(m, list) and "JSON values" not in says]
    cases.append([{"role": "user", "content": _nested(MAX_DEPTH + 5)}])
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        with anyio.fail_after(60):
            for messages in cases:
                result = await client.call_tool("sro_compact", {"messages": messages})
                text = str(result.content)
                # Ours say what to send; the argument check (a message that is not an object) names the field.
                assert result.is_error and "internal error" not in text, text
                assert "send" in text or "sro_compact: `messages[" in text, text


# 4. Fuzz: random transcripts of both shapes.

_RUNS = st.sampled_from(["", "a-" * 300, "a/" * 300, "./" * 200, "1." * 300, "ERR-4242 failed", "src/x.py", "é"])
_TEXT = st.builds(lambda a, b: a + b, st.text(max_size=30), _RUNS)
_IDS = st.sampled_from(["t1", "t2", "t3", "t4", "x"])
_FILLER = " tool output" * 30  # long enough that a summary is shorter: spans get committed
_ROLES = st.sampled_from(["user", "assistant", "system", "tool", "developer", 3, None])


def _block(kind: str, text: str, tool_id: str) -> object:
    return {
        "text": {"type": "text", "text": text},
        "image": {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
        "tool_use": {"type": "tool_use", "id": tool_id, "name": "read", "input": {"q": text}},
        "tool_result": {"type": "tool_result", "tool_use_id": tool_id, "content": text},
        "nested_result": {"type": "tool_result", "tool_use_id": tool_id, "content": [{"type": "text", "text": text}]},
        "untyped": {"text": text},
        "junk": [text, {"a": [1, None]}],
        "number": 42,
    }[kind]


_BLOCK = st.builds(
    _block,
    st.sampled_from(
        [
            "text",
            "text",
            "image",
            "tool_use",
            "tool_result",
            "tool_result",
            "nested_result",
            "untyped",
            "junk",
            "number",
        ]
    ),
    _TEXT,
    _IDS,
)


@st.composite
def anthropic_messages(draw: st.DrawFn) -> list[object]:
    """A valid Claude-style run, then a few random edits (roles, blocks, ids) that may break it."""
    messages: list[object] = [{"role": "user", "content": draw(_TEXT)}]
    for i in range(draw(st.integers(0, 8))):
        ids = [f"u{i}{k}" for k in range(draw(st.integers(1, 2)))]
        uses = [_block("tool_use", draw(_TEXT), tool_id) for tool_id in ids]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": draw(_TEXT)}, *uses]})
        kinds = st.sampled_from(["tool_result", "nested_result"])
        results = [_block(draw(kinds), draw(_TEXT) + _FILLER, t) for t in ids]
        extra = draw(st.lists(st.sampled_from(["text", "image"]), max_size=2))
        results += [_block(kind, draw(_TEXT), "") for kind in extra]
        messages.append({"role": "user", "content": results})
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, len(messages)))
        messages.insert(where, {"role": draw(_ROLES), "content": draw(st.lists(_BLOCK, max_size=3) | _TEXT)})
    return messages


@st.composite
def openai_messages(draw: st.DrawFn) -> list[object]:
    messages: list[object] = [{"role": "system", "content": draw(_TEXT)}]
    for i in range(draw(st.integers(0, 8))):
        if draw(st.booleans()):
            messages.append({"role": "user", "content": draw(_TEXT)})
        ids = [f"c{i}{k}" for k in range(draw(st.integers(1, 2)))]
        calls = [{"id": c, "type": "function", "function": {"name": "run", "arguments": draw(_TEXT)}} for c in ids]
        messages.append({"role": "assistant", "content": draw(_TEXT | st.none()), "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c, "content": draw(_TEXT) + _FILLER} for c in ids]
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.integers(0, len(messages)))
        junk = draw(st.sampled_from([{"role": "tool", "tool_call_id": "c00"}, {"role": "user"}, {"content": "x"}]))
        messages.insert(where, {**junk, "content": draw(_TEXT | st.lists(_BLOCK, max_size=2))})
    return messages


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=anthropic_messages() | openai_messages(),
    fmt=st.sampled_from([None, None, "openai", "anthropic"]),
    keep=st.integers(0, 2),
    kappa=st.integers(0, 2),
    tau=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_fuzz_any_transcript_is_refused_with_a_typed_error_or_compacted_safely(
    messages: list[object], fmt: str | None, keep: int, kappa: int, tau: float
) -> None:
    sent = copy.deepcopy(messages)
    options = CompactionSettings(keep_last=keep, kappa=kappa, tau=tau, min_tokens=0)
    try:
        result = compact_messages(messages, fmt=fmt, settings=options)  # type: ignore[arg-type]
    except SparsereadError as exc:
        event(f"refused: {type(exc).__name__}")
        return
    finally:
        assert messages == sent  # the caller's history is never touched
    out = result.messages
    event("compacted" if result.tokens_after < result.tokens_before else "unchanged")
    assert validate(load(out, result.format)) is None
    assert result.tokens_after <= result.tokens_before and len(out) <= len(messages)
    assert user_blocks(out) == user_blocks(messages)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[" * 50_000,
        '{"label": 2}',
        '{"label": 1, "features": {"referenced": "x"}}',
        '{"label": 1, "features": [1, 2]}',
        '{"label": 0, "messages": [{"role": "user", "content": "hi"}], "unit": 7}',
        '{"label": 0, "messages": "nope", "unit": 0}',
    ],
)
def test_router_training_data_gets_typed_errors(line: str) -> None:
    from sparseread_mcp.compaction.learned import examples_from_jsonl

    with pytest.raises(IntentError, match="line 1"):
        examples_from_jsonl(line)
