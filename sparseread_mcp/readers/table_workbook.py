"""Workbooks (XLSX, XLSM): checked as a zip before openpyxl opens them, then streamed under a cell cap.

A workbook is a zip of XML parts. A hostile one declares gigabytes behind a few kilobytes (a zip bomb),
or a sheet dimension of A1:XFD1048576 that openpyxl would fill with empty cells. Before any part is
parsed we read the zip's central directory (declared sizes and compression ratios; Python's zipfile
never inflates a member past its declared size) and the `<dimension>` each sheet declares; then rows
are streamed in read-only mode and counted, so a sheet that understates its size is stopped too.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass

from ..config import Settings
from ..deadline import checkpoint
from ..errors import MissingDependency, OverLimit, SparsereadError, UnsupportedArtifact
from ..files.artifacts import Artifact

#: A workbook with more parts than this is not an office document.
MAX_MEMBERS = 10_000
#: Members smaller than this are never judged by their ratio: tiny XML compresses very well.
_RATIO_FLOOR_BYTES = 1 << 20
#: How much of a sheet is inflated to find its `<dimension ref=...>` (it comes before the rows).
_HEAD_BYTES = 64 * 1024
_DIMENSION = re.compile(rb"<(?:\w+:)?dimension\s+ref=\"([A-Z]{1,3})?(\d+)?(?::([A-Z]{1,3})(\d+))?\"")
_ADVICE = "export the sheet to CSV (any size reads as line ranges) or raise"
#: Excel itself holds at most 32,767 characters in a cell: anything longer is cut, with a marker.
CELL_CHARS = 32_767
#: How much of a hostile file's content an error message may quote.
_SNIPPET_CHARS = 200


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkbookLimits:
    """What a workbook may declare and hold before it is refused (its card is still given)."""

    max_unzipped_bytes: int = 256 * 1024 * 1024
    max_ratio: float = 200.0
    max_cells: int = 1_000_000
    #: Characters of cell text in all sheets together (after each cell is cut to CELL_CHARS): one shared
    #: string repeated in many cells costs its length each time it is shown.
    max_text_chars: int = 64 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkbookLimits:
        return cls(
            max_unzipped_bytes=settings.xlsx_max_unzipped_mb * 1024 * 1024,
            max_ratio=settings.xlsx_max_ratio,
            max_cells=settings.xlsx_max_cells,
            max_text_chars=settings.max_parse_bytes,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Sheet:
    title: str
    rows: list[list[object]]


def check_workbook(path: str, data: bytes, limits: WorkbookLimits) -> None:
    """Refuse a zip bomb or a huge declared sheet before any XML is parsed; raises OverLimit."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise UnsupportedArtifact(f"{path} is not a readable workbook (not a zip archive: {snippet(exc)})") from exc
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise OverLimit(f"{path} has {len(members)} parts (a workbook has far fewer): refused; {_ADVICE} nothing")
        total = sum(m.file_size for m in members)
        if total > limits.max_unzipped_bytes:
            raise OverLimit(
                f"{path} declares {_mb(total)} uncompressed (limit {_mb(limits.max_unzipped_bytes)}): refused "
                f"before parsing; {_ADVICE} SPARSEREAD_XLSX_MAX_UNZIPPED_MB"
            )
        for member in members:
            ratio = member.file_size / max(1, member.compress_size)
            if member.file_size >= _RATIO_FLOOR_BYTES and ratio > limits.max_ratio:
                raise OverLimit(
                    f"{path}: part {member.filename} inflates {ratio:.0f}x ({_mb(member.compress_size)} to "
                    f"{_mb(member.file_size)}; limit {limits.max_ratio:.0f}x), the shape of a zip bomb: refused; "
                    f"{_ADVICE} SPARSEREAD_XLSX_MAX_RATIO"
                )
        for member in members:
            if member.filename.startswith("xl/worksheets/") and member.filename.endswith(".xml"):
                cells = _declared_cells(archive, member)
                if cells is not None and cells > limits.max_cells:
                    raise OverLimit(
                        f"{path}: {member.filename} declares {cells:,} cells (limit {limits.max_cells:,}): refused "
                        f"before parsing; {_ADVICE} SPARSEREAD_XLSX_MAX_CELLS"
                    )


def _declared_cells(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> int | None:
    try:
        with archive.open(member) as handle:
            head = handle.read(_HEAD_BYTES)
    except Exception:  # damaged, encrypted or oddly compressed parts (zlib, NotImplemented): openpyxl reports
        return None
    found = _DIMENSION.search(head)
    if found is None or found.group(3) is None:
        return None
    first_col, first_row, last_col, last_row = (g.decode("ascii") if g else "" for g in found.groups())
    rows = int(last_row) - int(first_row or 1) + 1
    cols = _column_number(last_col) - _column_number(first_col or "A") + 1
    return max(rows, 1) * max(cols, 1)


def _column_number(letters: str) -> int:
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - ord("A") + 1
    return number


def read_sheets(artifact: Artifact, limits: WorkbookLimits) -> list[Sheet]:
    """Every worksheet's rows, streamed in read-only mode; more than `max_cells` in all is refused."""
    data = artifact.data or b""
    check_workbook(artifact.path, data, limits)
    try:
        import openpyxl
    except ImportError as exc:
        raise MissingDependency("reading workbooks needs openpyxl: pip install openpyxl") from exc
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile, XML and its own errors for damaged files
        raise UnsupportedArtifact(f"{artifact.path} is not a readable workbook ({snippet(exc)})") from exc
    sheets: list[Sheet] = []
    budget = _Budget(path=artifact.path, limits=limits)
    try:
        for sheet in book.worksheets:
            rows: list[list[object]] = []
            title = _cut(str(sheet.title), 64)
            for row in sheet.iter_rows(values_only=True):
                if len(rows) % 4096 == 0:
                    checkpoint()
                rows.append(budget.take(title, row))
            sheets.append(Sheet(title=title, rows=rows))
    except SparsereadError:  # OverLimit, or TimedOut from a checkpoint
        raise
    except Exception as exc:  # damaged sheet XML surfaces only while streaming
        raise UnsupportedArtifact(f"{artifact.path} is not a readable workbook ({snippet(exc)})") from exc
    finally:
        book.close()
    return sheets


@dataclass(slots=True, kw_only=True)
class _Budget:
    """Cells and characters taken so far from every sheet of one workbook."""

    path: str
    limits: WorkbookLimits
    cells: int = 0
    chars: int = 0

    def take(self, title: str, row: tuple[object, ...]) -> list[object]:
        self.cells += max(1, len(row))  # an empty row costs a cell: a bomb of empty rows is counted too
        if self.cells > self.limits.max_cells:
            raise OverLimit(
                f"{self.path}: sheet {title!r} holds more than {self.limits.max_cells:,} cells (the workbook's "
                f"limit; its declared dimension was smaller): refused; {_ADVICE} SPARSEREAD_XLSX_MAX_CELLS"
            )
        out = [_cut(v, CELL_CHARS) if isinstance(v, str) else v for v in row]
        self.chars += sum(len(v) for v in out if isinstance(v, str)) + len(out)
        if self.chars > self.limits.max_text_chars:
            raise OverLimit(
                f"{self.path}: sheet {title!r} brings the workbook past {self.limits.max_text_chars:,} characters "
                f"of cell text (a long shared string repeated in many cells counts each time): refused; {_ADVICE} "
                "SPARSEREAD_MAX_PARSE_BYTES"
            )
        return out


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {limit:,} of {len(text):,} chars]"


def snippet(exc: BaseException) -> str:
    """An exception's message, short: a library's error may quote the whole hostile cell."""
    text = " ".join(str(exc)[: 2 * _SNIPPET_CHARS].split()) or type(exc).__name__
    return text if len(text) <= _SNIPPET_CHARS else text[: _SNIPPET_CHARS - 1] + "…"


def render_rows(rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([["" if v is None else v for v in r] for r in rows])
    return buffer.getvalue().rstrip("\n")


def _mb(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB"
