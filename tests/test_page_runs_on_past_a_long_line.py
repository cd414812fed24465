"""A page of the full view that begins inside a long line (at the best match, where a contract's paragraph
is one line) runs on past that line's end with whole lines, and the pages are still the whole file, each
character once. It used to stop at the line's end: page 1 was a few hundred tokens and the text right
after the best match came many pages later."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from conftest import source_at
from docs import LEDGER_GOAL as GOAL
from flow import anchor_of, pages_of, read, whole_once
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.files.anchors import parse_anchor
from sparseread_mcp.serve.server import create_server


def paragraphs() -> str:
    """Forty paragraphs, each one line of about 2,400 characters; one names the goal's words late in it."""
    out = []
    for k in range(1, 41):
        words = [
            f"the orchard council of district {k} logged {k * 7 + j} bushels and mended roof {j}." for j in range(30)
        ]
        if k == 23:
            words[20] = "Then the copper merchants paid the winter tariff at the north harbour, berth nine."
        out.append(f"{k}. " + " ".join(words))
    return "\n".join(out) + "\n"


@pytest.mark.anyio
async def test_a_page_that_begins_inside_a_long_line_runs_on_past_it(tmp_path: Path) -> None:
    text = paragraphs()
    (tmp_path / "minutes.txt").write_text(text)
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            await read(client, target="minutes.txt", intent={"goal": GOAL})
            first_page = await read(client, target="minutes.txt", intent={"goal": GOAL}, view="full")
            pages = await pages_of(client, "minutes.txt", first_page)
    first = parse_anchor(anchor_of(pages[0]["items"][0]))
    shown = source_at(text, anchor_of(pages[0]["items"][0]))
    assert first.first_col and first.first_col > 1  # it begins inside line 23, at the match's passage
    assert first.last_line > first.first_line  # and runs on with the lines after it
    assert pages[0]["items"][0]["text"] == shown  # the anchor names exactly the page's text
    assert "copper merchants paid the winter tariff" in shown and "\n24. " in shown
    # Every page names exactly its text, and the pages together are the file, every character once.
    assert whole_once(text, pages)
