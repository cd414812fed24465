"""Query building: answer-type cues, one spelling per number, the phrases a question quotes, and the
concepts it names by other words than its document."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.locate import base as locate_base
from sparseread_mcp.locate.base import answer_cue, build_query, concept_terms, cue_density
from sparseread_mcp.locate.concepts import expansion_terms, named_concepts
from sparseread_mcp.locate.terms import terms


@pytest.mark.parametrize(
    ("question", "cue"),
    [
        ("What was the total revenue in 2019?", "number"),
        ("How many stores did Best Buy have?", "number"),
        ("When did the company change its auditor?", "date"),
        ("In which year was the bridge opened?", "date"),
        ("What year was the bridge opened?", "date"),
        ("Who directed the film?", "name"),
        ("Describe the risk factors", None),
    ],
)
def test_the_question_says_what_type_of_answer_it_wants(question: str, cue: str | None) -> None:
    assert answer_cue(question) == cue
    assert build_query([question], []).cue == cue


def test_passages_dense_in_the_wanted_type_score_higher() -> None:
    table = "2019 | 1,204 | 3.5% | 2018 | 998 | 2.9%"
    prose = "The board discussed strategy at length and agreed to revisit it later in the season."
    assert cue_density(table, "number") > cue_density(prose, "number")
    assert cue_density("It opened on 4 March 1932 and closed in 1971.", "date") > cue_density(prose, "date")
    assert cue_density("Directed by Jane Campion and Peter Jackson.", "name") > cue_density(prose, "name")


def test_numbers_have_one_spelling() -> None:
    assert terms("$1577.00 and 1,577 and 1577") == ["1577", "1577", "1577"]
    assert terms("2,000.00 or 3.50") == ["2000", "3.50"]


def _contract(tmp_path: Path) -> Path:
    """A contract whose parties are defined once, in quotes, among sections that say "party" more often."""
    clauses = [
        f"{n}. Each party shall give the other party notice of any claim by a third party, and the parties "
        f"shall cooperate in good faith; no party may assign its rights under Section {n} without consent."
        for n in range(2, 40)
    ]
    opening = (
        'This Supply Agreement is made by Acme Corp. and Birch Labs Inc. (each a "Party" and together the '
        '"Parties"), effective as of the first delivery date.'
    )
    recitals = [
        f"WHEREAS, the supplier manufactures widgets of grade {n} and the buyer wishes to purchase such widgets "
        f"for resale in region {n}, subject to the prices, quantities and delivery dates set out in Schedule {n}."
        for n in range(1, 12)
    ]
    path = tmp_path / "contract.txt"
    path.write_text("\n\n".join([opening, *recitals, *clauses]) + "\n")
    return path


def test_a_phrase_the_goal_quotes_lifts_the_passage_that_defines_it_in_quotes(tmp_path: Path) -> None:
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    _contract(tmp_path)
    quoted = 'Highlight the parts of this contract related to "Parties". Details: the parties who signed it'
    plain = quoted.replace('"Parties"', "the parties")
    assert build_query([quoted], []).quoted == ("parties",)
    first = engine.read("s", ReadRequest(target="contract.txt", intent=Intent(goal=quoted)))
    assert "Acme Corp." in first.items[0].text  # the definition, not the clause that says "party" most
    other = engine.read("t", ReadRequest(target="contract.txt", intent=Intent(goal=plain)))
    assert "Acme Corp." not in other.items[0].text  # the words alone do not find it: the quotes do


def test_quoted_phrases_are_few_short_and_said_once() -> None:
    goal = 'About "Renewal Term", “Expiration Date” and "renewal term" again; not "" or "a" or "' + "x " * 40 + '"'
    assert build_query([goal], []).quoted == ("renewal term", "expiration date")
    many = " ".join(f'"term{n}"' for n in range(10))
    assert len(build_query([many], []).quoted) == 4


def _among_decoys(path: Path, decoys: list[str], passage: str) -> Path:
    """`passage` in the middle of the decoys, one paragraph each."""
    half = len(decoys) // 2
    path.write_text("\n\n".join([*decoys[:half], passage, *decoys[half:]]) + "\n")
    return path


def _filing(tmp_path: Path) -> Path:
    """A 10-K-like text: a cash flow statement that spells capital expenditure "Purchases of property, plant
    and equipment", among passages that repeat the question's own words (3M, capital, amount, FY2018)."""
    decoys = [
        f"Item {n}. 3M's capital allocation in FY2018: the amount of capital returned to shareholders and the "
        f"expenditure on research, {n} percent above plan, are reviewed by the board each quarter of 2018."
        for n in range(1, 60)
    ]
    statement = (
        "Cash Flows from Investing Activities 2018 2017\n"
        "Purchases of property, plant and equipment (PP&E) (1,577) (1,373)\n"
        "Proceeds from sale of PP&E and other assets 262 49\nAcquisitions, net of cash acquired 13 (2,023)"
    )
    return _among_decoys(tmp_path / "filing.txt", decoys, statement)


def test_a_concept_the_question_names_finds_the_line_item_that_spells_it_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    _filing(tmp_path)
    ask = "What is the FY2018 capital expenditure amount for 3M?"
    assert build_query([ask], []).concepts == ()  # off by default: it helped no set it was not written from
    monkeypatch.setattr(locate_base, "EXPAND_CONCEPTS", True)
    assert [c.said for c in build_query([ask], []).concepts] == ["capital expenditure"]
    first = engine.read("s", ReadRequest(target="filing.txt", intent=Intent(goal=ask)))
    assert "(1,577)" in first.items[0].text
    monkeypatch.setattr(locate_base, "EXPAND_CONCEPTS", False)
    plain = engine.read("t", ReadRequest(target="filing.txt", intent=Intent(goal=ask)))
    assert "(1,577)" not in plain.items[0].text  # the question's own words do not find it


def _agreement(tmp_path: Path) -> Path:
    """A services agreement whose cap on support hours is the volume restriction, among clauses that repeat
    the CUAD question's own words (fee, increase, consent, requirement, use, services, party)."""
    decoys = [
        f"{n}. Fees. Any increase of the fees for the use of the services requires the prior written consent "
        f"of the other party; each party shall meet the requirements of Schedule {n} for the services it uses."
        for n in range(1, 40)
    ]
    cap = (
        "40. Support. TouchStar shall provide assistance relating to the software as reasonably requested, but "
        "in any event in an amount not to exceed twenty (20) hours of assistance per month."
    )
    return _among_decoys(tmp_path / "agreement.txt", decoys, cap)


def test_a_clause_the_question_names_by_its_review_label_is_found_by_its_drafting_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No contract says "Volume Restriction": the label brings the words such clauses are drafted in."""
    from sparseread_mcp.locate import concepts

    monkeypatch.setattr(locate_base, "EXPAND_CONCEPTS", True)
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    _agreement(tmp_path)
    ask = (
        'Highlight the parts (if any) of this contract related to "Volume Restriction" that should be reviewed '
        "by a lawyer. Details: Is there a fee increase or consent requirement, etc. if one party's use of the "
        "product/services exceeds certain threshold?"
    )
    assert [c.said for c in build_query([ask], []).concepts] == ["volume restriction"]
    parsed = engine.open("agreement.txt")

    def best() -> str:
        ranked = engine.locator.rank(parsed, build_query([ask], []))
        return parsed.text_of(parsed.passages[ranked[0][0]])

    assert "not to exceed twenty (20) hours" in best()
    first = engine.read("s", ReadRequest(target="agreement.txt", intent=Intent(goal=ask)))
    assert "not to exceed twenty (20) hours" in first.items[0].text
    monkeypatch.setattr(concepts, "EXPAND_CLAUSES", False)
    assert "Fees." in best()  # the question's own words find the fee clauses first


def test_only_unambiguous_concepts_expand_and_never_past_the_scanned_prefix() -> None:
    # A contract shares "revenue"; "net sales" would pull its clauses off: revenue alone expands to nothing.
    assert named_concepts("Is one party required to share revenue or profit with the counterparty?") == ()
    assert "equipment" in expansion_terms(named_concepts("What was capex in FY2019?"))
    # Each term once, none the question already has.
    both = "What is the quick ratio and the current ratio?"
    added = expansion_terms(named_concepts(both), terms(both))
    assert len(added) == len(set(added)) and not set(added) & set(terms(both))
    # A pasted document is not expanded term by term: only its first characters are read for concepts.
    assert named_concepts("x " * 10_000 + "capex") == ()


def test_a_concept_the_document_spells_as_asked_does_not_expand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locate_base, "EXPAND_CONCEPTS", True)
    # Where "free cash flow" is a table's own title, the cash flow statement's lines would only pull the
    # reading away from it; where the document never says it, they are how it spells it.
    ask = "What is the 2019 free cash flow?"
    query = build_query([ask], [])
    spelled = tmp_path / "spelled.txt"
    spelled.write_text("Free Cash Flow\nNet cash provided by operating activities 912\nFree  cash\nflow 300\n")
    other = tmp_path / "other.txt"
    other.write_text("Net cash provided by operating activities 912\nPurchases of property (612)\n")
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    assert concept_terms(engine.open("spelled.txt"), query) == query.terms
    assert {"operat", "activity", "purchase"} <= set(concept_terms(engine.open("other.txt"), query))


def test_long_words_are_not_remembered_so_a_hostile_file_cannot_fill_the_memory_with_them() -> None:
    from sparseread_mcp.locate import terms as module

    def distinct(n: int) -> str:  # 2,000 different 84-character words
        return "zq" * 40 + "".join(chr(97 + (n // 26**k) % 26) for k in range(4))

    before = module._known_word_terms.cache_info().currsize, module._known_stem.cache_info().currsize
    found = terms(" ".join(distinct(n) for n in range(2_000)))
    assert found == [distinct(n) for n in range(2_000)]
    assert (module._known_word_terms.cache_info().currsize, module._known_stem.cache_info().currsize) == before
    assert terms("Loading loadConfig files, 1,577.00") == ["load", "loadconfig", "load", "config", "file", "1577"]
