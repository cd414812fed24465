"""The agent's loop as a model meets it, through the official MCP client: a call without a goal continues
the latest intent on that file (never another file's) and says which; collect finds each slot on its own
and tags what it returns; `check` answers "is it anywhere?" in tens of tokens; ranges clamp and "around a
passage" returns the text on both sides."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import source_at
from flow import anchor_of, call
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server
from sparseread_mcp.tokens import TokenCounter

pytestmark = pytest.mark.anyio

FILLER = "harbour ledger copper orchard festival quarry railway lantern meadow council bridge winter".split()  # noqa: SIM905


def _prose(seed: int, paragraphs: int, planted: dict[int, str]) -> str:
    rng = random.Random(seed)
    out = []
    for k in range(paragraphs):
        words = " ".join(rng.choice(FILLER) for _ in range(70))
        out.append((planted[k] + " " if k in planted else "") + words + ".")
    return "\n\n".join(out) + "\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    (tmp_path / "contract.txt").write_text(
        _prose(
            1,
            120,
            {
                30: "The royalty rate is seven percent of net sales, payable quarterly.",
                90: "Either party may terminate this agreement on ninety days written notice.",
            },
        )
    )
    (tmp_path / "history.txt").write_text(
        _prose(2, 120, {60: "The observatory was founded in 1887 by the astronomer Ines Vidal."})
    )
    return tmp_path


async def _client_calls(root: Path, steps: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    with anyio.fail_after(120):  # a hang guard only
        async with Client(create_server(Settings(roots=(root,)))) as client:
            for tool, arguments in steps:
                out.append(await call(client, tool, arguments))
    return out


def _texts(pack: dict[str, Any]) -> str:
    return "\n".join(item["text"] for item in pack.get("items", []))


async def test_a_refine_without_a_goal_continues_the_latest_goal_on_that_file_and_says_which(docs: Path) -> None:
    first, second, third, more = await _client_calls(
        docs,
        [
            ("sro_read", {"target": "contract.txt", "intent": {"goal": "what is the royalty rate"}}),
            ("sro_read", {"target": "history.txt", "intent": {"goal": "when was the observatory founded"}}),
            ("sro_read", {"target": "contract.txt", "intent": {"goal": "how can a party terminate"}}),
            ("sro_read", {"target": "contract.txt", "action": "refine"}),
        ],
    )
    assert "royalty rate" in _texts(first) and "1887" in _texts(second) and "terminate" in _texts(third)
    # The refine continues the latest goal on contract.txt (termination), not the session's first (royalty):
    # its ledger goes on from that episode's (its id was said by the answer that opened it).
    assert "episode" not in more and "id" in third["episode"]
    assert more["exposure"]["E"] == third["exposure"]["E"] + more["exposure"]["chars"]
    assert "how can a party terminate" in more["message"] and "continuing" in more["message"]


async def test_a_goal_less_read_of_another_file_never_takes_this_files_goal(docs: Path) -> None:
    focus, other, needles = await _client_calls(
        docs,
        [
            ("sro_read", {"target": "contract.txt", "intent": {"goal": "what is the royalty rate"}}),
            ("sro_read", {"target": "history.txt"}),
            ("sro_read", {"target": "history.txt", "intent": {"needles": ["Vidal"]}}),
        ],
    )
    assert "royalty" in _texts(focus)
    # Nothing to continue on history.txt: no passages ranked for the contract's goal, but what to add.
    assert "items" not in other and "goal" in other["message"] and "continuing" not in other["message"]
    assert "Ines Vidal" in _texts(needles) and "continuing" not in str(needles.get("message", ""))


async def test_collect_finds_each_slot_on_its_own_and_tags_every_item(docs: Path) -> None:
    slots = [
        {"id": "royalty", "question": "What royalty rate is payable on net sales?"},
        {"id": "termination", "question": "How much written notice is needed to terminate?"},
        {"id": "arbitration", "question": "Which arbitration body of the harbour council settles disputes?"},
    ]
    (pack,) = await _client_calls(
        docs, [("sro_read", {"target": "contract.txt", "action": "collect", "intent": {"slots": slots}})]
    )
    by_slot: dict[str, list[str]] = {}
    for item in pack["items"]:
        assert item.get("slots"), f"an item names no slot: {item['text'][:80]}"
        for slot in item["slots"]:
            by_slot.setdefault(slot, []).append(item["text"])
    assert any("seven percent" in t for t in by_slot["royalty"])
    assert any("ninety days" in t for t in by_slot["termination"])
    status = {c["slot"]: c["status"] for c in pack["coverage"]}
    assert status["arbitration"] == "missing" and "arbitration" not in by_slot  # no filler stands for it
    assert status["royalty"] != "missing" and status["termination"] != "missing"


async def test_check_says_where_terms_occur_in_tens_of_tokens_without_text(docs: Path) -> None:
    text = (docs / "contract.txt").read_text()
    (present, absent) = await _client_calls(
        docs,
        [
            ("sro_read", {"target": "contract.txt", "action": "check", "intent": {"needles": ["ninety days"]}}),
            (
                "sro_read",
                {"target": "contract.txt", "action": "check", "intent": {"goal": "is there a non-compete clause?"}},
            ),
        ],
    )
    counter = TokenCounter("o200k_base")
    for pack in (present, absent):
        assert "items" not in pack
        assert counter.count(str(pack)) < 100
    (row,) = present["result"]["rows"]
    assert row[0] == "ninety days" and row[1] == 1
    line = int(row[2].removeprefix("L"))
    assert "ninety days" in text.split("\n")[line - 1]
    assert present["result"]["value"] == "every needle and word occurs"
    assert absent["result"]["value"].startswith("absent:") and "compete" in absent["result"]["value"]


async def test_a_range_past_the_end_clamps_to_what_exists(docs: Path) -> None:
    (docs / "short.txt").write_text("alpha line\nbeta line\ngamma line\n")
    lines, columns = await _client_calls(
        docs,
        [
            ("sro_read", {"target": "short.txt#L2-L900", "view": "lines"}),
            ("sro_read", {"target": "contract.txt#L3:C1-C99999", "view": "lines"}),
        ],
    )
    assert "beta line\ngamma line" in _texts(lines)
    line3 = (docs / "contract.txt").read_text().split("\n")[2]
    assert _texts(columns).rstrip("\n") == line3


async def test_refine_around_a_passage_returns_the_text_on_both_sides(tmp_path: Path) -> None:
    sentences = [f"Sentence {i} records the reading of gauge{i} at the dam." for i in range(3000)]
    text = " ".join(sentences)  # one line: no paragraph or line breaks to lean on
    (tmp_path / "one.txt").write_text(text)
    start = text.index("Sentence 1500 ")
    end = start + len("Sentence 1500 records the reading")  # a phrase inside a passage, as a model may cite
    (around,) = await _client_calls(
        tmp_path, [("sro_read", {"target": f"one.txt#L1:C{start + 1}-C{end}", "action": "refine"})]
    )
    spans = []
    for i in around["items"]:
        assert source_at(text, anchor_of(i)) == i["text"]
        spans.append((text.index(i["text"]), text.index(i["text"]) + len(i["text"])))
    # Right before and right after the phrase: at most a space between them and it.
    assert any(0 <= start - e <= 1 for _, e in spans), (start, spans)
    assert any(0 <= s - end <= 1 for s, _ in spans), (end, spans)


def _statement(title: str, rows: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    body = [
        f"{rng.choice(FILLER).title()} {rng.choice(FILLER)} item {k} {rng.randint(100, 9999):,}" for k in range(rows)
    ]
    return [title, "(in millions) 2023 2022", *body]


async def test_around_a_passage_on_a_page_stays_on_its_page(tmp_path: Path) -> None:
    # A filing's text: prose, then a statement on a page of its own, then the next statement.
    prose = _prose(3, 12, {}).rstrip("\n").split("\n")
    balance = [
        *_statement("Consolidated Balance Sheets", 60, 4),
        "See Notes to Consolidated Financial Statements.",
        "27",
    ]
    cash = _statement("Consolidated Statements of Cash Flows", 60, 5)
    pages = ["\n".join(prose), "\n".join(balance), "\n".join(cash)]
    text = "\n\f".join(pages) + "\n"
    (tmp_path / "filing.txt").write_text(text)
    first = len(prose) + 1  # the balance sheet's title line
    middle, last = f"filing.txt#L{first + 12}-L{first + 14}", f"filing.txt#L{first + 55}-L{first + 61}"
    inside, edge = await _client_calls(
        tmp_path, [("sro_read", {"target": t, "action": "refine"}) for t in (middle, last)]
    )
    for pack in (inside, edge):
        for item in pack["items"]:
            assert source_at(text, anchor_of(item)) == item["text"]
    # Rows 10-12: the page's top is the text before them (its title, far under the 1,000 characters a side
    # may take), and the prose page before it is another unit: none of it comes.
    got = _texts(inside)
    assert "Consolidated Balance Sheets" in got and "(in millions)" in got
    assert not any(line in got for line in prose if line.strip()), "the page before came too"
    assert "Cash Flows" not in got
    # The last rows: the side after them ends with their page (its footer); the next statement is not theirs.
    got = _texts(edge)
    assert "See Notes to Consolidated Financial Statements.\n27" in got and "Cash Flows" not in got


async def test_the_preview_of_a_one_line_text_shows_where_its_topics_are(tmp_path: Path) -> None:
    rng = random.Random(5)
    topics = ["volcano", "harbour", "election", "orchestra", "glacier", "railway", "vaccine", "comet"]
    text = " ".join(
        f"The {topic} chapter opens here. " + " ".join(f"{rng.choice(FILLER)} {topic} {k}." for k in range(90))
        for topic in topics
    )
    (tmp_path / "article.txt").write_text(text)  # one line, no headings
    (preview,) = await _client_calls(tmp_path, [("sro_preview", {"path": "article.txt"})])
    outline = preview["outline"]
    assert len(outline) >= 8, outline
    reached = 0
    for entry in outline:
        stretch = source_at(text, entry["anchor"])
        assert stretch.startswith(entry["title"]), entry  # verbatim: the words a needle can be chosen from
        assert text.index(stretch) >= reached  # in order, never overlapping
        reached = text.index(stretch) + len(stretch)
    named = {t for t in topics if any(t in e["title"] for e in outline)}
    assert len(named) >= 6, named  # the titles are spread over the whole text, not its opening


async def test_check_of_a_goal_as_long_as_a_page_stays_a_short_answer(docs: Path) -> None:
    goal = " ".join(f"w{k}" for k in range(1_000))  # every word distinct, none in the file
    (pack,) = await _client_calls(
        docs, [("sro_read", {"target": "contract.txt", "action": "check", "intent": {"goal": goal}})]
    )
    assert len(pack["result"]["rows"]) <= 16
    assert TokenCounter("o200k_base").count(str(pack)) < 400
