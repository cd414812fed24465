"""A page's title words are indexed with the passages beneath it, so that a statement's rows of figures are
found by its title. A passage of one word or none (the page number at a page's foot) has nothing of its
own for the title to describe: with the title's words alone it was the shortest document in the index and
came back first, a bare `42` sent as evidence (FinanceBench: 10 of 316 first-read items)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from flow import read
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, Settings
from sparseread_mcp.locate.bm25 import Bm25Locator
from sparseread_mcp.protocol.intents import query_for
from sparseread_mcp.serve.server import create_server

LABELS = tuple(
    f"{kind} {region}"
    for kind in (
        "Net income",
        "Depreciation",
        "Inventories",
        "Accounts payable",
        "Other assets",
        "Deferred taxes",
        "Accrued wages",
        "Leases",
    )
    for region in ("north", "south", "east", "west", "abroad")
)
TITLES = ("CONSOLIDATED BALANCE SHEETS", "CONSOLIDATED STATEMENTS OF CASH FLOWS", "NOTES TO THE STATEMENTS")


def filing() -> str:
    """Twelve pages, as a 10-K's text layer has them: a running header, a title, rows of figures with their
    labels, the statements' closing sentence, and the page number alone on the last line."""
    pages = []
    for number in range(1, 13):
        title = TITLES[number % 3]
        rows = "\n".join(f"{label} {number * 100 + k:,} {number * 90 + k:,}" for k, label in enumerate(LABELS))
        pages.append(
            f"Table of Contents\nACME CORP\n{title}\n(in millions)\n{rows}\n"
            f"See accompanying notes to the consolidated financial statements.\n{number + 40}\n"
        )
    return "\f".join(pages)


def test_a_page_number_does_not_rank_for_its_pages_title(tmp_path: Path) -> None:
    (tmp_path / "filing.txt").write_text(filing())
    parsed = ReadEngine(Settings(roots=(tmp_path,))).open("filing.txt")
    bare = {p.index for p in parsed.passages if parsed.text_of(p).strip().isdigit()}
    assert bare, "some pages end with their number alone, as a passage of its own"
    ranked = Bm25Locator().rank(parsed, query_for(Intent(goal="the statement of cash flows")))
    assert ranked and not [index for index, score in ranked if index in bare and score > 0]


@pytest.mark.anyio
async def test_a_page_number_is_never_sent_as_evidence_for_its_pages_title(tmp_path: Path) -> None:
    (tmp_path / "filing.txt").write_text(filing())
    with anyio.fail_after(60):  # a hang guard only
        async with Client(create_server(Settings(roots=(tmp_path,), native_fit_tokens=0))) as client:
            answer = await read(client, target="filing.txt", intent={"goal": "the statement of cash flows"})
    texts = [item["text"].strip() for item in answer["items"]]
    assert texts, "the statement's pages are found by their title"
    assert not [text for text in texts if text.isdigit()], texts  # never a bare page number
