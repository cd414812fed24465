"""Passages are scored with the titles they fall under (a clause's heading, a statement's page title), and a
slot's query counts the goal's words once, each stemmed once."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.locate import bm25
from sparseread_mcp.locate.base import build_query
from sparseread_mcp.locate.bm25 import Bm25Locator
from sparseread_mcp.locate.context import heading_of, heading_vocabulary, passage_titles
from sparseread_mcp.models import Intent, Slot
from sparseread_mcp.protocol.intents import query_for
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.text import TextReader

WORDS = "the party shall provide notice in writing within days of any such request by the other".split()  # noqa: SIM905 - a word list reads best as text


def parse(tmp_path: Path, text: str) -> ParsedArtifact:
    (tmp_path / "doc.txt").write_text(text, encoding="utf-8")
    return TextReader().parse(load_artifact(Roots((tmp_path,)).resolve("doc.txt")), passage_chars=500)


def prose(rng: random.Random, sentences: int) -> str:
    return " ".join(" ".join(rng.choice(WORDS) for _ in range(14)).capitalize() + "." for _ in range(sentences))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("11      TERM AND TERMINATION.", (1, "TERM AND TERMINATION")),
        ("11.1    Term. The term of this Agreement shall commence on the Effective Date", (2, "Term")),
        ("ARTICLE 7  INDEMNITY, INSURANCE", (1, "INDEMNITY, INSURANCE")),
        ("Section 2.3 Performance by Affiliates and Sublicensees.", (2, "Performance by Affiliates and Sublicensees")),
        ("IV. Fees and Payment", (1, "Fees and Payment")),
        ("CONFIDENTIALITY", (1, "CONFIDENTIALITY")),
        ("3 The Company shall pay the fees set out below within thirty days", None),
        ('1.2     "ASP" means Application Service Provider.', None),
        ("article 5 of the convention says otherwise", None),
        ("2019 was a good year for the company", None),
        ("An ordinary sentence of prose, which is not a heading.", None),
    ],
)
def test_headings_are_recognised_in_plain_text(line: str, expected: tuple[int, str] | None) -> None:
    assert heading_of(line) == expected


def test_a_passage_carries_the_titles_it_falls_under_until_a_heading_replaces_them(tmp_path: Path) -> None:
    rng = random.Random(3)
    text = "\n\n".join(
        [
            "9       CONFIDENTIALITY.",
            prose(rng, 6),
            "10      TERM AND TERMINATION.",
            "10.1    Renewal. " + prose(rng, 8),
            prose(rng, 8),
            "10.2    Effect. " + prose(rng, 4),
            "11      MISCELLANEOUS.",
            prose(rng, 4),
        ]
    )
    parsed = parse(tmp_path, text)
    titles = passage_titles(parsed)
    by_text = {parsed.text_of(p)[:40]: t for p, t in zip(parsed.passages, titles, strict=True)}
    renewal = [t for head, t in by_text.items() if head.startswith("10.1")]
    assert renewal == ["TERM AND TERMINATION Renewal"]
    # The clause's second paragraph, which does not name it, is still under it.
    second = parsed.passages[[p.index for p in parsed.passages if parsed.text_of(p).startswith("10.1")][-1] + 1]
    assert titles[second.index] == "TERM AND TERMINATION Renewal"
    assert [t for head, t in by_text.items() if head.startswith("10.2")] == ["TERM AND TERMINATION Effect"]
    assert titles[-1] == "MISCELLANEOUS"


def test_a_clause_whose_words_are_only_in_its_heading_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    clauses = [f"{n}.      {title}.\n\n{prose(rng, 6)}" for n, title in enumerate(["NOTICES", "AUDIT", "PAYMENT"], 1)]
    kept = "Each side keeps policies with reputable carriers, naming the other as additional insured, for the term. "
    clauses.append(f"4.      INSURANCE.\n\n{prose(rng, 5)}\n\n{kept * 4}")
    clauses += [f"{n}.      GENERAL.\n\n{prose(rng, 6)}" for n in range(5, 9)]
    parsed = parse(tmp_path, "\n\n".join(clauses))
    query = build_query(["Which insurance must be maintained?"], [])
    target = next(p.index for p in parsed.passages if parsed.text_of(p).startswith("Each side keeps"))
    assert "INSURANCE" not in parsed.text_of(parsed.passages[target])
    ranked = [i for i, _ in Bm25Locator().rank(parsed, query)]
    # Above every passage outside the clause; the clause's heading shares a passage with what precedes it.
    assert target in ranked[:3]
    titles = passage_titles(parsed)
    above = ranked[: ranked.index(target)]
    assert all("insurance" in (parsed.text_of(parsed.passages[i]) + titles[i]).casefold() for i in above)
    monkeypatch.setattr(bm25, "TITLE_WEIGHT", 0)
    parsed.locator_state.clear()
    assert target not in [i for i, _ in Bm25Locator().rank(parsed, query)]  # its own words never say it


def test_every_passage_of_a_page_carries_the_page_title(tmp_path: Path) -> None:
    rng = random.Random(9)
    pages = [
        "Table of Contents\nConsolidated Statements of Cash Flows\n" + "\n".join(prose(rng, 2) for _ in range(6)),
        "Table of Contents\n" + prose(rng, 3) + "\n" + prose(rng, 3),
    ]
    parsed = parse(tmp_path, "\n\f".join(pages))
    titles = passage_titles(parsed)
    on_first = [t for p, t in zip(parsed.passages, titles, strict=True) if parsed.lines.page_of(p.start) == 1]
    assert len(on_first) > 1
    assert set(on_first) == {"Table of Contents Consolidated Statements of Cash Flows"}
    # The second page begins with running text: only its short title line is a title.
    assert titles[-1] == "Table of Contents"


def test_a_slot_query_counts_the_goal_terms_once_each_stemmed_once() -> None:
    goal = "Does the fee increase if use exceeds a threshold?"
    intent = Intent(goal=goal, slots=[Slot(id="fee", question="fee increase")])
    query = query_for(intent, slot_id="fee")
    assert "exceed" in query.terms
    assert "exce" not in query.terms
    assert query.terms.count("fee") == 2  # the slot's own word, then the goal's context once


def test_other_readers_sections_are_not_titles(tmp_path: Path) -> None:
    (tmp_path / "store.py").write_text(
        "class Store:\n    def load(self):\n        return 1\n\n    def save(self):\n        return 2\n"
    )
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    parsed = engine.open("store.py")
    assert any(p.section.startswith("Store") for p in parsed.passages)  # the symbol a passage belongs to
    assert set(passage_titles(parsed)) == {""}


def test_clauses_numbered_inside_a_long_line_are_headings_too(tmp_path: Path) -> None:
    rng = random.Random(8)
    line = (
        f"  8. OTHER PRODUCTS.   8.1 New Products. {prose(rng, 6)}   8.2 Royalties. {prose(rng, 6)} "
        f"Payments are due in 2019. 30 days after notice the parties meet. {prose(rng, 4)}"
    )
    parsed = parse(tmp_path, f"{line}\n\n  9. NOTICES.   {prose(rng, 3)}\n")
    titles = passage_titles(parsed)
    index = next(p.index for p in parsed.passages if "8.2 Royalties" in parsed.text_of(p))
    later = titles[index + 1 : index + 3]
    assert later and all(t == "OTHER PRODUCTS Royalties" for t in later if t != "NOTICES")
    # `2019. 30 days` is a sentence, not a clause: one number is not enough inside a line.
    assert not any("days" in t for t in titles)
    assert titles[-1] == "NOTICES"


def test_a_running_footer_is_not_a_heading(tmp_path: Path) -> None:
    rng = random.Random(4)
    pages = []
    for n in range(1, 5):
        clause = f"{n}.      {['NOTICES', 'TERM', 'FEES', 'AUDIT'][n - 1]}.\n\n{prose(rng, 4)}\n\n{prose(rng, 4)}"
        pages.append(f"{clause}\n\nSource: ACME DIGITAL HOLDINGS CORP., S-1, 12/20/2011\n\n{prose(rng, 4)}")
    parsed = parse(tmp_path, "\n\n".join(pages))
    titles = passage_titles(parsed)
    assert not any("ACME" in t for t in titles)
    last = parsed.passages[-1]
    assert titles[last.index] == "AUDIT"  # the clause continues past the footer


HEADINGS = "NOTICES AUDIT PAYMENT RENEWAL CONFIDENTIALITY GENERAL ASSIGNMENT WARRANTY INSURANCE TAXES".split()  # noqa: SIM905


def test_a_request_s_frame_words_that_no_heading_uses_weigh_less_than_its_subject(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`... related to renewal that should be reviewed by a lawyer`: `renewal` is a heading of the contract,
    `reviewed` and `lawyer` are no heading's words; a passage that says the frame's words outscores the
    subject's clause by BM25 alone, not once they weigh `UNTITLED_WEIGHT`."""
    rng = random.Random(7)
    headings = [*HEADINGS, *"DEFINITIONS LICENSE DELIVERY PRICES RECORDS DISPUTES WAIVER SURVIVAL".split()]  # noqa: SIM905
    clause = "At the end of each year this Agreement is extended by one more year, unless either party objects."
    decoy = "Each lawyer reviewed it."
    sections = []
    for n, heading in enumerate(headings, 1):
        body = clause if heading == "RENEWAL" else prose(rng, 5)
        sections.append(f"{n}.      {heading}.\n\n{body}" + (f"\n\n{decoy}" if heading == "GENERAL" else ""))
    parsed = parse(tmp_path, "\n\n".join(sections))
    goal = "Highlight the parts of this contract related to renewal that should be reviewed by a lawyer."
    query = build_query([goal], [])

    def best() -> str:
        parsed.locator_state.clear()
        return parsed.text_of(parsed.passages[Bm25Locator().rank(parsed, query)[0][0]])

    assert clause in best()
    monkeypatch.setattr(bm25, "UNTITLED_WEIGHT", 1.0)  # off: every word of the goal weighs alike
    assert decoy in best() and clause not in best()


def test_a_paged_document_has_no_heading_vocabulary(tmp_path: Path) -> None:
    """A page's first lines are running headers and column heads, not headings: nothing is weighed by them."""
    rng = random.Random(2)
    parsed = parse(tmp_path, "\f".join(f"RENEWAL\n\n{prose(rng, 8)}" for _ in range(4)))
    assert parsed.lines.page_count and passage_titles(parsed)[0]
    assert heading_vocabulary(parsed) == frozenset()
