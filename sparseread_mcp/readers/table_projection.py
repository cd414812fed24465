"""Projections: a whole table as TSV for agents that compute, written where no one else can reach.

A projection is written to a unique temporary name in a private directory (created 0700, checked to be
ours and not a link), with O_EXCL | O_NOFOLLOW, then renamed into place: a `.partial` or final name
planted as a symlink is replaced, never written through. It stops at a row cap and a byte cap (and says
so), checks the call's deadline between batches, and leaves nothing behind when it fails.

Every projection in the folder shares one disk quota: once one is written whole, the least recently
written others are removed until it fits beside them, so after each projection the folder holds at most
the quota (while one is being written, at most that one more, itself at most the quota). A projection that
alone would pass the quota is refused (OverQuota) as soon as it does: nothing of it stays, and no other
projection was removed for it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..deadline import checkpoint
from ..errors import ConfigError, OverQuota
from .table_files import PrivateDir
from .table_sandbox import json_value

#: At most this many rows are projected: a 322 KB Parquet can hold 100 million rows.
MAX_PROJECTION_ROWS = 1_000_000
#: And at most this many bytes (a row that would cross it is not written).
MAX_PROJECTION_BYTES = 256 * 1024 * 1024
_BATCH_ROWS = 1_000
#: Another writer's partial file younger than this is counted against the quota but never removed.
_PARTIAL_GRACE_SECONDS = 3600


@dataclass(frozen=True, slots=True, kw_only=True)
class Projection:
    path: Path
    rows: int
    bytes: int


def write_projection(
    cursor: Any, columns: list[str], destination: Path, *, quota_bytes: int, total_rows: int | None = None
) -> Projection:
    """Stream `cursor` (a DuckDB result) as TSV to `destination`, within the folder's shared disk quota
    (older projections make room; one alone over it is refused); returns what was written."""
    try:
        folder = PrivateDir.at(destination.parent)
    except OSError as exc:
        raise ConfigError(_unwritable(destination.parent, exc)) from exc
    temporary = f".{destination.name}.{os.getpid()}-{secrets.token_hex(6)}.partial"
    counts = {"rows": 0, "bytes": 0}
    try:
        chunks = _tsv(cursor, columns, counts, quota_bytes=quota_bytes)
        folder.write(temporary, _refusing(chunks, counts, quota_bytes, total_rows))
        _make_room(folder.fd, quota_bytes - counts["bytes"], writing=temporary)
        path = folder.publish(temporary, destination.name)
    except OSError as exc:  # a full disk, a quota: nothing half-written stays
        folder.remove(temporary)
        raise ConfigError(_unwritable(destination.parent, exc)) from exc
    except BaseException:
        folder.remove(temporary)
        raise
    finally:
        folder.close()
    return Projection(path=path, rows=counts["rows"], bytes=counts["bytes"])


def _unwritable(folder: Path, exc: OSError) -> str:
    return (
        f"the projection could not be written in {folder} ({exc.strerror}): free space there or set "
        "SPARSEREAD_CACHE_DIR"
    )


class _OverQuota(Exception):
    """Raised inside the stream when the projection alone would pass the quota (turned into OverQuota)."""


def _refusing(chunks: Iterator[bytes], counts: dict[str, int], quota: int, total_rows: int | None) -> Iterator[bytes]:
    """`chunks`, with a projection that alone passes the quota refused: a typed error saying how big it is
    and the limit (the writer removes what was written)."""
    try:
        yield from chunks
    except _OverQuota:
        rows = counts["rows"]
        estimate = ""
        if total_rows and rows:
            estimate = f", about {_mib(counts['bytes'] * total_rows // rows)} for all {total_rows:,} rows"
        raise OverQuota(
            f"view='projection' refused: the projection passed the projections' disk quota of {_mib(quota)} "
            f"(SPARSEREAD_PROJECTION_QUOTA_MB, --projection-quota-mb) after {rows:,} rows ({counts['bytes']:,} "
            f"bytes{estimate}); nothing was written. Compute with intent.query (aggregate, filter, select fewer "
            "columns, LIMIT) or raise the quota"
        ) from None


def _tsv(cursor: Any, columns: list[str], counts: dict[str, int], *, quota_bytes: int) -> Iterator[bytes]:
    header = _encode([columns])
    counts["bytes"] = len(header)
    yield header
    limit = min(MAX_PROJECTION_BYTES, quota_bytes)
    while counts["rows"] < MAX_PROJECTION_ROWS:
        checkpoint()  # the deadline holds between batches; DuckDB is interrupted by the caller's watcher
        batch = cursor.fetchmany(min(_BATCH_ROWS, MAX_PROJECTION_ROWS - counts["rows"]))
        if not batch:
            return
        lines = []
        for row in batch:
            line = _encode([[json_value(v) for v in row]])
            if counts["bytes"] + len(line) > limit:
                if limit < MAX_PROJECTION_BYTES:
                    raise _OverQuota  # alone over the quota: refused, not cut (a cut one would look whole)
                break
            counts["bytes"] += len(line)
            counts["rows"] += 1
            lines.append(line)
        yield b"".join(lines)
        if len(lines) < len(batch):
            return


def _make_room(dir_fd: int, room: int, *, writing: str) -> None:
    """Remove the least recently written projections until the others take at most `room` bytes. Another
    writer's recent partial file is counted, never removed; links and folders are neither."""
    others: list[tuple[int, str, int]] = []  # (mtime_ns, name, size)
    used = 0
    now = time.time_ns()
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name == writing or not stat.S_ISREG(info.st_mode):
                continue
            used += info.st_size
            young = now - info.st_mtime_ns < _PARTIAL_GRACE_SECONDS * 10**9
            if not (entry.name.endswith(".partial") and young):
                others.append((info.st_mtime_ns, entry.name, info.st_size))
    for _, name, size in sorted(others):
        if used <= room:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
        used -= size


def _mib(size: int) -> str:
    return f"{size / 2**20:,.{0 if size >= 10 * 2**20 else 1}f} MiB"


def _encode(rows: list[list[Any]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter="\t", lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode("utf-8", "surrogatepass")
