"""Exact operations on tables: one read-only SELECT over the artifact, run by DuckDB in memory.

The data is loaded into an in-memory table named `data` (and one table per workbook sheet) before
the query runs; then external access is switched off and the configuration locked, so the query can
read no file, URL or extension. Only a single SELECT statement is accepted; a timer interrupts
queries that run too long; results are capped in rows and characters, and say so when they are.
"""

from __future__ import annotations

import csv
import datetime
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ..errors import IntentError, MissingDependency, UnsupportedArtifact
from ..models import OpResult

MAX_ROWS = 1024
MAX_CHARS = 50_000
TIME_LIMIT_SECONDS = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSource:
    """How to load one table: a DuckDB table function over a file, or rows already in memory."""

    name: str
    sql: str | None = None  # e.g. read_csv('/abs/path', header=true)
    lenient_sql: str | None = None  # the same with forgiving options, tried when `sql` fails
    columns: Sequence[str] = ()
    rows: Sequence[Sequence[object]] = ()


class TableQueries:
    """One in-memory DuckDB database per artifact version, loaded once, queried read-only."""

    def __init__(self, sources: list[TableSource], *, label: str) -> None:
        try:
            import duckdb
        except ImportError as exc:
            raise MissingDependency("table queries need DuckDB: pip install duckdb") from exc
        self._duckdb = duckdb
        self._label = label
        self._lock = threading.Lock()
        self._con = duckdb.connect(":memory:")
        for source in sources:
            try:
                _load(self._con, source, duckdb)
            except duckdb.Error as exc:
                raise UnsupportedArtifact(
                    f"{label} could not be loaded as a table ({str(exc).splitlines()[0]}); read it as text instead"
                ) from exc
        self.row_counts = {s.name: self._scalar(f'SELECT count(*) FROM "{s.name}"') for s in sources}
        self._con.execute("SET enable_external_access = false")
        self._con.execute("SET lock_configuration = true")

    def _scalar(self, sql: str) -> int:
        row = self._con.execute(sql).fetchall()[0]
        return int(row[0])

    def describe(self, table: str = "data") -> list[tuple[str, str, int, int, str | None, str | None]]:
        """(column, type, nulls, distinct, min, max) for every column of `table`."""
        with self._lock:
            summary = self._con.execute(f'SUMMARIZE "{table}"').fetchall()
        # SUMMARIZE: column_name, column_type, min, max, approx_unique, avg, std, q25, q50, q75, count, null_percentage
        out = []
        for row in summary:
            count = int(row[10])
            nulls = round(float(row[11] or 0) * count / 100)
            out.append((str(row[0]), str(row[1]), nulls, int(row[4]), _short(row[2]), _short(row[3])))
        return out

    def project(self, destination: Path) -> OpResult:
        """Every row of `data` as TSV at `destination` (outside the user's tree), for agents that compute."""
        with self._lock:
            cursor = self._con.execute('SELECT * FROM "data"')
            columns = [d[0] for d in cursor.description or []]
            if not destination.exists():
                _write_tsv(cursor, columns, destination)
        rows = self.row_counts.get("data", 0)
        return OpResult(
            value=str(destination),
            scanned=f"{rows} rows of {self._label}",
            columns=columns,
            row_count=rows,
            rows_scanned=rows,
            query="projection",
            provenance=["tab-separated, header first, one line per row"],
        )

    def run(self, query: str) -> OpResult:
        """Run one read-only SELECT; the answer carries its columns, rows, counts and the query."""
        with self._lock:  # one DuckDB connection serves every session: one statement at a time
            try:
                statements = self._con.extract_statements(query)
            except self._duckdb.Error as exc:
                raise IntentError(f"the query does not parse: {str(exc).splitlines()[0]}") from exc
        select = self._duckdb.StatementType.SELECT
        if len(statements) != 1 or statements[0].type != select:
            raise IntentError(
                "intent.query must be exactly one read-only SELECT over the table `data` "
                f"(tables: {', '.join(self.row_counts)}); no ATTACH, COPY, INSTALL, LOAD, PRAGMA or SET"
            )
        timer = threading.Timer(TIME_LIMIT_SECONDS, self._con.interrupt)
        with self._lock:
            timer.start()
            try:
                cursor = self._con.execute(query)
                columns = [d[0] for d in cursor.description or []]
                fetched = cursor.fetchmany(MAX_ROWS + 1)
            except self._duckdb.InterruptException as exc:
                raise IntentError(
                    f"the query ran past {TIME_LIMIT_SECONDS:.0f} s and was stopped; aggregate or filter more"
                ) from exc
            except self._duckdb.Error as exc:
                raise IntentError(
                    f"the query failed: {str(exc).splitlines()[0]}; tables: {', '.join(self.row_counts)}"
                ) from exc
            finally:
                timer.cancel()
        capped = len(fetched) > MAX_ROWS
        rows = [[_json_value(v) for v in row] for row in fetched[:MAX_ROWS]]
        while rows and len(repr(rows)) > MAX_CHARS:
            rows = rows[: max(0, len(rows) * 3 // 4)]
            capped = True
        scanned = sum(self.row_counts.values())
        value: int | float | str = rows[0][0] if len(rows) == 1 and len(columns) == 1 else len(rows)  # type: ignore[assignment]
        return OpResult(
            value=value if isinstance(value, (int, float, str)) else str(value),
            scanned=f"{scanned} rows of {self._label}",
            provenance=[f"DuckDB over {', '.join(f'{n} ({c} rows)' for n, c in self.row_counts.items())}"],
            columns=columns,
            rows=rows,
            row_count=len(rows),
            rows_scanned=scanned,
            query=query,
            capped=capped,
        )


def _write_tsv(cursor: object, columns: list[str], destination: Path) -> int:
    destination.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    partial = destination.with_suffix(".partial")
    with partial.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(columns)
        while batch := cursor.fetchmany(10_000):  # type: ignore[attr-defined]
            writer.writerows([[_json_value(v) for v in row] for row in batch])
            written += len(batch)
    partial.replace(destination)  # never leave a half-written projection under the final name
    return written


def _load(con: object, source: TableSource, duckdb: object) -> None:
    execute = con.execute  # type: ignore[attr-defined]
    if source.sql is not None:
        try:
            execute(f'CREATE TABLE "{source.name}" AS SELECT * FROM {source.sql}')
        except duckdb.Error:  # type: ignore[attr-defined]
            if not source.lenient_sql:
                raise
            # Ragged or oddly quoted files: pad short rows, skip the unparseable ones, keep the rest.
            execute(f'CREATE TABLE "{source.name}" AS SELECT * FROM {source.lenient_sql}')
        return
    width = len(source.columns)
    rows = [list(row[:width]) + [None] * (width - len(row)) for row in source.rows]
    types = [_column_type([row[i] for row in rows]) for i in range(width)]
    cols = ", ".join(f'"{c}" {t}' for c, t in zip(source.columns, types, strict=True))
    execute(f'CREATE TABLE "{source.name}" ({cols})')
    if rows:
        marks = ", ".join("?" for _ in source.columns)
        con.executemany(  # type: ignore[attr-defined]
            f'INSERT INTO "{source.name}" VALUES ({marks})',
            [[_cell(v, t) for v, t in zip(row, types, strict=True)] for row in rows],
        )


def _short(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _json_value(value: object) -> object:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value)


def _column_type(values: list[object]) -> str:
    """The narrowest DuckDB type that holds every non-empty value of a workbook column."""
    present = [v for v in values if v is not None and v != ""]
    if present and all(isinstance(v, bool) for v in present):
        return "BOOLEAN"
    numbers = [v for v in present if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if present and len(numbers) == len(present):
        return "BIGINT" if all(isinstance(v, int) for v in numbers) else "DOUBLE"
    if present and all(isinstance(v, datetime.datetime) for v in present):
        return "TIMESTAMP"
    if present and all(isinstance(v, datetime.date) for v in present):
        return "DATE"
    return "VARCHAR"


def _cell(value: object, column_type: str) -> object:
    if value is None or value == "":
        return None
    return str(value) if column_type == "VARCHAR" else value
