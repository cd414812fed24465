"""Issue #30 item 7: verify helps decide. An undecided claim comes with the passage that decides it; a
pointer whose text was edited after the file shifted is `changed` with the diff and the new anchor;
`gone` only when the text is nowhere; a file that is there but cannot be read is never `gone`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from docs import long_markdown, single_line
from flow import call
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

pytestmark = pytest.mark.anyio


def _client(root: Path) -> Client:
    return Client(create_server(Settings(roots=(root,))))


async def _pointer(client: Client, path: str, needle: str) -> str:
    found = await call(client, "sro_read", {"target": path, "intent": {"needles": [needle]}})
    return str(found["items"][0]["pointer"])


async def _verify(client: Client, target: str, goal: str | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"target": target, "action": "verify"}
    if goal is not None:
        arguments["intent"] = {"goal": goal}
    return await call(client, "sro_read", arguments)


def _first_line(pointer: str) -> int:
    return int(pointer.split("#L", 1)[1].split("-")[0].split(":")[0])


async def test_a_passage_edited_after_the_file_shifted_is_changed_with_its_diff_and_new_anchor(tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    text = long_markdown()
    doc.write_text(text)
    with anyio.fail_after(120):
        async with _client(tmp_path) as client:
            pointer = await _pointer(client, "manual.md", "SEC33-P2-MARK")
            shifted = "# Preface\n\nThree lines were added\nabove everything.\n\n" + text
            doc.write_text(shifted.replace("Unique marker SEC33-P2-MARK.", "Unique marker SEC33-P2-REVISED."))
            verdict = (await _verify(client, pointer))["verification"]
    assert verdict["status"] == "changed", verdict
    assert "SEC33-P2-REVISED" in verdict["diff"] and "SEC33-P2-MARK" in verdict["diff"]
    assert _first_line("x#" + verdict["new_anchor"]) == _first_line(pointer) + 5


async def test_a_sentence_of_a_one_line_article_edited_after_a_shift_is_changed_at_its_new_columns(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "article.txt"
    text = single_line()
    doc.write_text(text)
    with anyio.fail_after(120):
        async with _client(tmp_path) as client:
            pointer = await _pointer(client, "article.txt", "ref S150X")
            assert ":C" in pointer  # a part of the one line
            edited = "A new opening sentence was added to this article. " + text.replace("(ref S150X)", "(ref S150Y)")
            doc.write_text(edited)
            verdict = (await _verify(client, pointer))["verification"]
    assert verdict["status"] == "changed" and "S150Y" in verdict["diff"], verdict
    assert verdict["new_anchor"] and verdict["new_anchor"] != pointer.split("#", 1)[1]
    first, last = (int(c) for c in verdict["new_anchor"].split(":C", 1)[1].split("-C"))
    assert "S150Y" in edited[first - 1 : last]


async def test_a_deleted_passage_is_gone_and_its_neighbours_in_the_same_words_are_not_taken_for_it(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "manual.md"
    text = long_markdown()
    doc.write_text(text)
    with anyio.fail_after(120):
        async with _client(tmp_path) as client:
            pointer = await _pointer(client, "manual.md", "SEC33-P2-MARK")
            line = next(x for x in text.split("\n") if "SEC33-P2-MARK" in x)
            doc.write_text("# Preface\n\nadded\n\n" + text.replace(line, ""))
            verdict = (await _verify(client, pointer))["verification"]
    assert verdict["status"] == "gone" and "nowhere" in verdict["reason"], verdict


async def test_a_file_that_is_still_there_but_cannot_be_read_is_not_gone(tmp_path: Path) -> None:
    doc = tmp_path / "notes.txt"
    doc.write_text("".join(f"line {n}: the quarterly figures are in section {n}\n" for n in range(40)))
    with anyio.fail_after(120):
        async with _client(tmp_path) as client:
            pointer = await _pointer(client, "notes.txt", "section 12")
            doc.write_bytes(b"\x00\x01\x02\xff\xfe binary now \x00" * 200)  # no reader shows it as text
            verdict = (await _verify(client, pointer))["verification"]
            doc.unlink()
            deleted = (await _verify(client, pointer))["verification"]
    assert verdict["status"] != "gone" and "still there" in verdict["reason"], verdict
    assert deleted["status"] == "gone"


#: Paragraphs rich in a claim's common words; one that decides it with its rare words and its number, among
#: paragraphs with none of the claim's words (a neighbourhood holding the common words would win by count).
FILLER = (
    "Clause {n}. The supplier shall deliver the goods to the customer under this agreement, and the customer "
    "shall accept the goods the supplier delivers under the agreement, as each party agreed in schedule {n}."
)
DECIDING = (
    "Clause 31. Either side may cancel by giving forty-five days' written warning, where shipments stop "
    "for 45 days in a row: termination notice is then effective at once."
)


UNRELATED = "Clause {n}. Invoices are issued monthly in euros and settled by bank transfer within that month."


def _contract() -> str:
    around = [UNRELATED.format(n=n) for n in range(100, 124)]
    paragraphs = [FILLER.format(n=n) for n in range(1, 31)] + around[:12] + [DECIDING] + around[12:]
    paragraphs += [FILLER.format(n=n) for n in range(40, 70)]
    return "# Supply agreement\n\n" + "\n\n".join(paragraphs) + "\n"


async def test_a_paraphrased_claim_comes_with_the_passage_that_decides_it_and_is_never_guessed(
    tmp_path: Path,
) -> None:
    (tmp_path / "supply.md").write_text(_contract())
    said = "The customer may terminate the agreement on notice if the supplier fails to deliver goods for {} days"
    true_claim, false_claim = said.format(45), said.format(60)
    answers = []
    with anyio.fail_after(120):
        for claim in (true_claim, false_claim):
            async with _client(tmp_path) as client:  # a session each: a second one would name what it holds
                answers.append(await _verify(client, "supply.md", claim))
    true, false = answers
    for answer in (true, false):
        assert answer["verification"]["status"] not in ("supported", "contradicted"), answer["verification"]
        shown = [item["text"] for item in answer["items"]]
        assert any("45 days in a row" in text for text in shown), shown
    assert false["verification"]["status"] != "supported"


def _history_text() -> str:
    """A long history where the year 1987 is the answer in one long paragraph and a coincidence in short ones."""
    filler = " ".join(f"The committee met on day {d} to review routine matters of the harbour." for d in range(1, 40))
    paragraphs = [filler]
    for n in range(12):
        paragraphs.append(f"Ledger entry {n}: the 1987 inventory of the warehouse listed 1987 crates of rope.")
        paragraphs.append(filler.replace("harbour", f"quay {n}"))
    paragraphs.insert(
        9,
        "The lighthouse keeper Amelia Stroud, after decades of service on the northern cape and two storms that "
        "destroyed the old tower, finally received the royal medal of the coastguard in 1987, the year the new "
        "lamp was lit and the cape road opened to carriages for the first time since the flood.",
    )
    return "\n\n".join(paragraphs) + "\n"


async def test_a_short_claim_is_confirmed_where_the_agent_read_it_not_at_a_coincidence(tmp_path: Path) -> None:
    """The answer "1987" is in the passage the focus sent, and in a dozen short ledger lines that BM25 ranks
    higher for the bare number: the verdict cites the passage the agent read, and sends nothing again."""
    (tmp_path / "history.txt").write_text(_history_text())
    with anyio.fail_after(120):
        async with _client(tmp_path) as client:
            goal = {"goal": "when did Amelia Stroud receive the medal"}
            read = await call(client, "sro_read", {"target": "history.txt", "intent": goal})
            received = [item for item in read["items"] if "Amelia Stroud" in item["text"]]
            verdict = await _verify(client, "history.txt", "1987")
    assert received, read
    assert verdict["verification"]["status"] == "supported", verdict
    line = _first_line(verdict["verification"]["pointer"])
    assert _first_line(received[0]["pointer"]) <= line, (verdict, received)
    assert "medal" in _history_text().splitlines()[line - 1]
    assert "items" not in verdict, verdict  # the passage is the agent's already: named, not resent


async def test_an_undecided_claim_whose_closest_place_the_agent_read_names_it_and_sends_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent read the deciding clause, then verifies its paraphrase: the verdict stays the model's
    (`unverified`), its pointer is the clause the agent holds, and the less close places are not sent (they
    were, before)."""
    from sparseread_mcp.answers import handlers

    (tmp_path / "supply.md").write_text(_contract())
    claim = "The customer may terminate the agreement on notice if the supplier fails to deliver goods for 45 days"
    answers = []
    with anyio.fail_after(120):
        for alone in (True, False):
            monkeypatch.setattr(handlers, "UNDECIDED_HELD_ALONE", alone)
            async with _client(tmp_path) as client:
                await call(client, "sro_read", {"target": "supply.md#L87-L87"})
                answers.append(await _verify(client, "supply.md", claim))
    named, before = answers
    assert _contract().splitlines()[86] == DECIDING, "the anchor above reads the deciding clause"
    assert named["verification"]["status"] == "unverified", named
    assert "#L87:" in named["verification"]["pointer"], named  # the closest place: the clause the agent read
    # At most what the closest place holds beyond the line read (its window runs on past it), no other place.
    near = ("#L87", "#L88", "#L89")
    assert all(any(line in i["pointer"] for line in near) for i in named.get("items", [])), named
    assert len(before["items"]) > len(named.get("items", [])), (before, named)  # sent with the switch off
