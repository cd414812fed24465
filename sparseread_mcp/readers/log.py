"""Logs: records (a line plus its continuation lines), level counts, message signatures, time range.

A signature is a message with its variable parts (numbers, hex, ids, quoted strings, paths) masked,
so ten thousand "connection refused to 10.0.0.7:5432" lines become one outline entry with a count
and first/last anchors. Focus returns matching records with one record of context either side.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..deadline import checkpoint
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..files.safeopen import open_no_follow, read_head
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import OutlineEntry, ParsedArtifact, Passage

LOG_SUFFIXES = frozenset({".log"})
SNIFF_SUFFIXES = frozenset({".txt", ".out", ".err", ""})
_SNIFF_BYTES = 4096
_SIGNATURES_IN_OUTLINE = 60
_CHECK_EVERY = 4096

_TIMESTAMP = re.compile(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
    r"|\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\]?"
)
_LEVEL = re.compile(r"\b(FATAL|CRITICAL|ERROR|ERR|WARNING|WARN|NOTICE|INFO|DEBUG|TRACE)\b")
_CONTINUATION = re.compile(r"^(\s+\S|Traceback |Caused by:|\tat |\.\.\. \d+ more)")
_MASKS = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{12,}\b", re.I), "<hex>"),
    (re.compile(r"(?:/[\w.-]+)+"), "<path>"),
    (re.compile(r"\"[^\"]*\"|'[^']*'"), "<str>"),
    (re.compile(r"\b\d+(?:\.\d+)*\b"), "<n>"),
)
_LEVEL_NAMES = {"ERR": "ERROR", "WARN": "WARNING", "CRITICAL": "FATAL"}


@dataclass(frozen=True, slots=True)
class _Record:
    first: int  # 1-based lines
    last: int
    level: str | None
    timestamp: str | None
    signature: str


def looks_like_log(path: Path) -> bool:
    """A text file whose first lines mostly start with a timestamp or carry a level."""
    # Never follow a symlink swapped in or block on a FIFO: this sniff only picks the reader, the bytes
    # shown are read again beneath the root (see safeopen).
    descriptor = open_no_follow(path)
    if descriptor is None:
        return False
    try:
        head = read_head(descriptor, _SNIFF_BYTES).decode("utf-8", "replace")
    except OSError:
        return False
    finally:
        os.close(descriptor)
    lines = [ln for ln in head.split("\n")[:-1] if ln.strip()][:20]
    if len(lines) < 3:
        return False
    marked = sum(1 for ln in lines if _TIMESTAMP.match(ln) or _LEVEL.search(ln[:80]))
    return marked >= 0.6 * len(lines)


class LogReader:
    name = "log"
    types = frozenset({"log"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = False
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25", "records_in_context"),
        Configuration("needles", "records_in_context"),
        Configuration("signatures", "outline"),
        Configuration("any", "full_view"),
    )

    def accepts(self, path: Path) -> bool:
        suffix = path.suffix.lower()
        return suffix in LOG_SUFFIXES or (suffix in SNIFF_SUFFIXES and path.is_file() and looks_like_log(path))

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        index = LineIndex(artifact.text)
        records = _records(index)
        passages = tuple(
            Passage(
                index=i,
                start=index.starts[r.first - 1],
                end=index.line_end(r.last),
                kind="lines",
                section=r.level or "",
            )
            for i, r in enumerate(records)
        )
        levels = Counter(r.level for r in records if r.level)
        stamps = [r.timestamp for r in records if r.timestamp]
        signals: dict[str, int | str | None] = {f"level_{k.lower()}": v for k, v in sorted(levels.items())}
        signals.update(
            records=len(records), first_time=stamps[0] if stamps else None, last_time=stamps[-1] if stamps else None
        )
        return ParsedArtifact(
            artifact=artifact,
            type="log",
            lines=index,
            passages=passages,
            outline=_outline(records),
            signals=signals,
            focus_context=1,
        )


def _records(index: LineIndex) -> list[_Record]:
    records: list[_Record] = []
    text = index.text
    number = 1
    steps = 0
    while number <= index.line_count:
        steps += 1
        if steps % _CHECK_EVERY == 0:
            checkpoint()  # a large log takes seconds here: stop at the call's limit
        line = text[index.starts[number - 1] : index.line_end(number)]
        if not line.strip():
            number += 1
            continue
        last = number
        in_traceback = False
        while last + 1 <= index.line_count:
            following = text[index.starts[last] : index.line_end(last + 1)]
            if not following.strip() or _TIMESTAMP.match(following):
                break
            if not _CONTINUATION.match(following):
                if in_traceback:
                    last += 1  # a Python traceback ends with its unindented exception line
                break
            in_traceback = in_traceback or following.startswith("Traceback ")
            last += 1
        stamp = _TIMESTAMP.match(line)
        level = _LEVEL.search(line)
        name = _LEVEL_NAMES.get(level.group(1), level.group(1)) if level else None
        records.append(_Record(number, last, name, stamp.group("ts") if stamp else None, _signature(line, stamp)))
        number = last + 1
    return records


def _signature(line: str, stamp: re.Match[str] | None) -> str:
    message = line[stamp.end() :] if stamp else line
    for pattern, mask in _MASKS:
        message = pattern.sub(mask, message)
    return " ".join(message.split())[:160]


def _outline(records: list[_Record]) -> tuple[OutlineEntry, ...]:
    counts = Counter(r.signature for r in records)
    first: dict[str, _Record] = {}
    last: dict[str, _Record] = {}
    for r in records:
        first.setdefault(r.signature, r)
        last[r.signature] = r
    severity = {"FATAL": 0, "ERROR": 1, "WARNING": 2}
    ranked = sorted(counts, key=lambda s: (severity.get(first[s].level or "", 3), -counts[s], first[s].first))
    entries = []
    for signature in ranked[:_SIGNATURES_IN_OUTLINE]:
        head, tail = first[signature], last[signature]
        entries.append(
            OutlineEntry(
                title=f"×{counts[signature]} {signature} (first L{head.first}, last L{tail.first})",
                anchor=f"L{head.first}" if head.first == head.last else f"L{head.first}-L{head.last}",
                first_line=head.first,
                last_line=tail.last,
                level=1,
            )
        )
    return tuple(entries)
