"""Exact operations on tables: one read-only SELECT over the artifact, run by DuckDB.

The verified bytes of the artifact (never its path under a root, which could be swapped between our read
and DuckDB's) are copied into a private directory and loaded into a DuckDB database file beside them,
under a memory limit, one thread and the call's deadline. That database is then opened read-only with
external access off and the configuration locked.

A user query runs in a child process (`table_sandbox.py`) under an address-space limit, killed at the
deadline: DuckDB alone cannot stop `repeat('a', 1500000000)`. Only a single SELECT statement is accepted;
results are capped in rows, columns and characters (long cells are cut with a marker, in SQL), and say
so, with the true row count, instead of showing a wrong value.
"""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Settings
from ..deadline import TimedOut, checkpoint
from ..errors import IntentError, MissingDependency, OverLimit, UnsupportedArtifact
from ..models import OpResult
from .table_files import PrivateDir
from .table_load import TableSource, load_source, sql_ident, sql_literal
from .table_projection import write_projection
from .table_sandbox import json_value

MAX_ROWS = 1024
MAX_CHARS = 50_000
MAX_COLUMNS = 200
#: A cell longer than this is cut (with a marker saying how long it was) before it leaves DuckDB.
CELL_CHARS = 2_000
TIME_LIMIT_SECONDS = 10.0
#: DuckDB's memory when no server-wide ceiling is set (its own default is 80% of the machine's RAM).
DEFAULT_MEMORY_MB = 512
#: What Python and DuckDB take in a query process besides DuckDB's memory limit (about 400 MB of
#: address space measured at start with one thread).
_PROCESS_OVERHEAD_MB = 512
_SANDBOX = Path(__file__).with_name("table_sandbox.py")
_POLL_SECONDS = 0.05
#: Query processes that run at once. More would share the cores and each one's wall-clock limit would
#: measure the load, not the query: fifty concurrent sessions on two cores stopped sound queries at 10 s.
#: A process-wide bound on a resource, not a cache: the limit counts from when a query's process starts.
_QUERY_SLOTS = threading.BoundedSemaphore(max(2, os.cpu_count() or 2))
_ADVICE = "aggregate (count, sum, GROUP BY), filter with WHERE, select fewer columns, or add LIMIT"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableLimits:
    """DuckDB's memory for one table, fitted under the server-wide ceiling when one is set."""

    memory_mb: int = DEFAULT_MEMORY_MB

    @classmethod
    def from_settings(cls, settings: Settings) -> TableLimits:
        if settings.max_memory_mb:
            return cls(memory_mb=max(64, min(DEFAULT_MEMORY_MB, settings.max_memory_mb // 4)))
        return cls()


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHandle:
    """A table database built in a worker process, handed to the server that adopts it: plain values only."""

    folder: Path
    label: str
    limits: TableLimits
    row_counts: dict[str, int]


class TableQueries:
    """One DuckDB database per artifact version, loaded once from its verified bytes, queried read-only.

    It is built where the bytes are parsed (a worker process), then handed over: the worker closes its
    connection and gives up the folder (`handover`), the server opens the same database read-only and
    owns the folder from then on (`adopt`)."""

    def __init__(self, sources: list[TableSource], *, label: str, limits: TableLimits | None = None) -> None:
        try:
            import duckdb
        except ImportError as exc:
            raise MissingDependency("table queries need DuckDB: pip install duckdb") from exc
        self._duckdb = duckdb
        self._label = label
        self._limits = limits or TableLimits()
        self._lock = threading.Lock()
        try:
            self._dir = PrivateDir.fresh()
        except OSError as exc:
            reason = exc.strerror
            raise UnsupportedArtifact(f"{label}: no private temporary directory for its table ({reason})") from exc
        self._db = self._dir.path / "tables.duckdb"
        try:
            self.row_counts = self._build(sources)
            self._con = duckdb.connect(str(self._db), read_only=True, config=self._config(spill=False))
            self._con.execute("SET enable_external_access = false")
            self._con.execute("SET lock_configuration = true")
            self._dir.done_writing()
        except duckdb.Error as exc:  # the count, or reopening the database (a full disk)
            self._dir.close()
            raise UnsupportedArtifact(f"{label} could not be loaded as a table ({_first_line(exc)})") from exc
        except BaseException:
            self._dir.close()
            raise
        # The database file lives as long as this object (the parse cache decides how long).
        self._finalizer = weakref.finalize(self, _close, self._con, self._dir)

    def handover(self) -> TableHandle:
        """Give the database to another process: close this connection and stop owning the folder."""
        with self._lock:
            self._finalizer.detach()
            self._con.close()
            self._dir.done_writing()
        return TableHandle(folder=self._dir.path, label=self._label, limits=self._limits, row_counts=self.row_counts)

    @classmethod
    def adopt(cls, handle: TableHandle) -> TableQueries:
        """The table a worker built, opened read-only here; this object owns its folder from now on."""
        import duckdb

        queries = cls.__new__(cls)
        queries._duckdb = duckdb
        queries._label = handle.label
        queries._limits = handle.limits
        queries._lock = threading.Lock()
        queries.row_counts = dict(handle.row_counts)
        queries._dir = PrivateDir(handle.folder, owned=True)
        queries._db = handle.folder / "tables.duckdb"
        try:
            queries._con = duckdb.connect(str(queries._db), read_only=True, config=queries._config(spill=False))
            queries._con.execute("SET enable_external_access = false")
            queries._con.execute("SET lock_configuration = true")
            queries._dir.done_writing()
        except duckdb.Error as exc:
            queries._dir.close()
            raise UnsupportedArtifact(f"{handle.label} could not be opened as a table ({_first_line(exc)})") from exc
        queries._finalizer = weakref.finalize(queries, _close, queries._con, queries._dir)
        return queries

    def _config(self, *, spill: bool) -> dict[str, Any]:
        return {
            "memory_limit": f"{self._limits.memory_mb}MB",
            "threads": 1,
            # Loading may spill to the private directory (bounded); reads never spill.
            "temp_directory": str(self._dir.path / "spill") if spill else "",
            "max_temp_directory_size": f"{4 * self._limits.memory_mb}MB",
        }

    def _build(self, sources: list[TableSource]) -> dict[str, int]:
        con = self._duckdb.connect(str(self._db), config=self._config(spill=True))
        try:
            # Even our own loading SQL reaches only the private copies, and nothing can loosen that.
            con.execute(f"SET allowed_directories = [{sql_literal(str(self._dir.path) + os.sep)}]")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            for number, source in enumerate(sources):
                try:
                    with _interrupted_at_deadline(con):
                        load_source(con, source, self._dir, f"source{number}{source.suffix}", self._duckdb)
                except self._duckdb.OutOfMemoryException as exc:
                    raise OverLimit(
                        f"{self._label} needs more than {self._limits.memory_mb} MB to load as a table: refused; "
                        "read rows by anchor or needles, or raise SPARSEREAD_MAX_MEMORY_MB"
                    ) from exc
                except self._duckdb.Error as exc:
                    # DuckDB names the private copy it read: the message names the file the client asked for.
                    copy = self._dir.path / f"source{number}{source.suffix}"
                    reason = _first_line(exc).replace(str(copy), self._label).replace(str(self._dir.path), "...")
                    raise UnsupportedArtifact(
                        f"{self._label} could not be loaded as a table ({reason}); read it as text instead"
                    ) from exc
            count = "SELECT count(*) FROM {}"
            return {s.name: int(con.execute(count.format(sql_ident(s.name))).fetchall()[0][0]) for s in sources}
        finally:
            con.close()

    def describe(self, table: str = "data") -> list[tuple[str, str, int, int, str | None, str | None]]:
        """(column, type, nulls, distinct, min, max) for every column of `table`."""
        with self._lock, _interrupted_at_deadline(self._con):
            try:
                summary = self._con.execute(f"SUMMARIZE {sql_ident(table)}").fetchall()
            except self._duckdb.Error:  # too large or too slow to summarize: the outline goes without
                checkpoint()
                return []
        # SUMMARIZE: column_name, column_type, min, max, approx_unique, avg, std, q25, q50, q75, count, null_percentage
        out = []
        for row in summary[:MAX_COLUMNS]:
            count = int(row[10])
            nulls = round(float(row[11] or 0) * count / 100)
            out.append((_short(row[0]) or "", str(row[1]), nulls, int(row[4]), _short(row[2]), _short(row[3])))
        return out

    def sample(self, limit: int) -> tuple[list[str], list[list[object]]]:
        """The first rows of `data` (at most `limit`, and MAX_CHARS in all; cells cut), for renderings of
        formats that are not text."""
        rows: list[list[object]] = []
        chars = 0
        with self._lock, _interrupted_at_deadline(self._con), self._typed("rendered"):
            cursor = self._con.execute(f'SELECT * FROM "data" LIMIT {int(limit)}')
            columns = [str(d[0]) for d in cursor.description or []]
            while chars <= MAX_CHARS and (row := cursor.fetchone()) is not None:
                cells = [_cut_cell(json_value(v)) for v in row]
                chars += sum(len(str(c)) + 1 for c in cells)
                rows.append(cells)
        return columns, rows

    @contextmanager
    def _typed(self, doing: str) -> Iterator[None]:
        """DuckDB's own errors (out of memory, say) on our SQL, as a refusal the model can act on."""
        try:
            yield
        except self._duckdb.Error as exc:
            checkpoint()  # an interruption at the deadline is the deadline's TimedOut
            raise OverLimit(
                f"{self._label} could not be {doing} ({_first_line(exc)}): read rows by anchor or needles, or "
                "compute with intent.query"
            ) from exc

    def project(self, destination: Path, *, quota_bytes: int) -> OpResult:
        """Every row of `data` as TSV at `destination` (outside the user's tree), for agents that compute:
        capped in rows and bytes, within the projections' shared disk quota, and written only into a
        private directory."""
        total = self.row_counts.get("data", 0)
        with self._lock, _interrupted_at_deadline(self._con), self._typed("projected"):
            cursor = self._con.execute('SELECT * FROM "data"')
            columns = [str(d[0]) for d in cursor.description or []]
            written = write_projection(cursor, columns, destination, quota_bytes=quota_bytes, total_rows=total)
        capped = written.rows < total
        scanned = f"{total} rows of {self._label}"
        if capped:
            scanned = (
                f"the first {written.rows:,} of {total:,} rows of {self._label} (the projection's cap was reached: "
                "use intent.query to compute over every row)"
            )
        return OpResult(
            value=str(written.path),
            scanned=scanned,
            columns=columns,
            row_count=written.rows,
            rows_scanned=total,
            query="projection",
            provenance=["tab-separated, header first, one line per row"],
            capped=capped,
        )

    def run(self, query: str) -> OpResult:
        """Run one read-only SELECT in a killable child process; the answer carries its columns, rows,
        counts, the query, and what was cut."""
        with self._lock:
            try:
                statements = self._con.extract_statements(query)
            except self._duckdb.Error as exc:
                raise IntentError(f"the query does not parse: {_first_line(exc)}") from exc
        select = self._duckdb.StatementType.SELECT
        if len(statements) != 1 or statements[0].type != select:
            raise IntentError(
                "intent.query must be exactly one read-only SELECT over the table `data` "
                f"(tables: {', '.join(self.row_counts)}); no ATTACH, COPY, INSTALL, LOAD, PRAGMA or SET"
            )
        request = {
            "db": str(self._db),
            "query": statements[0].query.strip().rstrip(";"),
            "memory_mb": self._limits.memory_mb,
            "address_space_mb": self._limits.memory_mb + _PROCESS_OVERHEAD_MB,
            "max_rows": MAX_ROWS,
            "max_chars": MAX_CHARS,
            "max_columns": MAX_COLUMNS,
            "cell_chars": CELL_CHARS,
        }
        answer = _sandboxed(request)
        if "error" in answer:
            if answer["error"] == "memory":
                raise IntentError(
                    f"the query needed more than its {self._limits.memory_mb} MB and was stopped; {_ADVICE}"
                )
            raise IntentError(
                f"the query failed: {str(answer.get('message'))[:200]}; tables: {', '.join(self.row_counts)}"
            )
        return self._result(query, answer)

    def _result(self, query: str, answer: dict[str, Any]) -> OpResult:
        columns = [str(c) for c in answer["columns"]]
        rows: list[list[Any]] = answer["rows"]
        total: int | None = answer["row_count"]
        scanned = sum(self.row_counts.values())
        notes = [f"DuckDB over {', '.join(f'{n} ({c} rows)' for n, c in self.row_counts.items())}"]
        if answer["rows_cut"]:
            of = f"{total:,}" if total is not None else "more"
            notes.append(f"showing the first {len(rows):,} of {of} result rows (the result cap): {_ADVICE}")
        if answer["cells_cut"]:
            notes.append(
                f"{answer['cells_cut']} cells longer than {answer['cell_chars']:,} chars are cut, each marked "
                "'… [cut: N of M chars]'"
            )
        if answer["column_count"] > len(columns):
            notes.append(f"showing {len(columns)} of {answer['column_count']} columns")
        single = len(rows) == 1 and len(columns) == 1 and answer["column_count"] == 1 and not answer["rows_cut"]
        value = rows[0][0] if single else (total if total is not None else len(rows))
        return OpResult(
            value=value if isinstance(value, (int, float, str)) else str(value),
            scanned=f"{scanned} rows of {self._label}",
            provenance=notes,
            columns=columns,
            rows=rows,
            row_count=len(rows),
            rows_scanned=scanned,
            query=query,
            capped=bool(answer["rows_cut"] or answer["cells_cut"] or answer["column_count"] > len(columns)),
        )


def _sandboxed(request: dict[str, Any]) -> dict[str, Any]:
    """Run the request in a fresh child once a query slot is free (waiting under the call's deadline)."""
    while not _QUERY_SLOTS.acquire(timeout=_POLL_SECONDS):
        try:
            checkpoint()
        except TimedOut as exc:
            raise TimedOut(f"{exc} (the SQL query waited for other queries and never started)") from exc
    try:
        return _run_child(request)
    finally:
        _QUERY_SLOTS.release()


def _run_child(request: dict[str, Any]) -> dict[str, Any]:
    """Run the request in a fresh child; kill it at the query's limit or the call's deadline."""
    limit = TIME_LIMIT_SECONDS
    started = time.monotonic()
    payload = json.dumps(request)
    child = subprocess.Popen(
        # -P: the script's folder (readers/, with code.py and html.py) must not shadow the standard library.
        [sys.executable, "-P", str(_SANDBOX)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        encoding="ascii",
        start_new_session=True,  # a client's Ctrl-C to the server is not the query's to receive
    )
    first: str | None = payload  # JSON is ASCII: no locale can garble it either way
    try:
        while True:
            try:
                out, _ = child.communicate(first, timeout=_POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                first = None
            try:
                checkpoint()
            except TimedOut as exc:
                raise TimedOut(f"{exc} (the SQL query was stopped: {_ADVICE})") from exc
            if time.monotonic() - started >= limit:
                raise IntentError(f"the query ran past {limit:g} s and was stopped; {_ADVICE}")
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()  # reap it and close its pipes
    try:
        answer: dict[str, Any] = json.loads(out)
    except ValueError:
        # No answer: aborted by its address-space limit (DuckDB aborts when it cannot allocate a thread), or
        # killed by the system; or DuckDB is missing for this interpreter.
        if child.returncode < 0:
            return {"error": "memory", "message": f"the query process was stopped by signal {-child.returncode}"}
        return {"error": "failed", "message": f"the query process ended with status {child.returncode} and no answer"}
    return answer


@contextmanager
def _interrupted_at_deadline(con: Any) -> Iterator[None]:
    """Interrupt DuckDB from a watcher thread once the call's deadline passes (or the client cancels),
    then raise the deadline's TimedOut instead of DuckDB's interruption."""
    stop = threading.Event()
    fired: list[BaseException] = []

    def watch() -> None:
        while not stop.wait(_POLL_SECONDS):
            try:
                checkpoint()  # the same Deadline: the watcher runs in a copy of the caller's context
            except TimedOut as exc:
                fired.append(exc)
                con.interrupt()
                return

    watcher = threading.Thread(target=contextvars.copy_context().run, args=(watch,), daemon=True)
    watcher.start()
    try:
        yield
    except Exception as exc:
        if fired:
            raise fired[0] from exc
        raise
    finally:
        stop.set()
        watcher.join()


def _close(con: Any, folder: PrivateDir) -> None:
    try:
        con.close()
    finally:
        folder.close()


def _first_line(exc: BaseException) -> str:
    line = (str(exc).splitlines() or [type(exc).__name__])[0]
    return line if len(line) <= 200 else line[:199] + "…"


def _short(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _cut_cell(value: object) -> object:
    if isinstance(value, str) and len(value) > CELL_CHARS:
        return value[:CELL_CHARS] + f"… [cut: {CELL_CHARS:,} of {len(value):,} chars]"
    return value
