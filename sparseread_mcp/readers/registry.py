"""The reader registry: built-ins listed explicitly, specific formats before generic ones."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Settings
from ..errors import UnsupportedArtifact
from .base import Reader
from .code import CodeReader
from .html import HtmlReader
from .log import LogReader
from .pdf import PdfReader
from .structured import StructuredReader
from .table import TableReader
from .table_query import TableLimits
from .table_workbook import WorkbookLimits
from .text import TextReader


@dataclass(frozen=True, slots=True)
class Configuration:
    """One way to answer a read: a reader, a location or processing method, an exposure form."""

    reader: str
    method: str
    exposure: str

    def __str__(self) -> str:
        return f"{self.reader} x {self.method} x {self.exposure}"


class ReaderRegistry:
    def __init__(self, readers: list[Reader]) -> None:
        self.readers = tuple(readers)

    def configurations(self, reader: Reader | None = None) -> list[Configuration]:
        """Every configuration, or one reader's, for the selector and for previews to enumerate."""
        chosen = [reader] if reader is not None else list(self.readers)
        return [Configuration(r.name, method, exposure) for r in chosen for method, exposure in r.configurations]

    def reader_for(self, path: Path) -> Reader:
        for reader in self.readers:
            if reader.accepts(path):
                return reader
        # Unknown suffixes are read as text when they decode; binary is refused when loaded.
        fallback = next((r for r in self.readers if r.name == "text"), None)
        if fallback is None:
            raise UnsupportedArtifact(
                f"no reader accepts {path.name!r}; readers: {', '.join(r.name for r in self.readers)}"
            )
        return fallback


def default_registry(settings: Settings | None = None) -> ReaderRegistry:
    """The built-in readers; `settings` carries their limits (workbooks), defaults otherwise."""
    workbooks = WorkbookLimits.from_settings(settings) if settings is not None else None
    tables = TableLimits.from_settings(settings) if settings is not None else None
    return ReaderRegistry(
        [
            PdfReader(),  # PDF through PyMuPDF (the `pdf` extra)
            TableReader(workbooks, tables),  # CSV, TSV, JSONL, Parquet (DuckDB) and workbooks (openpyxl)
            StructuredReader(),  # JSON, YAML, TOML: key paths
            HtmlReader(),  # HTML: main content as text with headings
            CodeReader(),  # source files with a tree-sitter grammar wheel
            LogReader(),  # .log, and text files whose lines look like log records
            TextReader(),  # text and Markdown; also the fallback for any other text file
        ]
    )
