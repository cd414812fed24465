"""Query building: answer-type cues and one spelling per number."""

from __future__ import annotations

import pytest

from sparseread_mcp.locate.base import answer_cue, build_query, cue_density
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
