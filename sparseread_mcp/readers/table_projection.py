"""Projections: a whole table as TSV for agents that compute, written where no one else can reach.

A projection is written to a unique temporary name in a private directory (created 0700, checked to be
ours and not a link), with O_EXCL | O_NOFOLLOW, then renamed into place: a `.partial` or final name
planted as a symlink is replaced, never written through. It stops at a row cap and a byte cap (and says
so), checks the call's deadline between batches, and leaves nothing behind when it fails.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..deadline import checkpoint
from ..errors import ConfigError
from .table_files import PrivateDir
from .table_sandbox import json_value

#: At most this many rows are projected: a 322 KB Parquet can hold 100 million rows.
MAX_PROJECTION_ROWS = 1_000_000
#: And at most this many bytes (a row that would cross it is not written).
MAX_PROJECTION_BYTES = 256 * 1024 * 1024
_BATCH_ROWS = 1_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Projection:
    path: Path
    rows: int
    bytes: int


def write_projection(cursor: Any, columns: list[str], destination: Path) -> Projection:
    """Stream `cursor` (a DuckDB result) as TSV to `destination`; returns what was written."""
    try:
        folder = PrivateDir.at(destination.parent)
    except OSError as exc:
        raise ConfigError(_unwritable(destination.parent, exc)) from exc
    temporary = f".{destination.name}.{os.getpid()}-{secrets.token_hex(6)}.partial"
    counts = {"rows": 0, "bytes": 0}
    try:
        folder.write(temporary, _tsv(cursor, columns, counts))
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


def _tsv(cursor: Any, columns: list[str], counts: dict[str, int]) -> Iterator[bytes]:
    header = _encode([columns])
    counts["bytes"] = len(header)
    yield header
    while counts["rows"] < MAX_PROJECTION_ROWS:
        checkpoint()  # the deadline holds between batches; DuckDB is interrupted by the caller's watcher
        batch = cursor.fetchmany(min(_BATCH_ROWS, MAX_PROJECTION_ROWS - counts["rows"]))
        if not batch:
            return
        for row in batch:
            line = _encode([[json_value(v) for v in row]])
            if counts["bytes"] + len(line) > MAX_PROJECTION_BYTES:
                return
            counts["bytes"] += len(line)
            counts["rows"] += 1
            yield line


def _encode(rows: list[list[Any]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter="\t", lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode("utf-8", "surrogatepass")
