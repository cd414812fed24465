"""History compaction: valid pairing in both formats, protection, non-expansion, safe failure."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from flow import answer_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparseread_mcp.compaction import CompactionSettings, compact, load, load_file, validate
from sparseread_mcp.compaction.marks import salient
from sparseread_mcp.compaction.segments import Unit, segment
from sparseread_mcp.errors import IntentError

LOOSE = CompactionSettings(keep_last=2, tau=0.6, kappa=2, min_tokens=200)


def openai_run(steps: int, *, parallel: bool = False, reuse_last: bool = False) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent. SYSTEM-MARK"},
        {"role": "user", "content": "Fix the failing build. USER-MARK"},
    ]
    for i in range(steps):
        calls = [
            {
                "id": f"c{i}a",
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/mod{i}.py"})},
            }
        ]
        if parallel:
            calls.append(
                {
                    "id": f"c{i}b",
                    "type": "function",
                    "function": {"name": "grep", "arguments": json.dumps({"q": f"term{i}"})},
                }
            )
        messages.append({"role": "assistant", "content": f"Looking at module {i}.", "tool_calls": calls})
        for call in calls:
            body = "\n".join(f"line {k} of module {i}: value = compute(x, y)  # filler" for k in range(40))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": body})
    if reuse_last:
        messages.append(
            {
                "role": "assistant",
                "content": "Check TOKEN-4242 again.",
                "tool_calls": [
                    {
                        "id": "final",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"id": "TOKEN-4242"}'},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": "final", "content": "ok"})
    return messages


def anthropic_run(steps: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "user", "content": "Summarize the repo. USER-MARK"}]
    for i in range(steps):
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Reading file {i}."},
                    {"type": "tool_use", "id": f"t{i}a", "name": "read", "input": {"path": f"docs/p{i}.md"}},
                    {"type": "tool_use", "id": f"t{i}b", "name": "read", "input": {"path": f"docs/q{i}.md"}},
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"t{i}a", "content": "text " * 300},
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{i}b",
                        "content": [{"type": "text", "text": "more " * 300}],
                    },
                ],
            }
        )
    return messages


def test_openai_parallel_calls_stay_paired_and_history_shrinks() -> None:
    result = compact(load(openai_run(12, parallel=True)), settings=LOOSE)
    assert validate(result.transcript) is None
    assert result.tokens_after < result.tokens_before
    assert any(p.committed for p in result.plan)
    for unit in segment(load(openai_run(3, parallel=True))):
        if unit.kind == "interaction":
            assert len(unit.messages) == 3  # the call message and both of its results


def test_anthropic_tool_use_and_results_stay_paired() -> None:
    result = compact(load(anthropic_run(10)), settings=LOOSE)
    assert result.transcript.format == "anthropic"
    assert validate(result.transcript) is None
    assert result.tokens_after < result.tokens_before
    summary = next(m for m in result.transcript.messages if m.summary)
    assert summary.raw["content"][0]["type"] == "text"  # type: ignore[index]


def test_protected_messages_are_untouched() -> None:
    original = openai_run(12)
    result = compact(load(original), settings=LOOSE)
    out = result.transcript.dump()
    assert out[0] == original[0] and out[1] == original[1]
    assert out[-4:] == original[-4:]  # the latest two interactions (call + result each)


def test_a_string_a_later_call_reuses_survives_compaction() -> None:
    messages = openai_run(10, reuse_last=True)
    assert messages[5]["role"] == "tool"  # the result of step 1, compacted below
    messages[5]["content"] = "booking reference TOKEN-4242 confirmed\n" + str(messages[5]["content"])  # type: ignore[operator]
    result = compact(load(messages), settings=LOOSE)
    out = json.dumps(result.transcript.dump())
    assert "line 3 of module 1" not in out  # the observation was replaced ...
    assert out.count("TOKEN-4242") == 3  # ... and its summary keeps the id the later call reuses


def test_a_failing_summarizer_returns_the_previous_history() -> None:
    class Broken:
        def summarize(self, span_id: str, units: Sequence[Unit]) -> str:
            raise RuntimeError("model unavailable")

    original = openai_run(12)
    result = compact(load(original), settings=LOOSE, summarizer=Broken())
    assert result.transcript.dump() == original
    assert result.plan and all(not p.committed and "failed" in p.reason for p in result.plan)


def test_summaries_that_are_not_shorter_are_not_committed() -> None:
    class Verbose:
        def summarize(self, span_id: str, units: Sequence[Unit]) -> str:
            return "x " * 100_000

    original = openai_run(12)
    result = compact(load(original), settings=LOOSE, summarizer=Verbose())
    assert result.transcript.dump() == original and result.tokens_after == result.tokens_before


def test_audit_log_keeps_the_originals(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    original = openai_run(12)
    result = compact(load(original), settings=LOOSE, audit=audit)
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [e["span"] for e in entries] == [p.span for p in result.plan if p.committed]
    assert all(m in original for e in entries for m in e["messages"])


def test_invalid_transcripts_are_refused_with_the_reason() -> None:
    broken = openai_run(3)[:-1]  # the last call loses its result
    with pytest.raises(IntentError, match="calls without results"):
        compact(load(broken))
    with pytest.raises(IntentError, match="no 'role'"):
        load([{"content": "hi"}])


def test_real_trajectories_compact_validly(trajectories: Path) -> None:
    for path in sorted(trajectories.glob("*/*.jsonl"))[:8]:
        transcript = load_file(path.read_text())
        result = compact(transcript)
        assert validate(result.transcript) is None
        assert result.tokens_after <= result.tokens_before


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "system", "content": "sys"}]
    for i in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "call", "call", "parallel", "text"]))
        size = draw(st.integers(1, 400))
        if kind == "user":
            messages.append({"role": "user", "content": f"question {i} " * draw(st.integers(1, 5))})
        elif kind == "text":
            messages.append({"role": "assistant", "content": f"answer {i}"})
        else:
            ids = [f"id{i}a"] + ([f"id{i}b"] if kind == "parallel" else [])
            args = draw(st.sampled_from(['{"path": "a.py"}', '{"q": "ERR-9911"}', "{}"]))
            messages.append(
                {
                    "role": "assistant",
                    "content": draw(st.sampled_from(["", "see ERR-9911"])),
                    "tool_calls": [
                        {
                            "id": c,
                            "type": "function",
                            "function": {"name": draw(st.sampled_from(["read", "run"])), "arguments": args},
                        }
                        for c in ids
                    ],
                }
            )
            for c in ids:
                body = draw(st.sampled_from(["ok ", "Error: ERR-9911 failed ", "value 123456 "])) * size
                messages.append({"role": "tool", "tool_call_id": c, "content": body})
    return messages


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=transcripts(), keep=st.integers(0, 4), kappa=st.integers(0, 4), min_tokens=st.sampled_from([0, 200, 1000])
)
def test_any_output_is_a_valid_transcript_no_longer_than_its_input(
    messages: list[dict[str, object]], keep: int, kappa: int, min_tokens: int
) -> None:
    options = CompactionSettings(keep_last=keep, kappa=kappa, min_tokens=min_tokens)
    result = compact(load(messages), settings=options)
    assert validate(result.transcript) is None
    assert result.tokens_after <= result.tokens_before
    out = result.transcript.dump()
    assert [m for m in out if m.get("role") in ("system", "user")] == [
        m for m in messages if m.get("role") in ("system", "user")
    ]


@pytest.mark.anyio
async def test_sro_compact_over_mcp(tmp_path: Path) -> None:
    from mcp import Client

    from sparseread_mcp import Settings
    from sparseread_mcp.serve.server import create_server

    original = openai_run(12)
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        result = await client.call_tool(
            "sro_compact", {"messages": original, "min_interactions": 2, "min_tokens": 200, "keep_last": 2}
        )
    assert not result.is_error and answer_record(result) is not None
    body = answer_record(result)
    assert body["tokens_after"] < body["tokens_before"] and body["format"] == "openai"
    assert validate(load(body["messages"])) is None
    assert any(span["committed"] for span in body["plan"])


def test_compact_from_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    source = tmp_path / "run.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in openai_run(14)))
    out, audit = tmp_path / "out.json", tmp_path / "audit.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sparseread_mcp",
            "compact",
            str(source),
            "--out",
            str(out),
            "--audit",
            str(audit),
            "--keep-last",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "replaced" in done.stdout and "tokens:" in done.stdout
    assert validate(load(json.loads(out.read_text()))) is None
    assert audit.read_text().strip()


def weak_labels(trajectories: Path) -> list[str]:
    """Label each interaction of the real runs: 1 when nothing any later action uses comes from it."""
    from sparseread_mcp.compaction.router import salient

    lines = []
    for path in sorted(trajectories.glob("*/*.jsonl")):
        messages = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        units = segment(load(messages))
        for unit in units:
            if unit.kind != "interaction":
                continue
            later = " ".join(u.arguments + " " + u.reasoning for u in units if u.index > unit.index)
            used = any(mark in later for mark in salient(unit.observation))
            lines.append(json.dumps({"messages": messages, "unit": unit.index, "label": 0 if used else 1}))
    return lines


def test_a_learned_router_trains_for_precision_and_compacts_validly(trajectories: Path, tmp_path: Path) -> None:
    from sparseread_mcp.compaction import LearnedRouter, train
    from sparseread_mcp.compaction.learned import examples_from_jsonl

    examples = examples_from_jsonl("\n".join(weak_labels(trajectories)))
    assert len(examples) > 100
    router = train(examples)
    assert router.precision >= 0.9 and 0.0 < router.threshold < 1.0
    router.save(tmp_path / "router.json")
    loaded = LearnedRouter.load(tmp_path / "router.json")
    assert loaded == router
    for path in sorted(trajectories.glob("*/*.jsonl"))[:6]:
        result = compact(load_file(path.read_text()), router=loaded)
        assert validate(result.transcript) is None and result.tokens_after <= result.tokens_before


def test_rederivable_only_while_the_pointer_still_verifies() -> None:
    from sparseread_mcp.compaction import DefaultRouter

    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    pointer = "docs/a.md@sha256:0123456789ab#L3-L9"
    messages.append(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "r1",
                    "type": "function",
                    "function": {"name": "sro_read", "arguments": '{"target": "docs/a.md"}'},
                }
            ],
        }
    )
    messages.append({"role": "tool", "tool_call_id": "r1", "content": f'{{"pointer": "{pointer}", "text": "x"}}'})
    units = segment(load(messages))
    holds = DefaultRouter(verify=lambda p: p == pointer).score(units[1], units)
    broken = DefaultRouter(verify=lambda p: False).score(units[1], units)
    assert holds > broken


def coding_run(files: int = 6, rounds: int = 3) -> list[dict[str, object]]:
    """A coding agent's run: it views files by path again and again, and its later edits name identifiers,
    paths and line numbers that appeared only in earlier views."""
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent with a file editor and a shell."},
        {"role": "user", "content": "Make the retry limit configurable."},
    ]
    number = 0

    def step(text: str, name: str, arguments: dict[str, object], result: str) -> None:
        nonlocal number
        number += 1
        call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        messages.append({"role": "assistant", "content": text, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{number}", "content": result})

    def view(i: int) -> str:
        body = [f"     1\timport retry_v{i}", f"     2\tfrom pkg.mod{i} import Handler{i}x"]
        body += [f"{k:>6}\t    value_{k} = compute(value_{k - 1}, step)  # plain code line {k}" for k in range(3, 80)]
        body.append(f"{80:>6}\t    return Handler{i}x(limit=RETRY_{i}00, code=E{i}404)")
        return f"Here's the result of running `cat -n` on /repo/pkg/mod{i}.py:\n" + "\n".join(body)

    for r in range(rounds):
        for i in range(files):
            step(
                f"Look at module {i}.",
                "str_replace_editor",
                {"command": "view", "path": f"/repo/pkg/mod{i}.py"},
                view(i),
            )
        step(
            "Edit the handler.",
            "str_replace_editor",
            {
                "command": "str_replace",
                "path": f"/repo/pkg/mod{r}.py",
                "old_str": f"return Handler{r}x(limit=RETRY_{r}00, code=E{r}404)",
                "new_str": f"return Handler{r}x(limit=settings.retry_v{r}, code=E{r}404)",
            },
            f"The file /repo/pkg/mod{r}.py has been edited.",
        )
    return messages


def later_uses(messages: list[dict[str, object]]) -> list[tuple[int, set[str]]]:
    """For each assistant action: the salient strings it reuses from earlier tool results."""
    out = []
    for t, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        earlier = " ".join(str(m["content"]) for m in messages[:t] if m["role"] == "tool")
        action = " ".join(str(c["function"]["arguments"]) for c in message.get("tool_calls", [])) + str(
            message["content"]
        )  # type: ignore[attr-defined, index]
        out.append((t, {s for s in salient(action) if s in earlier}))
    return out


def test_a_coding_run_whose_views_recur_by_path_is_compacted_and_keeps_every_later_used_string() -> None:
    messages = coding_run()
    uses = later_uses(messages)
    assert any(used for _, used in uses)  # the run does reuse strings that only earlier views held
    # Replayed: at every fourth action the history so far goes through compaction, new messages appended.
    effective: list[dict[str, object]] = []
    consumed = 0
    compacted = 0
    for count, (t, used) in enumerate(uses, start=1):
        effective += messages[consumed:t]
        consumed = t
        if count % 4 == 0:
            result = compact(load(effective))  # the default settings and router
            assert validate(result.transcript) is None and result.tokens_after <= result.tokens_before
            compacted += result.tokens_after < result.tokens_before
            effective = result.transcript.dump()
        text = json.dumps(effective)
        assert all(s in text for s in used), (t, sorted(s for s in used if s not in text))
    assert compacted >= 3
    final = compact(load(messages))
    assert final.tokens_after < 0.5 * final.tokens_before
    kept = json.dumps(final.transcript.dump())
    assert all(s in kept for _, used in uses for s in used)
    # A view is kept as its call: the path and the command that re-derive it.
    assert "(command=view, path=/repo/pkg/mod1.py)" in kept


def test_an_observation_whose_reused_string_its_summary_drops_keeps_its_raw_text() -> None:
    from sparseread_mcp.compaction import DefaultRouter
    from sparseread_mcp.compaction.summarize import unit_lines

    crowded = " ".join(f"ITEM{k:05d}x" for k in range(2000))  # more marks than a summary lists
    messages = openai_run(8)
    messages[3]["content"] = crowded
    summary = "\n".join(unit_lines(segment(load(messages))[2]))
    dropped = next(m for m in sorted(salient(crowded)) if m not in summary)
    kept = next(m for m in sorted(salient(crowded)) if m in summary)
    for mark, replaceable in ((kept, True), (dropped, False)):
        run = openai_run(8)
        run[3]["content"] = crowded
        run[-2]["content"] = f"Now use {mark}."  # a later action reuses one string of that observation
        units = segment(load(run))
        score = DefaultRouter().score(units[2], units)
        assert (score >= 0.6) is replaceable, (mark, score)
        out = json.dumps(compact(load(run), settings=LOOSE).transcript.dump())
        assert mark in out


def test_leave_one_family_out_training_is_reproducible_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sparseread_mcp.cli import main
    from sparseread_mcp.compaction import LearnedRouter

    runs = {
        "alpha": [coding_run(4, 2), coding_run(3, 3)],
        "beta": [coding_run(5, 2), openai_run(9)],
        "gamma": [openai_run(8, reuse_last=True)],
    }
    for family, transcripts in runs.items():
        (tmp_path / family).mkdir()
        (tmp_path / family / "manifest.json").write_text("{}")  # not a run
        for number, messages in enumerate(transcripts):
            (tmp_path / family / f"run{number}.jsonl").write_text("\n".join(json.dumps(m) for m in messages))
    saved = []
    for attempt in range(2):
        out = tmp_path / f"router{attempt}.json"
        code = main(["compact", "train", "--runs", str(tmp_path), "--leave-out", "gamma", "--out", str(out)])
        assert code == 0
        assert "trained on families: alpha, beta; held out: gamma" in capsys.readouterr().out
        saved.append(out.read_text())
    assert saved[0] == saved[1]  # the same data gives the same router
    router = LearnedRouter.load(tmp_path / "router0.json")
    assert router.families == ("alpha", "beta")
    # Scored on the family it never saw: a valid, not longer history.
    held_out = load(runs["gamma"][0])
    result = compact(held_out, router=router, settings=LOOSE)
    assert validate(result.transcript) is None and result.tokens_after <= result.tokens_before
    # A family that is not there is named, not silently ignored.
    assert main(["compact", "train", "--runs", str(tmp_path), "--leave-out", "delta", "--out", str(out)]) != 0
    assert "delta" in capsys.readouterr().err


def test_a_summarized_read_keeps_its_call_and_its_evidence_pointers() -> None:
    from sparseread_mcp.compaction.summarize import unit_lines

    pointer = "docs/guide.md@sha256:0123456789ab#L12-L18"
    messages: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    call = {
        "id": "r1",
        "type": "function",
        "function": {"name": "sro_read", "arguments": '{"target": "docs/guide.md"}'},
    }
    messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
    body = json.dumps({"items": [{"pointer": pointer, "text": "plain words " * 200}]})
    messages.append({"role": "tool", "tool_call_id": "r1", "content": body})
    lines = "\n".join(unit_lines(segment(load(messages))[1]))
    assert f"re-read: {pointer}" in lines and "sro_read(target=docs/guide.md)" in lines
    assert "plain words plain words" not in lines
    # Protocol 6 says the file once, as `source`, and the pointers as `#anchor`: the summary names them whole.
    source, anchor = pointer.split("#")
    items = [{"pointer": f"#{anchor}", "text": "plain words " * 100}, {"pointer": "#L30-L31", "text": "more"}]
    messages[-1]["content"] = json.dumps({"source": source, "items": items}, separators=(",", ":"))
    lines = "\n".join(unit_lines(segment(load(messages))[1]))
    assert f"re-read: {pointer} {source}#L30-L31" in lines
