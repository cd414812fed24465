"""Fuzzed workbook structure: missing parts, bad XML, huge dimensions, many sheets, shared-string indices
out of range, odd cell types. The table reader answers or raises one of our typed errors, never another
exception, and its messages stay short."""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scratch import scratch_dir

from sparseread_mcp.errors import SparsereadError
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.readers.table import TableReader
from sparseread_mcp.readers.table_workbook import WorkbookLimits

openpyxl = pytest.importorskip("openpyxl")
pytest.importorskip("duckdb")

_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_DIR = scratch_dir("sparseread-fuzz-xlsx-")
_READER = TableReader(WorkbookLimits(max_cells=20_000, max_text_chars=2_000_000))


def _base() -> dict[str, bytes]:
    book = openpyxl.Workbook()
    first = book.active
    first.title = "Plan"
    first.append(["item", "amount", "when"])
    first.append(["rent", 1200, "2024-01-01"])
    first.append(["food", 300.5, None])
    second = book.create_sheet("Staff")
    second.append(["name", "team"])
    second.append(["Ada", "R&D"])
    buffer = io.BytesIO()
    book.save(buffer)
    with zipfile.ZipFile(buffer) as archive:
        return {m.filename: archive.read(m) for m in archive.infolist()}


_BASE = _base()
_NAMES = sorted(_BASE)
_CELL_TYPES = ["s", "n", "d", "b", "e", "str", "inlineStr", "x"]
_VALUES = st.one_of(
    st.integers(min_value=-5, max_value=10**12).map(str),
    st.sampled_from(["", "abc", "1e999", "NaN", "-0", "2024-13-45T99:00", "999999999999999999999999"]),
    st.text(alphabet="x9.-:T", max_size=40),
)


@st.composite
def _sheet(draw: st.DrawFn) -> bytes:
    dimension = draw(st.sampled_from(["", "A1:C3", "A1:XFD1048576", "B2", "A0:A0", "ZZZZ1:A1", "A1:A99999999999"]))
    cells = []
    for r in range(1, draw(st.integers(min_value=0, max_value=6)) + 1):
        row_ref = draw(st.sampled_from([str(r), "1048576", "0", "-1", "x", ""]))
        parts = []
        for _ in range(draw(st.integers(min_value=0, max_value=4))):
            column = draw(st.sampled_from(["A", "B", "XFD", "AAAA", "", "1"]))
            kind = draw(st.sampled_from(_CELL_TYPES))
            value = draw(_VALUES)
            body = f"<is><t>{value}</t></is>" if kind == "inlineStr" else f"<v>{value}</v>"
            parts.append(f'<c r="{column}{row_ref}" t="{kind}">{body}</c>')
        cells.append(f'<row r="{row_ref}">{"".join(parts)}</row>')
    ref = f'<dimension ref="{dimension}"/>' if dimension else ""
    return f'<worksheet xmlns="{_NS}">{ref}<sheetData>{"".join(cells)}</sheetData></worksheet>'.encode()


@st.composite
def _workbook_xml(draw: st.DrawFn) -> bytes:
    count = draw(st.integers(min_value=0, max_value=40))
    sheets = "".join(
        f'<sheet name="{draw(st.sampled_from(["S", "data", "a b", "a_b", "x" * 40]))}{i}" sheetId="{i + 1}" '
        f'r:id="rId{draw(st.sampled_from([1, 2, 99]))}"/>'
        for i in range(count)
    )
    return f'<workbook xmlns="{_NS}" xmlns:r="{_REL}"><sheets>{sheets}</sheets></workbook>'.encode()


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    parts = dict(_BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        name = draw(st.sampled_from(_NAMES))
        action = draw(st.sampled_from(["drop", "garbage", "truncate", "sheet", "strings", "workbook"]))
        if action == "drop":
            parts.pop(name, None)
        elif action == "garbage":
            parts[name] = draw(st.binary(max_size=200))
        elif action == "truncate" and name in parts:
            data = parts[name]
            parts[name] = data[: draw(st.integers(min_value=0, max_value=max(0, len(data) - 1)))]
        elif action == "sheet":
            parts[draw(st.sampled_from(["xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml"]))] = draw(_sheet())
        elif action == "strings":
            items = "".join(f"<si><t>{draw(_VALUES)}</t></si>" for _ in range(draw(st.integers(0, 3))))
            parts["xl/sharedStrings.xml"] = f'<sst xmlns="{_NS}">{items}</sst>'.encode()
        else:
            parts["xl/workbook.xml"] = draw(_workbook_xml())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@settings(
    max_examples=int(os.environ.get("SPARSEREAD_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=_mutated())
def test_fuzzed_workbook_structure_never_causes_an_untyped_error(data: bytes) -> None:
    path = _DIR / "fuzz.xlsx"
    path.write_bytes(data)
    artifact = load_artifact(Roots((_DIR,)).resolve("fuzz.xlsx"), binary=True)
    try:
        parsed = _READER.parse(artifact, passage_chars=500)
    except SparsereadError as exc:
        assert len(str(exc)) < 1_000, str(exc)[:300]
        return
    assert parsed.queries is not None
    try:
        parsed.queries.run("SELECT count(*) FROM data")
    except SparsereadError as exc:
        assert len(str(exc)) < 1_000, str(exc)[:300]
