"""The child process that runs one user SELECT: killable, and unable to allocate past its limit.

DuckDB cannot bound every query from inside the server: `repeat('a', 1500000000)` allocates outside its
memory limit and ignores `interrupt()` until the string is built (10 s and 3 GB measured). So a user
query runs here, in a process started per query with an address-space limit (set by the parent before
exec) and killed by the parent at the deadline. It opens the table database read-only, with external
access off and the configuration locked, and prints one JSON answer whose size is bounded: cells are cut
in SQL (before Python sees them), rows stop at a character budget.

Run as a script (`python -P table_sandbox.py`) so it imports nothing but the standard library and
DuckDB; the request is one JSON object on stdin.
"""

from __future__ import annotations

import datetime
import json
import resource
import sys
from decimal import Decimal
from typing import Any

#: Column types DuckDB returns as short Python values; anything else is cut as text in SQL.
_SCALAR_PREFIXES = (
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "DATE",
    "TIME",
    "TIMESTAMP",
    "INTERVAL",
    "UUID",
)


def json_value(value: object) -> object:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def cut_marker(shown: int, total: int) -> str:
    return f"… [cut: {shown:,} of {total:,} chars]"


def answer(request: dict[str, Any]) -> dict[str, Any]:
    import duckdb

    config: dict[str, str | bool | int | float | list[str]] = {
        "memory_limit": f"{request['memory_mb']}MB",
        "threads": 1,
        "temp_directory": "",  # no spilling: memory is the bound, and disk is not ours to fill
    }
    con = duckdb.connect(request["db"], read_only=True, config=config)
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")  # last: nothing the query does can loosen the above
    query: str = request["query"]
    max_rows: int = request["max_rows"]
    max_chars: int = request["max_chars"]
    max_columns: int = request["max_columns"]
    try:
        relation = con.sql(query)
        names = [str(n) for n in relation.columns]
        types = [str(t) for t in relation.types]
        shown = min(len(names), max_columns)
        cell_chars = max(32, min(request["cell_chars"], max_chars // max(1, shown)))
        aliases = ", ".join(f'"c{i}"' for i in range(len(names)))
        exprs = []
        for i, kind in enumerate(types[:shown]):
            if kind.upper().startswith(_SCALAR_PREFIXES):
                exprs.append(f'"c{i}", NULL')
            else:  # cut in DuckDB: a 1 GB aggregate never reaches Python whole
                text = f'CAST("c{i}" AS VARCHAR)'
                exprs.append(f"left({text}, {cell_chars}), length({text})")
        wrapped = f"SELECT {', '.join(exprs) or '1'} FROM (\n{query}\n) AS q({aliases})"
        cursor = con.execute(wrapped)
        rows: list[list[object]] = []
        cells_cut = 0
        chars = 0
        more = False
        while batch := cursor.fetchmany(256):
            for raw in batch:
                if len(rows) >= max_rows or (rows and chars > max_chars):
                    more = True
                    break
                row: list[object] = []
                for i in range(shown):
                    value, length = raw[2 * i], raw[2 * i + 1]
                    if length is not None and length > cell_chars:
                        value = f"{value}{cut_marker(cell_chars, length)}"
                        cells_cut += 1
                    row.append(json_value(value))
                    chars += len(json.dumps(row[-1], default=str)) + 2  # as the answer will carry it
                rows.append(row)
            if more:
                break
        row_count: int | None = len(rows)
        if more:  # the true size of the result, counted by DuckDB (another pass, under the same limits)
            try:
                row_count = int(con.execute(f"SELECT count(*) FROM (\n{query}\n)").fetchall()[0][0])
            except duckdb.Error:
                row_count = None
        return {
            "columns": names[:shown],
            "column_count": len(names),
            "rows": rows,
            "row_count": row_count,
            "rows_cut": more,
            "cells_cut": cells_cut,
            "cell_chars": cell_chars,
        }
    except duckdb.OutOfMemoryException as exc:
        return {"error": "memory", "message": _first_line(exc)}
    except duckdb.Error as exc:
        return {"error": "failed", "message": _first_line(exc)}
    finally:
        con.close()


def _first_line(exc: BaseException) -> str:
    line = (str(exc).splitlines() or [type(exc).__name__])[0]
    return line if len(line) <= 200 else line[:199] + "…"


def main() -> None:
    request = json.loads(sys.stdin.read())
    # Before DuckDB is imported: every allocation of this process, DuckDB's own included, counts.
    limit = request["address_space_mb"] << 20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:  # under a server-wide ceiling already: never ask for more than it
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        result = answer(request)
    except MemoryError:
        result = {"error": "memory", "message": "out of memory"}
    sys.stdout.write(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
