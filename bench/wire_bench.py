"""What the protocol itself costs on the wire: tool schemas, and the frame of every action beyond its evidence.

Not a test. Run:  python -m bench.wire_bench [--data ../shared/data] [--docs 5] [--json out.json]
                  [--compare bench/results/wire_before.json]

One server per set over stdio (`python -m sparseread_mcp --root DOCS`, location fixed to BM25 so every set is
read the same way; `--location auto` measures the server's default), driven by the official client, as an
agent sees it. For each of `--docs` documents (the first question of each, a seeded sample) it calls, in one
reading session per document: `sro_preview` with the question as intent, `sro_read` scout, focus (goal),
collect (the question as one slot), refine, verify of the first pointer, verify of a claim (the gold answer)
and `sro_card`; then, in a new session, a focus whose needle occurs nowhere (the empty answer).

Per answer it counts the tokens of what a model is given: the text content (read by clients that take
`content`, e.g. the MCP Inspector, Open WebUI) and the structured copy as compact JSON (Claude Code, OpenCode
and Codex pass `structuredContent` to the model instead of the text when it is present; a native preview
has none, so every client passes its two text blocks). The *frame* is the answer's tokens minus the tokens
of the evidence strings it carries (every `text` and `content` string, counted as JSON-escaped where it is
inside the JSON, raw where it is a block of its own): what the protocol costs beyond the evidence. Baselines in the same
run: one full read of the document (what the answer saves against), and the floor of a bare wire (each item
as its pointer on one line, then its text: no other frame).

Sets: long documents (contracts, FinanceBench filings as text) and small files (TAT-QA Markdown, FeTaQA
CSV). Figures per set and the macro average over sets (each set weighs the same), never only pooled.
Tokens are o200k (exact, no safety margin) and characters / 4. `bench/results/wire_before.txt` holds the
figures of commit 66b9a6d (before protocol 2); run this module there with `--json` to compare against it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from sparseread_mcp.select.calibrate import doc_file
from sparseread_mcp.tokens import TokenCounter
from sparseread_mcp.wire import record_of
from sparseread_mcp.wire_source import strings_at

REPO = Path(__file__).resolve().parent.parent
SETS = ("contracts", "financebench", "tatqa", "fetaqa")
LONG_SETS = frozenset({"contracts", "financebench"})
ACTIONS = ("preview", "scout", "focus", "collect", "refine", "verify_pointer", "verify_claim", "empty", "card")
#: Strings that are evidence (verbatim source text) wherever they occur in an answer.
EVIDENCE_KEYS = frozenset({"text", "content"})
#: A needle no document contains, for the answer with no items.
ABSENT = "qqzx-absent-needle-7319"

Json = dict[str, Any]


class Counts:
    """o200k tokens and characters / 4 of a string."""

    def __init__(self) -> None:
        self.o200k = TokenCounter("o200k_base")

    def __call__(self, text: str) -> tuple[int, int]:
        return self.o200k.count(text), -(-len(text) // 4)


def evidence_strings(value: object) -> Iterator[str]:
    """Every evidence string an answer carries, as it is escaped inside the JSON."""
    for text in strings_at(value, EVIDENCE_KEYS):
        yield json.dumps(text, ensure_ascii=False)[1:-1]


def pointers_and_texts(value: object) -> Iterator[tuple[str, str]]:
    """(pointer, text) of every evidence item anywhere in an answer (items, samples)."""
    if isinstance(value, dict):
        pointer = value.get("pointer", value.get("p"))
        if isinstance(pointer, str) and isinstance(value.get("text"), str):
            yield pointer, value["text"]
        for v in value.values():
            yield from pointers_and_texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from pointers_and_texts(v)


def measure(result: CallToolResult, count: Counts) -> Json:
    """Tokens of one answer as text and as structured JSON, its evidence, frame, and the bare floor."""
    blocks = [c.text for c in result.content if isinstance(c, TextContent)]
    structured = result.structured_content
    frame = json.loads(blocks[0]) if blocks and blocks[0].startswith("{") else {}
    body = record_of(blocks) if frame else {}
    # Evidence inside the JSON is counted escaped, as it is sent; a native preview's file block is raw.
    evidence = [count(s) for s in evidence_strings(frame)] + [count(b) for b in blocks[1:]]
    ev_tok, ev_chr = sum(e[0] for e in evidence), sum(e[1] for e in evidence)
    sent = [count(b) for b in blocks]
    tok, chr4 = sum(c[0] for c in sent), sum(c[1] for c in sent)
    # With no structured copy, every client gives its model the text blocks.
    s_tok, s_chr4 = (
        count(json.dumps(structured, ensure_ascii=False, separators=(",", ":"))) if structured else (tok, chr4)
    )
    bare = "\n".join(f"{p}\n{t}" for p, t in pointers_and_texts(body))
    b_tok = count(bare)[0]
    b_ev = sum(count(t)[0] for _, t in pointers_and_texts(body))
    return {
        "error": bool(result.is_error),
        "tokens": tok,
        "chars4": chr4,
        "evidence": ev_tok,
        "frame": tok - ev_tok,
        "frame_chars4": chr4 - ev_chr,
        "structured": s_tok,
        "structured_frame": s_tok - ev_tok,
        "structured_chars4": s_chr4,
        "bare_frame": b_tok - b_ev,
        "nulls": json.dumps(structured, separators=(",", ":")).count(":null") if structured else 0,
    }


def first_pointer(result: CallToolResult) -> str | None:
    blocks = [c.text for c in result.content if isinstance(c, TextContent)]
    found = next(pointers_and_texts(record_of(blocks) if blocks and blocks[0].startswith("{") else {}), None)
    return found[0] if found else None


async def read_document(client: Client, target: str, question: Json, count: Counts) -> dict[str, Json]:
    ask = str(question["question"])[:2000]
    answer = question.get("answer", "")
    claim = (", ".join(map(str, answer)) if isinstance(answer, list) else str(answer))[:2000] or ask
    out: dict[str, Json] = {}

    async def call(label: str, tool: str, args: Json) -> CallToolResult:
        result = await client.call_tool(tool, args)
        out[label] = measure(result, count)
        return result

    await call("preview", "sro_preview", {"path": target, "intent": {"goal": ask}})
    await call("scout", "sro_read", {"target": target, "action": "scout"})
    focus = await call("focus", "sro_read", {"target": target, "action": "focus", "intent": {"goal": ask}})
    slot = {"goal": ask, "slots": [{"id": "answer", "question": ask}]}
    await call("collect", "sro_read", {"target": target, "action": "collect", "intent": slot})
    await call("refine", "sro_read", {"target": target, "action": "refine"})
    pointer = first_pointer(focus)
    if pointer:
        await call("verify_pointer", "sro_read", {"target": pointer, "action": "verify"})
    await call("verify_claim", "sro_read", {"target": target, "action": "verify", "intent": {"goal": claim}})
    await call("card", "sro_card", {})
    return out


async def empty_answer(client: Client, target: str, count: Counts) -> Json:
    """A focus that finds nothing, first in its own session (an earlier goal would fill in for it)."""
    args = {"target": target, "action": "focus", "intent": {"needles": [ABSENT]}}
    return measure(await client.call_tool("sro_read", args), count)


def schema_tokens(tools: list[Json], count: Counts) -> Json:
    listed = [{k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in tools]
    outputs = [t["outputSchema"] for t in tools if t.get("outputSchema")]
    compact = {"separators": (",", ":")}
    inputs = count(json.dumps(listed, **compact))  # type: ignore[arg-type]
    out = count(json.dumps(outputs, **compact)) if outputs else (0, 0)  # type: ignore[arg-type]
    return {
        "tools": len(tools),
        "input_o200k": inputs[0],
        "input_chars4": inputs[1],
        "output_o200k": out[0],
        "output_chars4": out[1],
        "titles": json.dumps(tools).count('"title"'),
        "per_tool_o200k": {t["name"]: count(json.dumps(t, **compact))[0] for t in listed},  # type: ignore[arg-type]
    }


def pick(folder: Path, docs: int, seed: int) -> list[Json]:
    """The first question of each of `docs` documents, a seeded sample of the set's documents."""
    firsts: dict[str, Json] = {}
    for line in (folder / "questions.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            path = doc_file(folder, row)
            if path and path not in firsts:
                firsts[path] = {**row, "doc_file": path}
    keys = sorted(firsts)
    return [firsts[k] for k in sorted(random.Random(seed).sample(keys, min(docs, len(keys))))]


async def run_set(
    folder: Path, questions: list[Json], count: Counts, location: str = "bm25"
) -> tuple[list[Json], list[Json]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARSEREAD_")}
    env["SPARSEREAD_LOCATION"] = location
    rows: list[Json] = []
    tools: list[Json] = []
    for q in questions:
        target = Path(q["doc_file"]).name
        full = (folder / "docs" / target).read_text(encoding="utf-8")
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "sparseread_mcp", "--root", str(folder / "docs")],
            env=env,
            cwd=str(REPO),
        )
        with anyio.fail_after(600):
            async with Client(params) as client:
                if not tools:
                    listed = (await client.list_tools()).tools
                    tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
                answers = await read_document(client, target, q, count)
            async with Client(params) as client:
                answers["empty"] = await empty_answer(client, target, count)
        rows.append({"doc": target, "full_tokens": count(full)[0], "doc_chars": len(full), "answers": answers})
        print(f"  {folder.name} {target}: done", file=sys.stderr, flush=True)
    return rows, tools


def med(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(name: str, rows: list[Json]) -> Json:
    per_action: Json = {}
    for action in ACTIONS:
        got = [r["answers"][action] for r in rows if action in r["answers"] and not r["answers"][action]["error"]]
        per_action[action] = {
            "n": len(got),
            "errors": sum(1 for r in rows if r["answers"].get(action, {}).get("error")),
            **{
                key: med([g[key] for g in got if g[key] is not None])
                for key in ("tokens", "evidence", "frame", "frame_chars4", "structured", "structured_frame")
            },
            "bare_frame": med([g["bare_frame"] for g in got]),
            "nulls": med([g["nulls"] for g in got]),
        }
    return {
        "set": name,
        "docs": len(rows),
        "full_tokens": med([r["full_tokens"] for r in rows]),
        "focus_vs_full": med([r["answers"]["focus"]["tokens"] / max(1, r["full_tokens"]) for r in rows]),
        "actions": per_action,
    }


def macro(sets: list[Json], action: str, key: str) -> float | None:
    values = [s["actions"][action][key] for s in sets if s["actions"][action][key] is not None]
    return sum(values) / len(values) if values else None


def fmt(value: float | None, width: int = 7) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width},.0f}"


def table(result: Json, before: Json | None) -> list[str]:
    sets = result["sets"]
    schema = result["schema"]
    lines = [f"Wire cost ({result['label']}): tokens as the model is given them (o200k; chars/4 in brackets)."]
    head = f"{'':<34}{'now':>16}"
    lines.append(head + (f"{'before':>16}" if before else ""))

    def pair(o: int, c: int) -> str:
        return f"{o:>7,} [{c:>6,}]"

    rows = [
        ("tool names+descriptions+input", "input_o200k", "input_chars4"),
        ("output schemas", "output_o200k", "output_chars4"),
    ]
    for label, k1, k2 in rows:
        line = f"{label:<34}{pair(schema[k1], schema[k2])}"
        if before:
            line += pair(before["schema"][k1], before["schema"][k2])
        lines.append(line)
    line = f"{'generated title fields':<34}{schema['titles']:>16}"
    lines.append(line + (f"{before['schema']['titles']:>16}" if before else ""))
    per_tool = ", ".join(f"{k} {v:,}" for k, v in schema["per_tool_o200k"].items())
    lines.append(f"  per tool (o200k): {per_tool}")
    lines.append("")
    lines.append(
        "Frame = answer tokens beyond the evidence strings it carries, median per set (o200k). text: the content "
        "text; struct: structuredContent as compact JSON; bare: pointer+text lines only (the floor)."
    )
    names = [s["set"] for s in sets] + ["macro"]
    lines.append(f"{'action':<16}{'form':<8}" + "".join(f"{n:>13}" for n in names))
    before_sets = {s["set"]: s for s in before["sets"]} if before else {}
    for action in ACTIONS:
        for form, key in (("text", "frame"), ("struct", "structured_frame"), ("bare", "bare_frame")):
            cells = [fmt(s["actions"][action][key]) for s in sets] + [fmt(macro(sets, action, key))]
            lines.append(f"{action:<16}{form:<8}" + "".join(f"{c:>13}" for c in cells))
            if before and form != "bare":
                olds = [before_sets.get(s["set"]) for s in sets]
                cells = [fmt(o["actions"][action][key]) if o else fmt(None) for o in olds]
                present = [o for o in olds if o]
                cells.append(fmt(macro(present, action, key)) if present else fmt(None))
                lines.append(f"{'':<16}{'(before)':<8}" + "".join(f"{c:>13}" for c in cells))
    lines.append("")
    lines.append(f"{'baselines':<24}" + "".join(f"{n:>13}" for n in names))
    full = [s["full_tokens"] for s in sets]
    lines.append(f"{'one full read (median)':<24}" + "".join(fmt(v, 13) for v in full) + fmt(sum(full) / len(full), 13))
    ev = [s["actions"]["focus"]["evidence"] for s in sets]
    lines.append(
        f"{'focus evidence (median)':<24}" + "".join(fmt(v, 13) for v in ev) + fmt(macro(sets, "focus", "evidence"), 13)
    )
    tok = [s["actions"]["focus"]["tokens"] for s in sets]
    lines.append(
        f"{'focus answer (median)':<24}" + "".join(fmt(v, 13) for v in tok) + fmt(macro(sets, "focus", "tokens"), 13)
    )
    share = [s["focus_vs_full"] for s in sets]
    lines.append(
        f"{'focus / full read':<24}" + "".join(f"{v:>13.3f}" for v in share) + f"{sum(share) / len(share):>13.3f}"
    )
    nulls = [s["actions"]["empty"]["nulls"] or 0 for s in sets]
    row = "".join(fmt(v, 13) for v in nulls) + fmt(sum(nulls) / len(nulls), 13)
    lines.append(f"{'nulls in empty answer':<24}" + row)
    errors = {s["set"]: {a: v["errors"] for a, v in s["actions"].items() if v["errors"]} for s in sets}
    if any(errors.values()):
        lines.append(f"tool errors (not in the medians): {errors}")
    return lines


def main(argv: list[str] | None = None) -> Json:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--docs", type=int, default=5, help="documents per set (5), a seeded sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--label", default="now")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument("--compare", type=Path, help="a --json of an earlier run, shown beside")
    parser.add_argument(
        "--location", default="bm25", help="the server's location (bm25: every set read alike; auto: the default)"
    )
    args = parser.parse_args(argv)
    count = Counts()
    sets: list[Json] = []
    tools: list[Json] = []
    raw: dict[str, list[Json]] = {}
    for name in args.sets:
        folder = args.data / name
        rows, listed = anyio.run(run_set, folder, pick(folder, args.docs, args.seed), count, args.location)
        tools = tools or listed
        raw[name] = rows
        sets.append(summarize(name, rows))
    result: Json = {"label": args.label, "schema": schema_tokens(tools, count), "sets": sets, "raw": raw}
    before = json.loads(args.compare.read_text()) if args.compare else None
    for line in table(result, before):
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
