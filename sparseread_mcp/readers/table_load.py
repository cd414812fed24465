"""Loading a table into DuckDB: verified bytes through a table function, or a workbook's rows.

Every name that comes from a file (a header cell, a sheet title) is quoted as an identifier, cut and made
unique: a header like `a" INT); COPY ... TO '/elsewhere'` stays one column name.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..deadline import checkpoint
from .table_files import PrivateDir


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSource:
    """How to load one table: verified bytes through a DuckDB table function, or rows already in memory."""

    name: str
    #: A DuckDB table function over the bytes' private copy, `{path}` standing for its quoted path,
    #: e.g. `read_csv({path}, header=true)`.
    load: str | None = None
    #: The same with forgiving options, tried when `load` fails.
    lenient: str | None = None
    data: bytes = b""
    suffix: str = ""
    columns: Sequence[str] = ()
    rows: Sequence[Sequence[object]] = ()


def load_source(con: Any, source: TableSource, folder: PrivateDir, name: str, duckdb: Any) -> None:
    """Create the table `source.name`; bytes are copied to `name` in `folder` for DuckDB, then removed."""
    if source.load is not None:
        path = folder.write(name, [source.data])
        try:
            create = f"CREATE TABLE {sql_ident(source.name)} AS SELECT * FROM "
            quoted = sql_literal(str(path))
            try:
                con.execute(create + source.load.format(path=quoted))
            except duckdb.Error:
                if not source.lenient:
                    raise
                checkpoint()
                # Ragged or oddly quoted files: pad short rows, skip the unparseable ones, keep the rest.
                con.execute(create + source.lenient.format(path=quoted))
        finally:
            folder.remove(name)  # the copy served its purpose; the database holds the rows
        return
    columns = _unique_names(source.columns)
    width = len(columns)
    rows = [list(row[:width]) + [None] * (width - len(row)) for row in source.rows]
    types = [_column_type([row[i] for row in rows]) for i in range(width)]
    cols = ", ".join(f"{sql_ident(c)} {t}" for c, t in zip(columns, types, strict=True))
    con.execute(f"CREATE TABLE {sql_ident(source.name)} ({cols or 'empty VARCHAR'})")
    if rows and width:
        marks = ", ".join("?" for _ in columns)
        con.executemany(
            f"INSERT INTO {sql_ident(source.name)} VALUES ({marks})",
            [[_cell(v, t) for v, t in zip(row, types, strict=True)] for row in rows],
        )


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def _unique_names(names: Sequence[str]) -> list[str]:
    """Column names from a header row: at most 64 characters, never repeated (DuckDB refuses duplicates)."""
    seen: set[str] = set()
    out = []
    for i, raw in enumerate(names):
        name = str(raw)[:64] or f"column{i + 1}"
        while name.lower() in seen:
            name = f"{name[:58]}_{i + 1}"
        seen.add(name.lower())
        out.append(name)
    return out


def _column_type(values: list[object]) -> str:
    """The narrowest DuckDB type that holds every non-empty value of a workbook column."""
    present = [v for v in values if v is not None and v != ""]
    if present and all(isinstance(v, bool) for v in present):
        return "BOOLEAN"
    numbers = [v for v in present if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if present and len(numbers) == len(present):
        fits = all(isinstance(v, int) and -(2**63) <= v < 2**63 for v in numbers)
        return "BIGINT" if fits else "DOUBLE"  # an integer past 64 bits is a number still, not an error
    if present and all(isinstance(v, datetime.datetime) for v in present):
        return "TIMESTAMP"
    if present and all(isinstance(v, datetime.date) for v in present):
        return "DATE"
    return "VARCHAR"


def _cell(value: object, column_type: str) -> object:
    if value is None or value == "":
        return None
    return str(value) if column_type == "VARCHAR" else value
