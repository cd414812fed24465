"""Hostile tables and workbooks: SQL, projections, swapped or rewritten files, and huge cells are answered
with a typed error or a bounded answer within the call's limit, and nothing outside the roots leaks."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import anyio
import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Intent, IntentError, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import Deadline, TimedOut, deadline
from sparseread_mcp.errors import OverLimit, SparsereadError
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.readers import table_projection
from sparseread_mcp.readers.table import TableReader
from sparseread_mcp.readers.table_files import sweep_left_behind
from sparseread_mcp.serve.server import create_server

openpyxl = pytest.importorskip("openpyxl")
duckdb = pytest.importorskip("duckdb")

#: A hang guard only: every answer below is expected long before it.
_GUARD_SECONDS = 120


def _query(engine: ReadEngine, target: str, query: str) -> object:
    return engine.read("s", ReadRequest(target=target, intent=Intent(query=query), budget_tokens=22_000))


def _notes_csv(path: Path, rows: int, note_chars: int) -> Path:
    lines = ["id,note"] + [f"{i},{'n' * note_chars}" for i in range(1, rows + 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


# 1. SQL that allocates past any sane limit, or runs past the call's deadline ---------------------------


def test_sql_building_a_huge_string_gets_a_typed_error_within_the_call_limit(tmp_path: Path) -> None:
    _notes_csv(tmp_path / "t.csv", 3, 5)

    async def run() -> str:
        # The limit only bounds the attack; the query after it starts a fresh process, on a busy machine too.
        settings = Settings(roots=(tmp_path,), call_timeout_seconds=10)
        async with Client(create_server(settings)) as client:
            with anyio.fail_after(_GUARD_SECONDS):
                attack = await client.call_tool(
                    "sro_read",
                    {"target": "t.csv", "intent": {"query": "SELECT length(repeat('a', 1500000000)) FROM data"}},
                )
                # The server still answers afterwards (the attack left nothing running or locked).
                after = await client.call_tool(
                    "sro_read", {"target": "t.csv", "intent": {"query": "SELECT count(*) FROM data"}}
                )
        assert answer_record(after) is not None and answer_record(after)["result"]["value"] == 3
        assert attack.is_error
        return str(attack.content[0].text)  # type: ignore[union-attr]

    message = anyio.run(run)
    assert "internal error" not in message
    assert re.search(r"(MB and was stopped|ran past)", message), message
    assert "LIMIT" in message  # says what to do instead


def test_sql_past_the_call_deadline_is_stopped_with_a_typed_error(tmp_path: Path) -> None:
    _notes_csv(tmp_path / "t.csv", 3, 5)

    async def run() -> str:
        settings = Settings(roots=(tmp_path,), call_timeout_seconds=2)
        async with Client(create_server(settings)) as client:
            with anyio.fail_after(_GUARD_SECONDS):
                slow = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
                result = await client.call_tool("sro_read", {"target": "t.csv", "intent": {"query": slow}})
        assert result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]

    message = anyio.run(run)
    assert "limit" in message and "stopped" in message and "internal error" not in message


def _sandbox_processes() -> list[str]:
    """The query processes (table_sandbox.py) alive on this machine that this test process started."""
    mine = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parent = re.search(r"^PPid:\s+(\d+)", status, re.MULTILINE)
        if "table_sandbox.py" in command and parent and parent.group(1) == mine:
            found.append(entry.name)
    return found


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the process table from /proc")
def test_another_session_is_answered_while_a_long_query_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No clock decides this: the long query can only end by being cancelled (its own limit and its call's
    are past the hang guard), so the other session is answered while it runs however busy the machine is;
    the cancelled query's process is then gone. (One session's calls run one at a time, by design: two MCP
    clients of one in-process server share its connection's session, so the sessions are named here.)"""
    from sparseread_mcp.readers import table_query

    monkeypatch.setattr(table_query, "TIME_LIMIT_SECONDS", 10 * _GUARD_SECONDS)
    _notes_csv(tmp_path / "t.csv", 3, 5)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    assert _query(engine, "t.csv", "SELECT 1").result.value == 1  # type: ignore[attr-defined]  # parsed
    slow = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
    calls: list[Deadline] = []
    outcome: list[BaseException] = []

    def long_query() -> None:
        with deadline(10 * _GUARD_SECONDS) as limit:
            calls.append(limit)
            try:
                engine.read("attacker", ReadRequest(target="t.csv", intent=Intent(query=slow)))
            except BaseException as exc:  # the test reads what stopped it
                outcome.append(exc)

    attacker = threading.Thread(target=long_query, daemon=True)
    attacker.start()
    count = ReadRequest(target="t.csv", intent=Intent(query="SELECT count(*) FROM data"))
    answered: list[object] = []
    try:
        started = time.monotonic()
        while not _sandbox_processes() and time.monotonic() - started < _GUARD_SECONDS:
            time.sleep(0.05)
        assert _sandbox_processes(), "the long query never started its process"
        reader = threading.Thread(target=lambda: answered.append(engine.read("reader", count).result.value))
        reader.start()
        reader.join(_GUARD_SECONDS)  # a hang guard: a query that waits for the other is not answered in time
        assert answered == [3] and attacker.is_alive(), "the other session was not answered while the query ran"
        assert _sandbox_processes()
    finally:
        while not calls and attacker.is_alive():
            time.sleep(0.01)
        if calls:
            calls[0].cancelled.set()  # as a client's cancellation does
        attacker.join(_GUARD_SECONDS)
    assert not attacker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], TimedOut) and "cancelled" in str(outcome[0])
    assert not _sandbox_processes(), "the cancelled query's process is still running"
    assert engine.read("attacker", count).result.value == 3  # type: ignore[union-attr]


def test_the_sql_attack_stays_under_a_process_memory_ceiling(tmp_path: Path) -> None:
    """The whole library in a child capped at 1.5 GB of address space ends with the typed error, not
    MemoryError and not killed."""
    _notes_csv(tmp_path / "t.csv", 3, 5)
    script = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        from pathlib import Path
        from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
        from sparseread_mcp.errors import SparsereadError
        engine = ReadEngine(Settings(roots=(Path({str(tmp_path)!r}),), max_memory_mb=1536))
        try:
            engine.read("s", ReadRequest(target="t.csv", intent=Intent(query="SELECT repeat('a', 1500000000) s")))
        except SparsereadError as exc:
            print("TYPED", type(exc).__name__, str(exc)[:300])
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=_GUARD_SECONDS, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("TYPED IntentError") and "MB and was stopped" in done.stdout, done.stdout


def test_duckdb_is_configured_before_its_configuration_is_locked(tmp_path: Path) -> None:
    _notes_csv(tmp_path / "t.csv", 3, 5)
    engine = ReadEngine(Settings(roots=(tmp_path,), max_memory_mb=1024))
    query = (
        "SELECT current_setting('memory_limit') m, current_setting('threads') t, "
        "current_setting('enable_external_access') e, current_setting('lock_configuration') l"
    )
    pack = _query(engine, "t.csv", query)
    memory, threads, external, locked = pack.result.rows[0]  # type: ignore[attr-defined]
    assert memory.endswith("MiB") and float(memory.split()[0]) <= 256  # a quarter of the 1 GB ceiling
    assert threads == 1 and external is False and locked is True
    with pytest.raises(IntentError):
        _query(engine, "t.csv", "SELECT * FROM read_text('/etc/hostname')")


# 2. Results report what was cut instead of showing wrong values -----------------------------------------


def test_a_long_aggregate_is_cut_with_a_marker_and_the_count_is_kept(tmp_path: Path) -> None:
    _notes_csv(tmp_path / "notes.csv", 300, 2_000)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    pack = _query(engine, "notes.csv", "SELECT count(*) n, string_agg(note, ' ') s FROM data")
    result = pack.result  # type: ignore[attr-defined]
    assert result.rows and result.rows[0][0] == 300  # was value=0, rows=[]
    assert result.value == 1 and result.capped is True
    cell = result.rows[0][1]
    assert cell.startswith("nnnn") and re.search(r"… \[cut: [\d,]+ of 600,299 chars\]$", cell)
    assert any("cut" in note for note in result.provenance)


def test_cut_rows_report_the_true_row_count(tmp_path: Path) -> None:
    _notes_csv(tmp_path / "notes.csv", 3_000, 8)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    result = _query(engine, "notes.csv", "SELECT id, note FROM data ORDER BY id").result  # type: ignore[attr-defined]
    assert result.capped is True and result.value == 3_000
    assert 0 < result.row_count == len(result.rows) < 3_000
    assert result.rows[0][0] == 1 and [r[0] for r in result.rows] == list(range(1, len(result.rows) + 1))
    assert any("of 3,000 result rows" in note for note in result.provenance)


# 3. Projections: no planted link is written through; rows, bytes and time are capped -------------------


def _projection_engine(tmp_path: Path) -> tuple[ReadEngine, Path, Path]:
    root, cache = tmp_path / "root", tmp_path / "cache"
    root.mkdir()
    _notes_csv(root / "notes.csv", 200, 10)
    return ReadEngine(Settings(roots=(root,), cache_dir=cache, native_fit_tokens=0)), root, cache


def test_a_planted_partial_or_final_link_never_redirects_a_projection(tmp_path: Path) -> None:
    engine, root, cache = _projection_engine(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    folder = cache / "projections"
    folder.mkdir(parents=True)
    fingerprint = hashlib.sha256((root / "notes.csv").read_bytes()).hexdigest()
    final = folder / f"{fingerprint[:16]}-notes.tsv"
    os.symlink(victim, final.with_suffix(".partial"))  # the name the old writer used
    pack = engine.read("s", ReadRequest(target="notes.csv", view="projection"))
    assert victim.read_text() == "precious"
    os.symlink(victim, tmp_path / "link")
    os.replace(tmp_path / "link", final)  # now the final name itself is a planted link
    again = engine.read("t", ReadRequest(target="notes.csv", view="projection"))
    assert victim.read_text() == "precious"
    for answer in (pack, again):
        written = Path(str(answer.result.value))  # type: ignore[union-attr]
        assert not written.is_symlink() and written.read_text().startswith("id\tnote\n1\tnnnnnnnnnn\n")
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
    assert not [p for p in folder.iterdir() if p.name.endswith(".partial") and not p.is_symlink()]


def test_a_projection_stops_at_its_row_and_byte_caps_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, root, _ = _projection_engine(tmp_path)
    duckdb.sql(f"COPY (SELECT range % 10 AS v FROM range(3000000)) TO '{root / 'many.parquet'}' (FORMAT parquet)")
    assert (root / "many.parquet").stat().st_size < 200_000
    monkeypatch.setattr(table_projection, "MAX_PROJECTION_ROWS", 500)
    result = engine.read("s", ReadRequest(target="many.parquet", view="projection")).result
    assert result is not None and result.capped is True and result.row_count == 500
    assert result.rows_scanned == 3_000_000 and "cap" in result.scanned
    assert len(Path(str(result.value)).read_text().splitlines()) == 501
    monkeypatch.setattr(table_projection, "MAX_PROJECTION_BYTES", 1_000)
    small = engine.read("t", ReadRequest(target="notes.csv", view="projection")).result
    assert small is not None and small.capped is True and 0 < small.row_count < 200  # type: ignore[operator]
    assert Path(str(small.value)).stat().st_size <= 1_000


def test_a_projection_of_a_tiny_parquet_with_many_rows_ends_within_the_call_limit(tmp_path: Path) -> None:
    root, cache = tmp_path / "root", tmp_path / "cache"
    root.mkdir()
    duckdb.sql(f"COPY (SELECT range % 10 AS v FROM range(30000000)) TO '{root / 'many.parquet'}' (FORMAT parquet)")
    assert (root / "many.parquet").stat().st_size < 2_000_000

    async def run() -> tuple[bool, str]:
        settings = Settings(roots=(root,), cache_dir=cache, call_timeout_seconds=2)
        async with Client(create_server(settings)) as client:
            with anyio.fail_after(30):  # a hang guard 15 times the call's limit (the old writer took 69 s)
                result = await client.call_tool("sro_read", {"target": "many.parquet", "view": "projection"})
        return result.is_error, str(result.content[0].text)  # type: ignore[union-attr]

    failed, text = anyio.run(run)
    if failed:  # stopped at the deadline, loading or writing
        assert "ran past" in text and "internal error" not in text
    else:
        assert '"capped":true' in text.replace(" ", "")
    written = list((cache / "projections").iterdir()) if (cache / "projections").exists() else []
    assert not [p for p in written if p.name.endswith(".partial")]
    assert sum(p.stat().st_size for p in written) <= table_projection.MAX_PROJECTION_BYTES


def test_a_projection_that_fails_midway_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, _, cache = _projection_engine(tmp_path)
    engine.read("s", ReadRequest(target="notes.csv#row=1"))  # parsed before the clock is rigged
    calls = {"n": 0}

    def expiring() -> None:
        calls["n"] += 1
        if calls["n"] > 1:
            raise TimedOut("the call ran past its 1 s limit and was stopped")

    monkeypatch.setattr(table_projection, "MAX_PROJECTION_ROWS", 10_000)
    monkeypatch.setattr(table_projection, "_BATCH_ROWS", 50)
    monkeypatch.setattr(table_projection, "checkpoint", expiring)
    with pytest.raises(TimedOut):
        engine.read("s", ReadRequest(target="notes.csv", view="projection"))
    assert list((cache / "projections").iterdir()) == []


# 4. DuckDB never re-opens the path: swapped and rewritten files -------------------------------------------


def test_a_csv_swapped_for_an_outside_link_after_it_was_read_never_reaches_duckdb(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.csv").write_text("id,note\n1,OUTSIDE-MARK\n")
    (root / "t.csv").write_text("id,note\n1,inside\n")
    location = Roots((root,)).resolve("t.csv")
    artifact = load_artifact(location, binary=True)
    (root / "t.csv").unlink()
    os.symlink(outside / "secret.csv", root / "t.csv")  # swapped between our read and DuckDB's
    parsed = TableReader().parse(artifact, passage_chars=500)
    assert parsed.queries is not None
    answer = parsed.queries.run("SELECT string_agg(note, ',') FROM data")
    assert answer.value == "inside" and "OUTSIDE-MARK" not in json.dumps(answer.model_dump())


def test_a_csv_swapped_for_an_outside_link_in_a_race_never_leaks(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.csv").write_text("id,note\n1,OUTSIDE-MARK\n")
    target = root / "t.csv"
    target.write_text("id,note\n0,inside\n")
    stop = threading.Event()

    def swap() -> None:
        version = 0
        while not stop.is_set() and version < 5_000:
            version += 1
            os.symlink(outside / "secret.csv", root / "link.tmp")
            os.replace(root / "link.tmp", target)
            (root / "real.tmp").write_text(f"id,note\n{version},inside\n")  # a new version: a new parse
            os.replace(root / "real.tmp", target)

    engine = ReadEngine(Settings(roots=(root,), native_fit_tokens=0))
    swapper = threading.Thread(target=swap)
    swapper.start()
    answers = []
    try:
        for _ in range(40):
            try:
                answers.append(json.dumps(_query(engine, "t.csv", "SELECT * FROM data").model_dump()))  # type: ignore[attr-defined]
            except SparsereadError as exc:  # refused (outside the roots, changed while read): fine
                answers.append(str(exc))
    finally:
        stop.set()
        swapper.join()
    assert not [a for a in answers if "OUTSIDE-MARK" in a]


def test_a_csv_rewritten_while_read_pairs_each_fingerprint_with_its_own_rows(tmp_path: Path) -> None:
    target = tmp_path / "t.csv"

    def version(n: int) -> str:  # every version differs, so every answer parses anew
        return f"id,note\n1,VERSION-{n}\n" + "".join(f"{k},filler {k} of version {n}\n" for k in range(2, 200))

    target.write_text(version(0))
    stop = threading.Event()

    def rewrite() -> None:
        n = 0
        while not stop.is_set() and n < 2_000:
            n += 1
            (tmp_path / "next.tmp").write_text(version(n))
            os.replace(tmp_path / "next.tmp", target)

    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    writer = threading.Thread(target=rewrite)
    writer.start()
    checked = 0
    try:
        for _ in range(10):
            try:
                pack = _query(engine, "t.csv", "SELECT note FROM data WHERE id = 1")
            except SparsereadError:
                continue
            shown = int(pack.result.rows[0][0].removeprefix("VERSION-"))  # type: ignore[attr-defined]
            expected = hashlib.sha256(version(shown).encode()).hexdigest()
            assert pack.episode.artifact.fingerprint == expected  # type: ignore[attr-defined]
            checked += 1
    finally:
        stop.set()
        writer.join()
    assert checked > 0


# 5. Workbooks: long shared strings, long error messages, injected header names ---------------------------

_SHEET = "xl/worksheets/sheet1.xml"
_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _workbook(path: Path, parts: dict[str, bytes]) -> Path:
    """A real openpyxl workbook with some parts replaced (or added)."""
    book = openpyxl.Workbook()
    book.active.title = "Plan"
    book.active.append(["item", "amount"])
    plain = path.with_suffix(".plain.xlsx")
    book.save(plain)
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        names = set()
        for member in source.infolist():
            names.add(member.filename)
            target.writestr(member.filename, parts.get(member.filename, source.read(member)))
        for name, data in parts.items():
            if name not in names:
                target.writestr(name, data)
    plain.unlink()
    return path


def _shared_string_book(path: Path, text: str, cells: int) -> Path:
    shared = f'<sst xmlns="{_NS}" count="{cells}" uniqueCount="1"><si><t>{text}</t></si></sst>'
    body = "".join(f'<row r="{r}"><c r="A{r}" t="s"><v>0</v></c></row>' for r in range(1, cells + 1))
    sheet = f'<worksheet xmlns="{_NS}"><sheetData>{body}</sheetData></worksheet>'
    types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
        '<Override PartName="/xl/sharedStrings.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
        "</Types>"
    )
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
        'Target="worksheets/sheet1.xml"/>'
        '<Relationship Id="rId9" '
        'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" '
        'Target="sharedStrings.xml"/></Relationships>'
    )
    return _workbook(
        path,
        {
            "[Content_Types].xml": types.encode(),
            "xl/_rels/workbook.xml.rels": rels.encode(),
            _SHEET: sheet.encode(),
            "xl/sharedStrings.xml": shared.encode(),
        },
    )


def test_a_long_shared_string_repeated_in_many_cells_is_cut_in_every_cell(tmp_path: Path) -> None:
    text = os.urandom(300_000).hex()  # 600k characters that do not compress: passes the ratio check
    _shared_string_book(tmp_path / "shared.xlsx", text, 100)
    artifact = load_artifact(Roots((tmp_path,)).resolve("shared.xlsx"), binary=True)
    table = TableReader().parse(artifact, passage_chars=500)
    assert len(table.artifact.text) < 100 * 33_000  # was 100 copies of 600k characters
    assert table.artifact.text.count("… [cut: 32,767 of 600,000 chars]") == 100
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    pack = _query(engine, "shared.xlsx", "SELECT count(*) n, max(length(c)) FROM data AS t(c)")
    assert pack.result.rows == [[99, 32_767 + len("… [cut: 32,767 of 600,000 chars]")]]  # type: ignore[attr-defined]


def test_workbook_text_past_its_limit_is_refused_in_a_short_message(tmp_path: Path) -> None:
    _shared_string_book(tmp_path / "many.xlsx", os.urandom(20_000).hex(), 300)  # 300 x 32,767 > 4 MB
    engine = ReadEngine(Settings(roots=(tmp_path,), max_parse_bytes=4_000_000))
    with pytest.raises(OverLimit) as refusal:
        engine.read("s", ReadRequest(target="many.xlsx"))
    assert "characters of cell text" in str(refusal.value) and len(str(refusal.value)) < 600


def test_a_damaged_cell_error_quotes_only_a_snippet(tmp_path: Path) -> None:
    huge = "x" * 1_000_000  # a "date" openpyxl cannot convert: its error quoted the whole cell
    cell = f'<row r="1"><c r="A1" t="d"><v>{huge}</v></c></row>'
    sheet = f'<worksheet xmlns="{_NS}"><sheetData>{cell}</sheetData></worksheet>'
    _workbook(tmp_path / "bad.xlsx", {_SHEET: sheet.encode()})

    async def run() -> str:
        async with Client(create_server(Settings(roots=(tmp_path,), call_timeout_seconds=20))) as client:
            with anyio.fail_after(_GUARD_SECONDS):
                result = await client.call_tool("sro_read", {"target": "bad.xlsx"})
        assert result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]

    message = anyio.run(run)
    assert len(message) < 600 and "internal error" not in message, message[:300]


def test_a_header_cell_cannot_inject_sql_into_the_load(tmp_path: Path) -> None:
    written = tmp_path / "injected.csv"
    header = f"a\" VARCHAR); COPY (SELECT 42) TO '{written}' (FORMAT csv); CREATE TABLE x (\"b"
    book = openpyxl.Workbook()
    book.active.append([header, "amount"])
    book.active.append(["x", 1])
    book.save(tmp_path / "inj.xlsx")
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    pack = _query(engine, "inj.xlsx", "SELECT sum(amount) FROM data")
    assert pack.result.value == 1  # type: ignore[attr-defined]
    assert not written.exists()


def test_sheet_titles_that_fold_to_one_table_name_all_load(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.title = "Q1 plan"
    book.active.append(["a"])
    book.create_sheet("Q1_plan").append(["b"])
    book.save(tmp_path / "two.xlsx")
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    result = _query(engine, "two.xlsx", "SELECT count(*) FROM Q1_plan_2").result  # type: ignore[attr-defined]
    assert result.value == 0


def test_the_shared_string_attack_stays_under_a_process_memory_ceiling(tmp_path: Path) -> None:
    """A 600k-character shared string in 300 cells (180M characters once expanded) read by the library in a
    child capped at 1.5 GB of address space: a bounded answer, not MemoryError and not killed."""
    _shared_string_book(tmp_path / "shared.xlsx", os.urandom(300_000).hex(), 300)
    script = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        from pathlib import Path
        from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
        from sparseread_mcp.errors import SparsereadError
        engine = ReadEngine(Settings(roots=(Path({str(tmp_path)!r}),), native_fit_tokens=0))
        try:
            pack = engine.read("s", ReadRequest(target="shared.xlsx", intent=Intent(query="SELECT count(*) FROM data")))
            print("ANSWER", pack.result.value, len(pack.model_dump_json()))
        except SparsereadError as exc:
            print("TYPED", type(exc).__name__, str(exc)[:300])
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=_GUARD_SECONDS, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ANSWER 299 "), done.stdout


def test_table_directories_left_by_a_killed_server_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid now names no running process, like a server killed with kill -9
    left_behind = tmp_path / f"sparseread-table-{gone.pid}-abc123"
    left_behind.mkdir()
    (left_behind / "copy.csv").write_text("a,b\n1,2\n")
    live = tmp_path / f"sparseread-table-{os.getpid()}-def456"
    live.mkdir()
    unrelated = tmp_path / f"other-{gone.pid}"
    unrelated.mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not ours to remove")
    planted = tmp_path / f"sparseread-table-{gone.pid}-link"
    planted.symlink_to(outside, target_is_directory=True)

    assert sweep_left_behind(tmp_path) == 1
    assert not left_behind.exists()
    assert live.exists() and unrelated.exists()
    assert (outside / "keep.txt").exists(), "a planted link was followed"
