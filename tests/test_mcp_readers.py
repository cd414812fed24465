"""Every reader end to end over MCP (stdio, the installed server): preview, a targeted read, and an exact
operation or a symbol read, with pointers whose text matches the source."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import call
from mcp import Client, StdioServerParameters
from test_mcp_transports import installed_command

from sparseread_mcp.wire import anchor_lines

pytestmark = pytest.mark.anyio
pymupdf = pytest.importorskip("pymupdf")
openpyxl = pytest.importorskip("openpyxl")


def build_tree(root: Path) -> None:
    (root / "src").mkdir()
    padding = "".join(f"# filler line {i} keeps the module above the native-fit size\n" for i in range(200))
    (root / "src" / "store.py").write_text(
        "class Store:\n    def load(self, key):\n        return 'MCP-LOAD-MARK' + key\n\n\n" + padding
    )
    (root / "notes.md").write_text(
        "# Notes\n\n" + "".join(f"## Topic {i}\n\nBody of topic {i}.\n\n" for i in range(300))
    )
    (root / "prices.csv").write_text("item,price\n" + "".join(f"item{i},{i}.5\n" for i in range(1, 400)))
    (root / "config.json").write_text(
        json.dumps({"services": [{"name": f"svc{i}", "port": 8000 + i} for i in range(200)]}, indent=1)
    )
    (root / "deploy.yaml").write_text("".join(f"job{i}:\n  image: app:{i}\n" for i in range(300)))
    (root / "tool.toml").write_text("".join(f'[task{i}]\ncmd = "run {i}"\n' for i in range(300)))
    (root / "app.log").write_text(
        "".join(f"2026-11-29T10:00:{i % 60:02d}Z {'ERROR' if i % 50 == 0 else 'INFO'} step {i}\n" for i in range(600))
    )
    (root / "page.html").write_text(
        "<html><body><main><h1>Guide</h1>"
        + "".join(f"<h2>Part {i}</h2><p>Text of part {i}.</p>" for i in range(200))
        + "</main></body></html>"
    )
    document = pymupdf.open()
    for n in range(12):
        page = document.new_page()
        for k in range(30):
            page.insert_text((72, 72 + 14 * k), f"Page {n + 1} line {k + 1} of the annual report.", fontsize=9)
    document.save(root / "report.pdf")
    book = openpyxl.Workbook()
    book.active.title = "Sales"
    book.active.append(["region", "amount"])
    for i in range(700):
        book.active.append([f"region number {i}", i])
    book.save(root / "book.xlsx")
    (root / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 512)


# (path, targeted anchor, exact or symbol request, check on its answer)
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("src/store.py", "#L10-L12", {"target": "src/store.py#Store.load"}, "MCP-LOAD-MARK"),
    ("notes.md", "#Topic 7", {"target": "notes.md", "intent": {"needles": ["topic 250"]}}, "Body of topic 250."),
    ("prices.csv", "#row=9", {"target": "prices.csv", "intent": {"query": "SELECT sum(price) FROM data"}}, "79999.5"),
    ("config.json", "#$.services[3]", {"target": "config.json", "intent": {"query": "$.services[?port>8195]"}}, "4"),
    ("deploy.yaml", "#$.job7.image", {"target": "deploy.yaml", "intent": {"needles": ["app:250"]}}, "app:250"),
    ("tool.toml", "#$.task5.cmd", {"target": "tool.toml", "intent": {"needles": ["run 42"]}}, "run 42"),
    ("app.log", "#L1-L2", {"target": "app.log", "intent": {"needles": ["ERROR"], "want": "count"}}, "12"),
    ("page.html", "#Part 3", {"target": "page.html", "intent": {"goal": "text of part 150"}}, "Text of part 150."),
    ("report.pdf", "#p3", {"target": "report.pdf", "intent": {"goal": "page 9 line 4"}}, "Page 9 line 4"),
    ("book.xlsx", "#Sales!R5", {"target": "book.xlsx", "intent": {"query": "SELECT max(amount) FROM data"}}, "699"),
]


def check_pointer_text(root: Path, item: dict[str, Any]) -> None:
    path = item["pointer"].split("@")[0]
    if path.endswith((".pdf", ".xlsx", ".html")):
        return  # extracted text: checked by dereferencing below
    lines = (root / path).read_text().split("\n")
    first, last = item.get("lines") or lines_of(item["pointer"].split("#", 1)[1])  # a line anchor says them
    assert item["text"] in "\n".join(lines[first - 1 : last])


def lines_of(anchor: str) -> tuple[int, int]:
    said = anchor_lines(anchor)
    assert said, f"{anchor} says no lines and the item gives none"
    return said


async def test_every_reader_over_stdio(tmp_path: Path) -> None:
    build_tree(tmp_path)
    params = StdioServerParameters(command=installed_command(), args=["--root", str(tmp_path)])
    with anyio.fail_after(180):
        async with Client(params) as client:
            for path, anchor, exact, expected in CASES:
                preview = await call(client, "sro_preview", {"path": path})
                assert preview["route"] == "sparse", path
                assert preview["configurations"], path
                targeted = await call(client, "sro_read", {"target": path + anchor})
                assert targeted["items"], (path, targeted["gate"])
                for item in targeted["items"]:
                    check_pointer_text(tmp_path, item)
                    deref = await call(client, "sro_read", {"target": item["pointer"], "action": "verify"})
                    assert deref["verification"]["status"] == "ok", item["pointer"]
                answer = await call(client, "sro_read", exact)
                shown = json.dumps(answer.get("result") or {}) + " ".join(i["text"] for i in answer.get("items", []))
                assert re.search(re.escape(expected), shown), (path, shown[:300])
                for item in answer.get("items", []):
                    check_pointer_text(tmp_path, item)
            folder = await call(client, "sro_read", {"target": ".", "intent": {"needles": ["MCP-LOAD-MARK"]}})
            assert folder["result"]["value"] == 1 and folder["items"][0]["pointer"].startswith("src/store.py@")
            card = await call(client, "sro_preview", {"path": "image.bin"})
            assert card["artifact"]["type"] == "binary" and card["signals"]["format"] == "PNG image"
            refused = await client.call_tool("sro_read", {"target": "image.bin", "intent": {"goal": "x"}})
            assert refused.is_error and "binary (PNG image)" in refused.content[0].text  # type: ignore[union-attr]
