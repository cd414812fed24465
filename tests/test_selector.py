"""Configuration selection: Wilson bounds, groups, defaults, the full-view fallback, adaptive costs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.selector import MIN_REQUESTS, Selector, group_of, size_band, wilson_lower


def test_wilson_lower_bound_matches_the_formula() -> None:
    # 8 of 10: p = 0.8, z = 1.96 -> 0.4902 (textbook value)
    assert wilson_lower(8, 10) == pytest.approx(0.4902, abs=1e-3)
    assert wilson_lower(0, 0) == 0.0
    assert wilson_lower(50, 50) == pytest.approx(50 / (50 + 1.959964**2), abs=1e-6)
    assert wilson_lower(90, 100) > wilson_lower(9, 10)  # more evidence, tighter bound
    for n in (1, 5, 40):
        for k in range(n + 1):
            assert 0.0 <= wilson_lower(k, n) <= k / n + 1e-12
    assert not math.isnan(wilson_lower(3, 7))


def test_groups_are_type_size_band_and_intent() -> None:
    assert size_band(8_000) == "<=8k" and size_band(8_001) == "8k-32k" and size_band(40_000) == ">32k"
    assert group_of("csv", 100, "exact computation") == "csv|<=8k|exact computation"


def fill(selector: Selector, group: str, config: str, successes: int, trials: int, exposed: int) -> None:
    for i in range(trials):
        selector.record(group, config, success=i < successes, exposed_chars=exposed)


def test_cheapest_reliable_configuration_wins() -> None:
    selector = Selector()
    group = "markdown|<=8k|selective fact"
    fill(selector, group, "bm25 x snippets", 45, 50, 1500)
    fill(selector, group, "lexical x snippets", 44, 50, 900)
    fill(selector, group, FULL_VIEW, 50, 50, 6000)
    choice = selector.choose(group, "markdown")
    assert choice.configuration == "lexical x snippets" and "Wilson" in choice.reason


def test_small_groups_use_the_type_default() -> None:
    selector = Selector(defaults={"pdf": "bm25 x page_snippets"})
    fill(selector, "pdf|>32k|selective fact", "bm25 x page_snippets", 5, MIN_REQUESTS - 1, 1000)
    choice = selector.choose("pdf|>32k|selective fact", "pdf")
    assert choice.configuration == "bm25 x page_snippets" and "default" in choice.reason


def test_nothing_reliable_means_the_full_view_never_a_relaxed_threshold() -> None:
    selector = Selector()
    group = "text|>32k|selective fact"
    fill(selector, group, "bm25 x snippets", 10, 40, 1500)  # 25% success: far below tau
    fill(selector, group, FULL_VIEW, 40, 40, 400_000)
    assert selector.choose(group, "text").configuration == FULL_VIEW


def test_costs_adapt_online_but_reliability_does_not() -> None:
    selector = Selector()
    group = "json|<=8k|selective fact"
    fill(selector, group, "bm25 x values", 40, 40, 800)
    fill(selector, group, "lexical x values", 40, 40, 900)
    assert selector.choose(group, "json").configuration == "bm25 x values"
    before = selector.groups[group]["bm25 x values"].reliability
    for _ in range(5):
        selector.observe_follow_up(group, "bm25 x values", 2000)  # it keeps needing refine calls
    assert selector.groups[group]["bm25 x values"].reliability == before
    assert selector.choose(group, "json").configuration == "lexical x values"


def test_the_table_round_trips(tmp_path: Path) -> None:
    selector = Selector(defaults={"csv": "bm25 x rows"})
    fill(selector, "csv|<=8k|selective fact", "bm25 x rows", 30, 40, 700)
    selector.save(tmp_path / "table.json")
    loaded = Selector.load(tmp_path / "table.json")
    assert loaded.defaults == selector.defaults
    assert loaded.groups["csv|<=8k|selective fact"]["bm25 x rows"].successes == 30


def test_calibration_on_the_development_sets(tmp_path: Path, tatqa: Path) -> None:
    from sparseread_mcp.locate import LocatorSet
    from sparseread_mcp.select.calibrate import calibrate, half_of, requests

    data = tmp_path / "data"
    data.mkdir()
    (data / "tatqa").symlink_to(tatqa)
    lexical_only = LocatorSet()
    lexical_only.semantic = False  # the dense methods are exercised in test_dense.py; here, speed
    selector = calibrate(data, locators=lexical_only)
    group = selector.groups["markdown|<=8k|selective fact"]
    forms = ("snippets", "windows", "context", "pages")
    assert set(group) == {f"{m} x {f}" for m in ("lexical", "bm25") for f in forms} | {FULL_VIEW}
    assert group["bm25 x snippets"].trials >= MIN_REQUESTS and group[FULL_VIEW].successes == group[FULL_VIEW].trials
    # Calibration sees one half of the requests; the benchmark scores the other.
    calibration = {r.qid for r in requests(data, half="calibration")}
    evaluation = {r.qid for r in requests(data, half="evaluation")}
    assert calibration and evaluation and not calibration & evaluation
    assert sum(g[FULL_VIEW].trials for g in selector.groups.values()) == len(calibration)
    assert all(half_of(q) == "evaluation" for q in evaluation)


def test_a_miss_is_charged_the_escalation_it_causes(tmp_path: Path) -> None:
    """Calibration charges each miss the full view it leads to: the cheaper but less reliable configuration
    loses once its misses cost more than the exposure it saves."""
    selector = Selector()
    group = "csv|<=8k|selective fact"
    full_view = 2_400
    for config, successes, exposed in (("lexical x windows", 31, 1_300), ("hybrid x snippets", 38, 1_450)):
        for i in range(40):
            success = i < successes
            selector.record(group, config, success=success, exposed_chars=exposed)
            selector.observe_follow_up(group, config, 0 if success else full_view)
    both = selector.groups[group]
    assert both["lexical x windows"].reliability >= 0.6 and both["hybrid x snippets"].reliability >= 0.6
    assert both["lexical x windows"].exposed_chars < both["hybrid x snippets"].exposed_chars
    assert selector.choose(group, "csv").configuration == "hybrid x snippets"
    selector.save(tmp_path / "table.json")
    loaded = Selector.load(tmp_path / "table.json").groups[group]["lexical x windows"]
    assert loaded.follow_ups == 40 and loaded.follow_up_chars == pytest.approx(9 / 40 * full_view, abs=0.1)
