"""The commands that answer at a terminal without an MCP client: a read printed for people, the
savings bench, a session's trace, and compaction of a transcript file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..config import Settings
from ..models import Preview


def human(result: object) -> str:
    from ..models import EvidencePack

    if isinstance(result, Preview):
        return human_preview(result)
    assert isinstance(result, EvidencePack)
    lines = [f"gate: {result.gate.decision} — {result.gate.reason}"]
    if result.verification:
        lines.append(f"verify: {result.verification.status} — {result.verification.reason}")
    if result.message:
        lines.append(result.message)
    for item in result.items:
        lines += ["", f"== {item.pointer}  (score {item.score})", item.text]
    for cov in result.coverage:
        lines.append(f"coverage {cov.slot}: {cov.status}")
    e = result.exposure
    lines.append(f"exposure: {e.payload_chars} chars now, E={e.episode_chars} of L={e.full_view_chars}")
    return "\n".join(lines)


#: Characters of a sample a person is shown on one line; the JSON output (--json) has the whole text.
SAMPLE_CHARS = 160


def human_preview(preview: Preview) -> str:
    """A preview for a person: the file and its route, the outline (each heading once, with its lines, and
    its anchor only where that differs from the title), then the samples, one line each, by anchor."""
    lines = [
        f"{preview.artifact.path} ({preview.artifact.type}, {preview.artifact.size_bytes} bytes, "
        f"L={preview.full_view_chars} chars / {preview.full_view_tokens} tokens) route={preview.route}",
        f"  {preview.reason}",
    ]
    if preview.outline:
        lines.append("outline:" if preview.outline_complete else "outline (first entries):")
    for entry in preview.outline:
        anchor = "" if entry.anchor == entry.title else f"  #{entry.anchor}"
        lines.append(f"  {'  ' * (entry.level - 1)}{entry.title}  (L{entry.lines[0]}-L{entry.lines[1]}){anchor}")
    if preview.samples:
        lines.append("samples:")
    for sample in preview.samples:
        text = " ".join(sample.text.split())
        text = text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"
        lines.append(f"  #{sample.anchor}: {text}")
    if preview.content is not None:
        lines += ["", preview.content]
    return "\n".join(lines)


def bench_command(args: argparse.Namespace, settings: Settings) -> int:
    from .userbench import bench, render_bench

    as_json = getattr(args, "json", False)
    report = bench(
        Path(args.path),
        settings=settings,
        goals=args.goal,
        repeat=args.repeat,
        max_files=args.max_files,
        progress=not as_json,
    )
    print(report.model_dump_json(indent=2) if as_json else render_bench(report))
    return 0 if report.files else 1


def trace_command(args: argparse.Namespace, settings: Settings) -> int:

    from ..engine import ReadEngine
    from ..vocabulary import CARD_TOOL
    from .savings import build_trace, render_trace

    if settings.store is None:
        print(
            "error: trace reads the session store a server kept: pass --store FILE (the server's --store or "
            f"SPARSEREAD_STORE); for the current session, call {CARD_TOOL} with trace=true",
            file=sys.stderr,
        )
        return 2
    if isinstance(settings.store, Path) and not settings.store.is_file():
        # Opened, a misspelt path would become a new, empty database, and the answer "no recorded calls".
        print(
            f"error: no session store at {settings.store}: pass the file the server ran with (its --store or "
            "SPARSEREAD_STORE)",
            file=sys.stderr,
        )
        return 2
    sessions = ReadEngine(settings).sessions
    # A session a stdio server was given with --session NAME is stored as `named:NAME`: either names it.
    keys = sessions.keys()
    if args.session:
        keys = [k for k in keys if k in (args.session, f"named:{args.session}")] or [args.session]
    traces = [build_trace(sessions.get(key), recent=args.calls) for key in keys]
    traces = [t for t in traces if t.calls]
    if not traces:
        print(f"no recorded calls in {settings.store}" + (f" for session {args.session}" if args.session else ""))
        return 1
    if getattr(args, "json", False):
        print(json.dumps([t.model_dump(mode="json") for t in traces], indent=2))
        return 0
    for trace in traces:
        print(render_trace(trace))
        for call in trace.recent:
            target = f" {call.path}" if call.path else ""
            print(f"    {call.tool}{target} {call.action or ''} -> {call.decision or '-'}: {call.tokens} tokens")
        print()
    return 0


def compact_command(args: argparse.Namespace, settings: Settings) -> int:

    from ..compaction import CompactionSettings, ElisionSettings, LearnedRouter, compact_messages, train
    from ..compaction.learned import examples_from_jsonl, train_on_runs
    from ..compaction.transcript import load_file
    from ..tokens import TokenCounter

    if args.file[0] == "train":
        if len(args.file) != (1 if args.runs else 2) or not args.out:
            print(
                "error: use `sparseread-mcp compact train LABELED.jsonl --out router.json` or `sparseread-mcp "
                "compact train --runs DIR [--leave-out FAMILY] --out router.json`",
                file=sys.stderr,
            )
            return 2
        if args.runs:
            router = train_on_runs(Path(args.runs), leave_out=args.leave_out)
        else:
            router = train(examples_from_jsonl(Path(args.file[1]).read_text(encoding="utf-8")))
        router.save(Path(args.out))
        print(
            f"router saved to {args.out}: threshold {router.threshold:.3f}, validation precision "
            f"{router.precision:.3f}, recall {router.recall:.3f}"
        )
        if args.runs:
            held = ", ".join(args.leave_out) or "none"
            print(f"trained on families: {', '.join(router.families)}; held out: {held}")
        return 0
    transcript = load_file(Path(args.file[0]).read_text(encoding="utf-8"), args.format)
    result = compact_messages(
        transcript.dump(),
        fmt=transcript.format,
        # A learned router belongs to the span compactor; without one, old tool results are shortened in place.
        settings=CompactionSettings(keep_last=args.keep_last)
        if args.router
        else ElisionSettings(keep_last=args.keep_last),
        counter=TokenCounter(settings.tokenizer, margin=settings.token_margin),
        audit=Path(args.audit) if args.audit else None,
        router=LearnedRouter.load(Path(args.router)) if args.router else None,
    )
    if args.out:
        Path(args.out).write_text(json.dumps(result.messages, ensure_ascii=False, indent=1), encoding="utf-8")
    if getattr(args, "json", False):
        print(result.model_dump_json(indent=2))
        return 0
    for span in result.plan:
        verdict = "replaced" if span.committed else "kept"
        print(
            f"{span.span} messages {span.messages[0]}-{span.messages[1]}: {span.interactions} interactions, "
            f"{span.source_tokens} -> {span.summary_tokens if span.committed else span.source_tokens} tokens, "
            f"{verdict} ({span.reason})"
        )
    saved = result.tokens_before - result.tokens_after
    print(f"tokens: {result.tokens_before} -> {result.tokens_after} ({saved} saved, {result.tokenizer})")
    return 0
