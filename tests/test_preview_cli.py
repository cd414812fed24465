"""Previews for people (issue #32): `sparseread-mcp preview` printed no samples and every heading twice
(`Title  [Title]`); the outline of a vim help file was empty and that of pydoc's HTML held a code comment.
Fixtures mimic those formats (a vim user-manual chapter with its `====` separators, `*tag*` lines and
ALL-CAPS headers; `pydoc` text; pydoc's HTML, which has no <h1>-<h6>; reStructuredText)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.cli import main
from sparseread_mcp.serve.server import create_server

WORDS = ["buffer", "window", "register", "motion", "operator", "cursor", "text", "mode", "command", "search", "pattern"]


def prose(lines: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(lines)]


def vim_help() -> str:
    """A chapter of vim's user manual: a tag line, a table of contents, then sections after separators."""
    out = ["*usr_42.txt*\tFor Vim version 9.0.  Last change: 2022 Apr 03", "", "\t\t     VIM USER MANUAL", ""]
    out += [f"|42.{n}|\tTopic {n}" for n in range(1, 5)] + [""]
    for n in range(1, 5):
        out += ["=" * 78, f"*42.{n}*\tTopic {n}", "", *prose(25, n), ""]
        out += [f"OPTIONS FOR TOPIC {n}\t\t\t\t\t*topic-{n}-options*", "", *prose(20, 10 + n), ""]
    out += ["=" * 78, "", "Next chapter: |usr_43.txt|", "", " vim:tw=78:ts=8:noet:ft=help:norl:"]
    return "\n".join(out) + "\n"


def pydoc_text() -> str:
    out = ["Help on package widgets:", ""]
    for name in ("NAME", "DESCRIPTION", "CLASSES", "FUNCTIONS", "DATA", "FILE"):
        out += [name, *("    " + line for line in prose(40, len(name))), ""]
    return "\n".join(out)


def pydoc_html() -> str:
    """pydoc -w's structure: tables whose title cell is all bold, bold terms in <dl>, code lines as <br>."""
    parts = ["<!DOCTYPE html><html><head><title>Python: module widgets</title></head><body>"]
    parts.append('<table class="heading"><tr><td class="heading-text"><strong class="title">widgets</strong>')
    parts.append(" (version 1.0)</td></tr></table>")
    for section in ("Classes", "Functions", "Data"):
        parts.append('<table class="section"><tr class="decor"><td class="section-title" colspan=3>&nbsp;<br>')
        parts.append(f'<strong class="bigsection">{section}</strong></td></tr>')
        parts.append('<tr><td class="singlecolumn"><dl><dt><strong>__weakref__</strong></dt>')
        parts.append("<dd><span class='code'>list of weak references to the object</span></dd></dl>")
        parts.append("<span class='code'>&nbsp;&nbsp;return&nbsp;x<br>\n# Let the base class raise the TypeError<br>")
        parts.append("<br>\n".join(prose(60, len(section))) + "</span></td></tr></table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def rst() -> str:
    out = []
    for title, mark in (("Installation", "="), ("From a checkout", "-"), ("Usage", "="), ("Options", "-")):
        out += [title, mark * len(title), "", *prose(60, len(title)), ""]
    return "\n".join(out)


FILES = {"usr_42.txt": vim_help, "widgets.txt": pydoc_text, "widgets.html": pydoc_html, "guide.rst": rst}
EXPECTED = {
    "usr_42.txt": [
        (1, "42.1 Topic 1"),
        (2, "OPTIONS FOR TOPIC 1"),
        (1, "42.2 Topic 2"),
        (2, "OPTIONS FOR TOPIC 2"),
        (1, "42.3 Topic 3"),
        (2, "OPTIONS FOR TOPIC 3"),
        (1, "42.4 Topic 4"),
        (2, "OPTIONS FOR TOPIC 4"),
    ],
    "widgets.txt": [(1, name) for name in ("NAME", "DESCRIPTION", "CLASSES", "FUNCTIONS", "DATA", "FILE")],
    "widgets.html": [(1, name) for name in ("Classes", "Functions", "Data")],
    "guide.rst": [(1, "Installation"), (2, "From a checkout"), (1, "Usage"), (2, "Options")],
}


@pytest.fixture
def manuals(tmp_path: Path) -> Path:
    for name, make in FILES.items():
        (tmp_path / name).write_text(make())
    return tmp_path


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(FILES))
async def test_the_outline_finds_the_sections_of_plain_text_manuals_and_generated_html(
    manuals: Path, name: str
) -> None:
    async with Client(create_server(Settings(roots=(manuals,)))) as client:
        preview = answer_record(await client.call_tool("sro_preview", {"path": name}))
        assert preview is not None and preview["route"] == "sparse", "each fixture is long enough to read sparsely"
        outline = [(entry.get("level", 1), entry["title"]) for entry in preview["outline"]]
        assert outline == EXPECTED[name]
        # Each heading names a section a read can ask for by its title.
        title = EXPECTED[name][-1][1]
        section = await client.call_tool("sro_read", {"target": f"{name}#{title}", "view": "section"})
    assert not section.is_error, section.content


def test_the_cli_preview_shows_samples_and_each_heading_once(manuals: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preview", "usr_42.txt", "--root", str(manuals)]) == 0
    printed = capsys.readouterr().out
    assert "[42.1 Topic 1]" not in printed and printed.count("42.1 Topic 1") == 1, printed
    assert "outline:" in printed and "OPTIONS FOR TOPIC 2" in printed
    samples = printed.split("samples:\n", 1)[1].splitlines()
    assert samples and all(line.startswith("  #L") for line in samples), printed
    assert any("For Vim version 9.0" in line for line in samples)
