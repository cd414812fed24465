"""`sparseread-mcp bench PATH`: what sparse reading costs and saves on your own files, without a client.

For each file: a cold preview (a fresh engine: parse, index), warm previews (cached), then a few focus
reads for goals taken from the file's outline (or `--goal`), cold and warm. Exposure is what one reading
session (the preview, then each read) put into context, counted as `trace` counts it, against one full
read of the file. A file whose preview routes `native` is read whole by the preview: nothing to save,
and it says so. A saving counts only where the evidence was delivered: a file counts toward the total
only when every goal's read came back with its coverage `found` (the goal's words in what was delivered);
a file with a goal left `partial` or `missing` is listed, not counted, since its reader would still have
had to read on (often the whole file); so is a sparse file with no goal to read for. Timings are medians;
the machine and its disk caches are what they are, so compare runs on one machine only.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ..config import Settings
from ..engine import ReadEngine, ReadRequest
from ..errors import SparsereadError
from ..models import Intent, Preview
from ..progressbar import ProgressBar
from .savings import build_trace

T = TypeVar("T")

#: Inventory types that have no text to read.
_SKIPPED_TYPES = frozenset({"binary", "unreadable", "directory"})


class FileBench(BaseModel):
    path: str
    type: str
    route: str
    full_view_tokens: int
    exposure_tokens: int
    saved_tokens: int
    goals: list[str]
    #: Goals whose read did not deliver evidence (coverage not `found`): the file's saving is not counted.
    undelivered: list[str] = []
    #: Whether the file's saving counts in the totals: read whole by its preview, or every goal delivered.
    counted: bool = True
    preview_cold_ms: float
    preview_warm_ms: float
    read_cold_ms: float | None
    read_warm_ms: float | None
    note: str | None = None


class BenchReport(BaseModel):
    root: str
    repeat: int
    files: list[FileBench]
    skipped: list[str]
    #: Totals over the counted files only: those whose every goal's evidence was delivered.
    exposure_tokens: int
    full_view_tokens: int
    saved_tokens: int
    #: Files left out of the totals, each for a goal whose evidence was not delivered.
    not_counted: list[str] = []
    median_read_warm_ms: float | None


def bench(
    path: Path, *, settings: Settings, goals: list[str], repeat: int = 3, max_files: int = 12, progress: bool = True
) -> BenchReport:
    """Bench one file, or the largest `max_files` readable files of a directory."""
    target = path.resolve()
    if not target.exists():
        raise SparsereadError(f"{path} does not exist: pass a file or a directory")
    root = target if target.is_dir() else target.parent
    settings = settings.with_overrides(roots=(root,))
    names = _files(settings, root) if target.is_dir() else [target.name]
    names = names[:max_files]
    results: list[FileBench] = []
    skipped: list[str] = []
    with ProgressBar(len(names), "bench", enabled=None if progress else False) as bar:
        for name in names:
            try:
                results.append(bench_file(name, settings=settings, goals=goals, repeat=repeat))
            except SparsereadError as exc:
                skipped.append(f"{name}: {exc}")
            bar.advance(name)
    warm = [r.read_warm_ms for r in results if r.read_warm_ms is not None]
    counted = [r for r in results if r.counted]
    exposure = sum(r.exposure_tokens for r in counted)
    full = sum(r.full_view_tokens for r in counted)
    return BenchReport(
        root=str(root),
        repeat=repeat,
        files=results,
        skipped=skipped,
        exposure_tokens=exposure,
        full_view_tokens=full,
        saved_tokens=full - exposure,
        not_counted=[r.path for r in results if not r.counted],
        median_read_warm_ms=round(statistics.median(warm), 2) if warm else None,
    )


def bench_file(name: str, *, settings: Settings, goals: list[str], repeat: int) -> FileBench:
    engine = ReadEngine(settings)  # fresh caches: the first calls are cold
    preview_cold, preview = _timed(lambda: engine.preview("bench", name))
    preview_warm = _median_ms(lambda i: engine.preview(f"warm-preview-{i}", name), repeat)
    chosen = goals or _goals_from(preview)
    read_cold: list[float] = []
    read_warm: list[float] = []
    note = None
    undelivered: list[str] = []
    if preview.route == "native":
        chosen, note = [], "small: the preview is the full view (nothing to save)"
    elif not chosen:
        note = "not counted: no outline to take goals from, so nothing was read: pass --goal"
    for n, goal in enumerate(chosen):
        request = ReadRequest(target=name, intent=Intent(goal=goal))
        cold_ms, pack = _timed(partial(engine.read, "bench", request))
        read_cold.append(cold_ms)
        if not pack.items or any(c.status != "found" for c in pack.coverage):
            undelivered.append(goal)
        # Each warm run is a new session, so the ledger and `refine` never shape the timing.
        read_warm.append(_median_ms(partial(_read_in_session, engine, request, f"warm-{n}"), repeat))
    artifact = build_trace(engine.sessions.get("bench"), recent=0).artifacts[0]
    return FileBench(
        path=name,
        type=preview.artifact.type,
        route=preview.route,
        full_view_tokens=artifact.full_view_tokens,
        exposure_tokens=artifact.exposure_tokens,
        saved_tokens=artifact.saved_tokens,
        goals=chosen,
        undelivered=undelivered,
        counted=preview.route == "native" or (bool(chosen) and not undelivered),
        preview_cold_ms=preview_cold,
        preview_warm_ms=preview_warm,
        read_cold_ms=round(statistics.median(read_cold), 2) if read_cold else None,
        read_warm_ms=round(statistics.median(read_warm), 2) if read_warm else None,
        note=note,
    )


def _read_in_session(engine: ReadEngine, request: ReadRequest, prefix: str, run: int) -> object:
    return engine.read(f"{prefix}-{run}", request)


def _files(settings: Settings, root: Path) -> list[str]:
    """The directory's readable files, largest first (where sparse reading matters)."""
    inventory = ReadEngine(settings).inventory(".")
    files = [f for f in inventory.files if f.type not in _SKIPPED_TYPES and f.size > 0]
    files.sort(key=lambda f: (-f.size, f.path))
    return [f.path for f in files]


def _goals_from(preview: Preview, count: int = 3) -> list[str]:
    """Distinct outline titles, spread over the file: the questions a reader is likely to ask of it."""
    titles = list(dict.fromkeys(o.title.strip() for o in preview.outline if len(o.title.strip()) > 2))
    if len(titles) <= count:
        return titles
    step = len(titles) / count
    return [titles[int(i * step + step / 2)] for i in range(count)]


def _timed(call: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = call()
    return round((time.perf_counter() - started) * 1000, 2), result


def _median_ms(call: Callable[[int], object], repeat: int) -> float:
    times = []
    for i in range(max(repeat, 1)):
        started = time.perf_counter()
        call(i)
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def render_bench(report: BenchReport) -> str:
    """The table a person reads; `--json` gives the same numbers."""
    width = min(36, max([len(f.path) for f in report.files] + [4]))
    lines = [
        f"{'file':<{width}}  {'type':<9} {'route':<6} {'L tokens':>9} {'exposed':>8} {'saved':>15}  "
        f"{'preview cold/warm ms':>20}  {'read cold/warm ms':>17}"
    ]
    for f in report.files:
        path = f.path if len(f.path) <= width else "…" + f.path[-(width - 1) :]
        share = f"({f.saved_tokens / f.full_view_tokens:.0%})" if f.full_view_tokens else ""
        claim = f"{f.saved_tokens:>8,} {share:>6}" if f.counted else f"{'-':>15}"  # a claim only when counted
        reads = f"{f.read_cold_ms:.1f} / {f.read_warm_ms:.1f}" if f.read_cold_ms is not None else "-"
        lines.append(
            f"{path:<{width}}  {f.type[:9]:<9} {f.route:<6} {f.full_view_tokens:>9,} {f.exposure_tokens:>8,} "
            f"{claim}  {f.preview_cold_ms:>9.1f} / {f.preview_warm_ms:<8.1f}  {reads:>17}"
        )
        if f.goals:
            lines.append(f"{'':<{width}}  goals: {'; '.join(g[:40] for g in f.goals)}")
        if f.undelivered:
            missed = "; ".join(g[:40] for g in f.undelivered)
            lines.append(f"{'':<{width}}  not counted: no evidence delivered for {missed}")
        if f.note:
            lines.append(f"{'':<{width}}  {f.note}")
    for skipped in report.skipped:
        lines.append(f"skipped {skipped}")
    if report.full_view_tokens:
        saved = report.saved_tokens / report.full_view_tokens
        verb = "saved" if report.saved_tokens >= 0 else "cost"
        counted = len(report.files) - len(report.not_counted)
        lines.append(
            f"total over the {counted} of {len(report.files)} files whose evidence was delivered: "
            f"{report.exposure_tokens:,} tokens exposed vs "
            f"{report.full_view_tokens:,} for one full read of each: {verb} {abs(report.saved_tokens):,} "
            f"({abs(saved):.0%})"
        )
    elif report.files:
        lines.append("total: nothing saved is counted: no file's evidence was delivered for every goal")
    if report.median_read_warm_ms is not None:
        lines.append(f"median warm read: {report.median_read_warm_ms:.1f} ms (medians of {report.repeat} runs)")
    return "\n".join(lines)
