"""The robust sparse default: thin calibration, or a "sparse fails" verdict from one development set,
answers with the configuration that falls least short of the best one on any long-document set (and
its measured reliability), never the full view; the full view needs the verdict of several sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.locate.dense import DEFAULT_MODEL
from sparseread_mcp.select import policy as policy_module
from sparseread_mcp.select.calibrate import Answered, calibrate_from
from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.policy import Policy
from sparseread_mcp.select.selector import MIN_REQUESTS, Selector, group_of

LONG = "text|>32k|selective fact"
SHORT = "markdown|<=8k|selective fact"


def answered(set_name: str, group: str, full: int, hits: dict[str, bool]) -> Answered:
    return Answered(set_name, group, full, {name: (hit, 1400) for name, hit in hits.items()})


def two_long_sets(*, big_set_likes: str) -> list[Answered]:
    """A big long-document set where `big_set_likes` wins, and a small one where the other wins more."""
    other = "bm25 x snippets" if big_set_likes == "bm25 x windows" else "bm25 x windows"
    rows = [answered("big", LONG, 90_000, {big_set_likes: i < 40, other: i < 30}) for i in range(100)]
    rows += [answered("small", LONG, 120_000, {big_set_likes: i < 2, other: i < 12}) for i in range(20)]
    return rows


def test_the_robust_default_falls_least_short_on_any_set_not_best_pooled() -> None:
    selector = calibrate_from(two_long_sets(big_set_likes="bm25 x windows"))
    # Pooled, a tie (42/120 each); snippets falls at most 0.10 short of windows (big set), windows 0.50
    # short of snippets (small set); macro (0.30 + 0.60) / 2 = 0.45 against (0.40 + 0.10) / 2 = 0.25.
    assert selector.sets == {LONG: 2}
    assert selector.robust["bm25 x snippets"].sets == 2
    assert abs(selector.robust["bm25 x snippets"].macro - 0.45) < 1e-9
    assert abs(selector.robust["bm25 x snippets"].regret - 0.10) < 1e-9
    assert abs(selector.robust["bm25 x windows"].regret - 0.50) < 1e-9
    choice = selector.choose("text|>32k|exact computation", "text")  # a thin long group
    assert choice.robust and choice.configuration == "bm25 x snippets"
    assert choice.reliability is not None and 0 < choice.reliability < 0.45
    assert "robust default" in choice.reason and "shortfall over 2 long-document sets" in choice.reason
    # A short request is unlike long documents: its robust default is measured over every set of a type
    # calibration measured (here the same two sets, as no short set was calibrated).
    short = selector.choose("text|<=8k|selective fact", "text")
    assert short.robust and "shortfall over 2 development sets" in short.reason
    # A type no development set measured (code, logs) keeps its own default.
    code = selector.choose("code|<=8k|selective fact", "code")
    assert code.robust and code.configuration == "bm25 x snippets" and "plain BM25 snippets" in code.reason


def test_the_robust_default_is_scored_as_served_in_windows_on_pages_of_figures() -> None:
    # Filings: every best hit is on a page of figures, where the selector serves a robust snippets or
    # context choice in windows (`Selector.in_windows`): only windows hits there. Contracts: snippets hits.
    rows = [
        Answered(
            "filings",
            LONG,
            300_000,
            {"bm25 x snippets": (False, 1400), "bm25 x windows": (i < 30, 1400)},
            on_figures=True,
        )
        for i in range(40)
    ]
    rows += [
        answered("contracts", LONG, 120_000, {"bm25 x snippets": i < 30, "bm25 x windows": i < 10}) for i in range(40)
    ]
    selector = calibrate_from(rows)
    # Scored as plain snippets, it would fall 0.75 short on filings and windows (0.50 short on contracts)
    # would be chosen: for what the windows rule already mends, at the cost of every contract.
    assert selector.robust["bm25 x snippets"].regret == 0.0
    assert abs(selector.robust["bm25 x windows"].regret - 0.5) < 1e-9
    thin = "text|>32k|exact computation"
    assert selector.choose(thin, "text").configuration == "bm25 x snippets"
    assert selector.choose(thin, "text", on_figures=True).configuration == "bm25 x windows"


def test_a_sparse_fails_verdict_from_one_set_is_not_enough_for_the_full_view() -> None:
    rows = [answered("filings", LONG, 300_000, {"bm25 x snippets": i < 2, "bm25 x windows": i < 4}) for i in range(40)]
    selector = calibrate_from(rows)
    choice = selector.choose(LONG, "text")
    assert choice.configuration != FULL_VIEW and choice.robust
    assert "1 development set(s)" in choice.reason
    # One long set only: no robust configuration can be chosen by, so plain BM25 snippets answers.
    assert choice.configuration == "bm25 x snippets" and "plain BM25 snippets" in choice.reason
    # The same verdict from two sets, where a few hits still make sparse reading first cheaper in
    # expectation than the full view (each miss charged the full view): the cheapest, with its reliability.
    rows += [answered("reports", LONG, 200_000, {"bm25 x snippets": i < 1, "bm25 x windows": i < 2}) for i in range(30)]
    two = calibrate_from(rows).choose(LONG, "text")
    assert two.configuration == "bm25 x windows" and two.reliability is not None
    assert "cheaper in expectation than the full view over 2 development sets" in two.reason
    # Two sets where sparse reading never hits: it fails for that kind of request, so the full view.
    never = [answered(n, LONG, 200_000, {"bm25 x snippets": False}) for n in ("a", "b") for _ in range(30)]
    assert calibrate_from(never).choose(LONG, "text").configuration == FULL_VIEW


def test_a_live_read_names_the_robust_default_its_reliability_and_what_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = " ".join(f"Clause {i} covers the {'river' if i % 2 else 'market'} tariff schedule." for i in range(900))
    text += " The renewal term is one year unless either party gives notice."
    (tmp_path / "contract.txt").write_text(text)
    group = group_of("text", len(text), "selective fact")
    assert group == LONG
    rows = [answered("one", group, len(text), {"bm25 x snippets": i < 3}) for i in range(MIN_REQUESTS + 5)]
    rows += two_long_sets(big_set_likes="bm25 x windows")
    selector: Selector = calibrate_from(rows)
    assert selector.sets[group] == 3
    selector.sets[group] = 1  # the verdict in this group rests on one set
    # The selector's own choice: with a model installed, plain prose would be reranked (tests/test_e5.py).
    monkeypatch.setattr(policy_module, "plain_prose", lambda parsed: False)
    engine = ReadEngine(Settings(roots=(tmp_path,), semantic_model=DEFAULT_MODEL))
    engine.selection = Policy(engine.settings, engine.locators, selector)
    pack = engine.read("s", ReadRequest(target="contract.txt", intent=Intent(goal="What is the renewal term?")))
    assert pack.gate.decision == "sparse" and pack.items and pack.selection is not None
    assert pack.selection.configuration == "text x bm25 x snippets" and pack.selection.reliability is not None
    # Coverage says `found`: the hint's "else refine" is left out (SKILL.md: read it, and if it answers, stop).
    assert [c.status for c in pack.coverage] == ["found"] and not pack.next
    partial = engine.read("t", ReadRequest(target="contract.txt", intent=Intent(goal="What is the zeppelin term?")))
    assert [c.status for c in partial.coverage] != ["found"]
    assert any("reliability" in hint and "view='full'" in hint for hint in partial.next)
    assert any("renewal term" in item.text for item in pack.items)
    assert pack.exposure.payload_chars < len(text) // 10


def test_hybrid_enters_the_table_only_where_it_beats_bm25_on_every_held_out_set(tmp_path: Path) -> None:
    def rows(set_name: str, hybrid_hits: int, bm25_hits: int) -> list[Answered]:
        return [
            answered(set_name, LONG, 90_000, {"bm25 x snippets": i < bm25_hits, "hybrid x snippets": i < hybrid_hits})
            for i in range(30)
        ]

    calibration = rows("big", 25, 10) + rows("small", 25, 10)  # hybrid far ahead where it was calibrated
    wins_one = rows("big", 20, 10) + rows("small", 10, 10)  # held out: a tie on one set is not a win
    selector = calibrate_from(calibration, held_out=wins_one)
    assert "hybrid x snippets" in selector.withheld and "small 33.3% vs 33.3%" in selector.withheld["hybrid x snippets"]
    assert "hybrid x snippets" not in selector.groups[LONG] and "hybrid x snippets" not in selector.robust
    assert selector.choose(LONG, "text").configuration == "bm25 x snippets"
    path = tmp_path / "table.json"
    selector.save(path)
    assert Selector.load(path).withheld == selector.withheld
    # Ahead on the held-out half of every set: offered, and chosen where it is the reliable one.
    kept = calibrate_from(calibration, held_out=rows("big", 20, 10) + rows("small", 12, 10))
    assert "hybrid x snippets" in calibrate_from(calibration, held_out=[]).withheld  # no evidence, no place
    assert kept.withheld == {} and kept.choose(LONG, "text").configuration == "hybrid x snippets"
