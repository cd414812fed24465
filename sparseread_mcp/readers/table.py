"""Tables: CSV, TSV, JSONL and Parquet through DuckDB; XLSX and XLSM through openpyxl.

Every data row is a passage anchored as `row=N` (data rows count from 1; the header is row 0), or
`Sheet!RN` for a workbook row as the sheet numbers it. The faithful full view of a text table is the
file; of Parquet and workbooks, a CSV rendering (sheets separated by form feeds). Exact operations run
as one read-only SELECT over every row and expose only the result.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

from ..errors import AnchorError
from ..files.anchors import Anchor
from ..files.artifacts import Artifact
from ..files.lines import LineIndex
from ..select.configuration import Configuration
from ..vocabulary import Action
from .base import LineAnchors, OutlineEntry, ParsedArtifact, Passage
from .table_load import TableSource
from .table_query import MAX_ROWS, TableLimits, TableQueries
from .table_workbook import WorkbookLimits, read_sheets, render_rows

TEXT_TABLES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
JSON_LINES = frozenset({".jsonl", ".ndjson"})
WORKBOOKS = frozenset({".xlsx", ".xlsm"})
SUFFIXES = frozenset(TEXT_TABLES) | JSON_LINES | WORKBOOKS | {".parquet"}


@dataclasses.dataclass(frozen=True, slots=True)
class _Record:
    start: int
    end: int
    row: int  # data row number (1-based) or the sheet's own row number
    sheet: str | None


class RowAnchors(LineAnchors):
    """`row=N` / `Sheet!RN` for exactly one record; lines for anything else."""

    records = True

    def __init__(self, records: list[_Record]) -> None:
        self._by_start = {(r.start, r.end): r for r in records}
        self._by_row = {(r.sheet, r.row): r for r in records}

    def anchor_for(self, parsed: ParsedArtifact, start: int, end: int) -> Anchor:
        record = self._by_start.get((start, end))
        if record is None:
            return super().anchor_for(parsed, start, end)
        return Anchor(kind="row", row=record.row, name=record.sheet)

    def span_of(self, parsed: ParsedArtifact, anchor: Anchor) -> tuple[int, int]:
        if anchor.kind != "row":
            return super().span_of(parsed, anchor)
        record = self._by_row.get((anchor.name, anchor.row or 0))
        if record is None:
            rows = [r.row for r in self._by_row.values() if r.sheet == anchor.name]
            where = f"sheet {anchor.name!r}" if anchor.name else parsed.artifact.path
            valid = f"{min(rows)}..{max(rows)}" if rows else "none"
            raise AnchorError(f"row {anchor.row} is not in {where}: rows are {valid}")
        return record.start, record.end


class TableReader:
    name = "table"
    types = frozenset({"csv", "tsv", "jsonl", "parquet", "xlsx"})
    actions: frozenset[Action] = frozenset({"scout", "focus", "collect", "refine", "verify", "check"})
    binary = True  # Parquet and workbooks are decoded here; text tables are decoded like any text
    #: How it can answer (method, exposure form); a preview lists them.
    configurations: tuple[Configuration, ...] = (
        Configuration("bm25", "rows"),
        Configuration("sql", "result"),
        Configuration("row", "snippets"),
        Configuration("any", "full_view"),
    )

    def __init__(self, limits: WorkbookLimits | None = None, tables: TableLimits | None = None) -> None:
        self.limits = limits or WorkbookLimits()
        self.tables = tables or TableLimits()

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() in SUFFIXES

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        suffix = Path(artifact.path).suffix.lower()
        if suffix in WORKBOOKS:
            text, records, sources = _workbook(artifact, self.limits)
            kind = "xlsx"
        else:
            # DuckDB reads the bytes we verified and fingerprinted, copied privately: never the path,
            # which could be swapped for a link (or rewritten) between our read and DuckDB's.
            data = artifact.data or b""
            text = _decode(artifact) if suffix != ".parquet" else ""
            if suffix == ".parquet":
                sources = [TableSource(name="data", load="read_parquet({path})", data=data, suffix=suffix)]
            elif suffix in JSON_LINES:
                sources = [
                    TableSource(
                        name="data",
                        load="read_json_auto({path}, format='newline_delimited')",
                        data=data,
                        suffix=suffix,
                    )
                ]
            else:
                options = f"header=true, delim='{TEXT_TABLES[suffix]}'"
                sources = [
                    TableSource(
                        name="data",
                        load=f"read_csv({{path}}, {options})",
                        lenient=f"read_csv({{path}}, {options}, strict_mode=false, null_padding=true, "
                        "ignore_errors=true, all_varchar=true)",
                        data=data,
                        suffix=suffix,
                    )
                ]
            kind = suffix.lstrip(".").replace("ndjson", "jsonl").replace("tab", "tsv")
        queries = TableQueries(sources, label=artifact.path, limits=self.tables)
        if suffix == ".parquet":
            text = _render_parquet(queries)
        if suffix not in WORKBOOKS:
            records = _records(text, header=suffix not in JSON_LINES)
        index = LineIndex(text)
        passages = tuple(
            Passage(index=i, start=r.start, end=r.end, kind="table", section=r.sheet or "")
            for i, r in enumerate(records)
        )
        return ParsedArtifact(
            artifact=dataclasses.replace(artifact, text=text, data=None),
            type=kind,
            lines=index,
            passages=passages,
            outline=_outline(queries, records, index),
            anchors=RowAnchors(records),
            queries=queries,
        )


def _decode(artifact: Artifact) -> str:
    data = artifact.data or b""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _records(text: str, *, header: bool) -> list[_Record]:
    """One span per record; a quoted field may hold newlines, so records end where quotes balance."""
    records: list[_Record] = []
    pos, start, quotes = 0, 0, 0
    number = 0 if header else 1
    while pos <= len(text):
        newline = text.find("\n", pos)
        end = len(text) if newline == -1 else newline
        quotes += text.count('"', pos, end)
        if quotes % 2 == 0:
            if text[start:end].strip():
                if number > 0:
                    records.append(_Record(start, end, number, None))
                number += 1
            start, quotes = end + 1, 0
        pos = end + 1
    return records


def _render_parquet(queries: TableQueries) -> str:
    columns, rows = queries.sample(MAX_ROWS)  # capped: a Parquet's rendering is its first rows
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _workbook(artifact: Artifact, limits: WorkbookLimits) -> tuple[str, list[_Record], list[TableSource]]:
    parts: list[str] = []
    records: list[_Record] = []
    sources: list[TableSource] = []
    offset = 0
    names: set[str] = {"data"}
    for number, sheet in enumerate(read_sheets(artifact, limits)):
        rows = sheet.rows
        body = render_rows(rows)
        prefix = "\f" if number else ""
        lines_at = offset + len(prefix)
        for row_number, line in enumerate(body.split("\n"), start=1):
            if line.strip(","):
                records.append(_Record(lines_at, lines_at + len(line), row_number, sheet.title))
            lines_at += len(line) + 1
        parts.append(prefix + body)
        offset += len(prefix) + len(body)
        header = [str(v) if v is not None else f"column{i + 1}" for i, v in enumerate(rows[0])] if rows else []
        if number == 0:
            sources.append(TableSource(name="data", columns=header, rows=rows[1:]))
        name = _table_name(sheet.title)
        if number == 0 and name.lower() == "data":
            continue
        if name.lower() in names:  # "Q1 plan" and "Q1_plan" would be one table: the later gets a number
            name = f"{name}_{number + 1}"
        if name.lower() not in names:
            names.add(name.lower())
            sources.append(TableSource(name=name, columns=header, rows=rows[1:]))
    return "".join(parts), records, sources


def _table_name(title: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in title) or "sheet"


def _outline(queries: TableQueries, records: list[_Record], index: LineIndex) -> tuple[OutlineEntry, ...]:
    entries = []
    for column, kind, nulls, distinct, low, high in queries.describe("data"):
        span = f" · {low}..{high}" if low is not None else ""
        entries.append(
            OutlineEntry(
                title=f"{column} {kind} · {nulls} nulls · ~{distinct} distinct{span}",
                anchor="L1",
                first_line=1,
                last_line=1,
                level=1,
            )
        )
    return tuple(entries)
