"""The reader registry: built-ins listed explicitly, specific formats before generic ones."""

from __future__ import annotations

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


class ReaderRegistry:
    def __init__(self, readers: list[Reader]) -> None:
        self.readers = tuple(readers)

    def configurations(self, reader: Reader) -> list[str]:
        """The reader's configurations as a preview lists them: `text x bm25 x snippets`."""
        return [configuration.qualified(reader.name) for configuration in reader.configurations]

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
