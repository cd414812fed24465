"""A file its reader refuses, read as plain lines.

A reader refuses a file whose format is broken (malformed JSON, YAML or TOML, a CSV that DuckDB cannot
load, HTML the parser cannot scan, a PDF whose page tree is damaged). Its lines are still text: a read that
asks for lines (a line or column anchor, view='lines') gets them from the plain text reader, and any other
read gets the refusal with how to ask for that. Content that is binary has no lines: its refusal stands.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import BinaryArtifact, UnsupportedArtifact
from ..files.anchors import Target
from ..files.artifacts import Artifact, artifact_from_bytes
from ..readers.base import Reader
from .read import ReadRequest

#: Longest part of a refusal kept before the hint, so the hint is never what a clamped message cuts.
_REASON_CHARS = 300


def asks_for_lines(target: Target, request: ReadRequest) -> bool:
    """Whether a read asks for lines: a line or column anchor, or view='lines'."""
    anchored = target.anchor is not None and target.anchor.kind in ("lines", "columns")
    return anchored or request.view == "lines"


def lines_hint(path: str, text: str) -> str:
    """How to read a file its reader refuses: as plain lines (its first 40 at most)."""
    last = min(40, text.count("\n") + 1)
    return f"It can still be read as plain lines: sro_read target {f'{path}#L1-L{last}'!r}, or view='lines'"


def lines_instead(
    readers: tuple[Reader, ...],
    reader: Reader,
    artifact: Artifact,
    refusal: UnsupportedArtifact,
    *,
    as_lines: bool,
    stamp: Callable[[Artifact], Artifact],
) -> tuple[Reader, Artifact]:
    """The plain text reader and the artifact as text, to parse instead of `reader`'s refused parse; raises
    the refusal when there are no lines to read (binary content), or with `lines_hint` unless `as_lines`."""
    lines = next((r for r in readers if r.name == "text"), None)
    if isinstance(refusal, BinaryArtifact) or lines is None or lines is reader:
        raise refusal
    if reader.binary:  # kept as bytes for its reader: decoded as text now, unless binary
        try:
            artifact = stamp(artifact_from_bytes(artifact.location, artifact.data or b""))
        except BinaryArtifact:
            raise refusal from None
    if not as_lines:
        reason = str(refusal)
        reason = reason if len(reason) <= _REASON_CHARS else reason[: _REASON_CHARS - 1] + "…"
        raise UnsupportedArtifact(f"{reason}. {lines_hint(artifact.path, artifact.text)}") from refusal
    return lines, artifact
