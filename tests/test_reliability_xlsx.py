"""Workbooks: zip bombs and huge sheets are refused before openpyxl parses them; the card is still given."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.errors import ConfigError, OverLimit
from sparseread_mcp.serve.server import create_server

openpyxl = pytest.importorskip("openpyxl")

_SHEET = "xl/worksheets/sheet1.xml"
_HEAD = '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'


def workbook(path: Path, *, sheet_xml: str | None = None, extra: dict[str, bytes] | None = None) -> Path:
    """A real workbook from openpyxl, with its first sheet's XML replaced and parts added as asked."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Plan"
    sheet.append(["item", "amount"])
    sheet.append(["rent XLSX-MARK", 1200])
    plain = path.with_suffix(".plain.xlsx")
    book.save(plain)
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == _SHEET and sheet_xml is not None:
                data = sheet_xml.encode()
            target.writestr(member.filename, data)
        for name, data in (extra or {}).items():
            target.writestr(name, data, compress_type=zipfile.ZIP_STORED)
    plain.unlink()
    return path


def rows_xml(rows: dict[int, str], *, dimension: str | None) -> str:
    declared = f'<dimension ref="{dimension}"/>' if dimension else ""
    body = "".join(f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>{v}</t></is></c></row>' for r, v in rows.items())
    return f"{_HEAD}{declared}<sheetData>{body}</sheetData></worksheet>"


@pytest.fixture
def no_openpyxl_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refusals must come before openpyxl opens the workbook at all."""

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("openpyxl was asked to load a workbook that should have been refused")

    monkeypatch.setattr(openpyxl, "load_workbook", forbidden)


def refused_with_card(root: Path, name: str, settings: Settings, *needles: str) -> str:
    engine = ReadEngine(settings)
    with pytest.raises(OverLimit) as refusal:
        engine.read("s", ReadRequest(target=name))
    message = str(refusal.value)
    for needle in needles:
        assert needle in message
    assert "export the sheet to CSV" in message  # what to do instead
    card = engine.preview("s", name)
    assert card.artifact.path == name and card.artifact.size_bytes == (root / name).stat().st_size
    assert card.reason == message and card.signals["format"] == "ZIP archive"
    return message


def test_a_zip_bomb_is_refused_by_its_compression_ratio(tmp_path: Path, no_openpyxl_parse: None) -> None:
    bomb = f"{_HEAD}<!--{' ' * (24 << 20)}--><sheetData/></worksheet>"  # 24 MB that deflate turns into kilobytes
    workbook(tmp_path / "bomb.xlsx", sheet_xml=bomb)
    assert (tmp_path / "bomb.xlsx").stat().st_size < 200_000
    message = refused_with_card(tmp_path, "bomb.xlsx", Settings(roots=(tmp_path,)), _SHEET, "zip bomb")
    assert "SPARSEREAD_XLSX_MAX_RATIO" in message


def test_a_workbook_declaring_too_much_uncompressed_data_is_refused(tmp_path: Path, no_openpyxl_parse: None) -> None:
    workbook(tmp_path / "media.xlsx", extra={"xl/media/image1.png": os.urandom(2 << 20)})
    settings = Settings(roots=(tmp_path,), xlsx_max_unzipped_mb=1)
    message = refused_with_card(tmp_path, "media.xlsx", settings, "uncompressed (limit 1.0 MB)")
    assert "SPARSEREAD_XLSX_MAX_UNZIPPED_MB" in message


def test_a_sheet_declaring_a_huge_dimension_is_refused_before_parsing(tmp_path: Path, no_openpyxl_parse: None) -> None:
    # openpyxl would pad every row to 16,384 columns and yield all 1,048,576 rows of this sheet.
    workbook(tmp_path / "huge.xlsx", sheet_xml=rows_xml({1: "a", 2: "b"}, dimension="A1:XFD1048576"))
    message = refused_with_card(tmp_path, "huge.xlsx", Settings(roots=(tmp_path,)), "17,179,869,184 cells")
    assert "SPARSEREAD_XLSX_MAX_CELLS" in message


def test_a_sheet_that_understates_its_size_is_stopped_while_streaming(tmp_path: Path) -> None:
    # No dimension, and a row far down: read-only openpyxl yields every empty row in between.
    workbook(tmp_path / "sparse.xlsx", sheet_xml=rows_xml({1: "head", 900_000: "tail"}, dimension=None))
    settings = Settings(roots=(tmp_path,), xlsx_max_cells=50_000)
    refused_with_card(tmp_path, "sparse.xlsx", settings, "sheet 'Plan' holds more than 50,000 cells")


def test_a_workbook_within_the_limits_reads_as_before(tmp_path: Path) -> None:
    rows = {r: f"line {r} XLSX-ROW-{r}" for r in range(1, 300)}
    workbook(tmp_path / "fine.xlsx", sheet_xml=rows_xml(rows, dimension="A1:A299"))
    engine = ReadEngine(Settings(roots=(tmp_path,), xlsx_max_cells=299))
    pack = engine.read("s", ReadRequest(target="fine.xlsx#Plan!R150"))
    assert pack.items[0].text == "line 150 XLSX-ROW-150"
    assert engine.preview("s", "fine.xlsx").artifact.type == "xlsx"


def test_workbook_and_cache_limits_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "SPARSEREAD_ROOTS": "/tmp",
            "SPARSEREAD_XLSX_MAX_UNZIPPED_MB": "64",
            "SPARSEREAD_XLSX_MAX_RATIO": "50.5",
            "SPARSEREAD_XLSX_MAX_CELLS": "1000",
            "SPARSEREAD_CACHE_MB": "32",
        }
    )
    assert (settings.xlsx_max_unzipped_mb, settings.xlsx_max_ratio, settings.xlsx_max_cells) == (64, 50.5, 1000)
    assert settings.cache_mb == 32
    with pytest.raises(ConfigError, match="SPARSEREAD_XLSX_MAX_CELLS"):
        Settings.from_env({"SPARSEREAD_ROOTS": "/tmp", "SPARSEREAD_XLSX_MAX_CELLS": "many"})
    with pytest.raises(ConfigError, match="SPARSEREAD_CACHE_MB=0 must be positive"):
        Settings.from_env({"SPARSEREAD_ROOTS": "/tmp", "SPARSEREAD_CACHE_MB": "0"})


@pytest.mark.anyio
async def test_over_the_mcp_surface_a_bomb_gets_its_card_and_a_tool_error(tmp_path: Path) -> None:
    workbook(tmp_path / "huge.xlsx", sheet_xml=rows_xml({1: "a"}, dimension="A1:XFD1048576"))
    (tmp_path / "notes.md").write_text("# Notes\n\nsee huge.xlsx for the XLSX-MARK plan\n")
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        card = await client.call_tool("sro_preview", {"path": "huge.xlsx"})
        read = await client.call_tool("sro_read", {"target": "huge.xlsx", "intent": {"goal": "plan"}})
        search = await client.call_tool("sro_read", {"target": ".", "intent": {"needles": ["XLSX-MARK"]}})
    assert not card.is_error and answer_record(card) is not None
    assert "declares 17,179,869,184 cells" in answer_record(card)["reason"]  # type: ignore[index]
    assert read.is_error and "SPARSEREAD_XLSX_MAX_CELLS" in read.content[0].text  # type: ignore[union-attr]
    assert "internal error" not in read.content[0].text  # type: ignore[union-attr]
    assert not search.is_error and "notes.md" in str(answer_record(search))
