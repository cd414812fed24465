"""The selector at work in live reads: the pack names its configuration, nothing reliable means the full
view, follow-up calls adapt costs, and the exposure forms stay inside their budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs import long_markdown

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.locate import LocatorSet, build_query
from sparseread_mcp.locate.exposure import plan_exposure, regions
from sparseread_mcp.readers.text import TextReader
from sparseread_mcp.select.configuration import FULL_VIEW
from sparseread_mcp.select.policy import Policy
from sparseread_mcp.select.selector import MIN_REQUESTS, Selector, group_of


def table_with(group: str, entries: dict[str, tuple[int, int, int]]) -> Selector:
    selector = Selector()
    for configuration, (successes, trials, exposed) in entries.items():
        for i in range(trials):
            selector.record(group, configuration, success=i < successes, exposed_chars=exposed)
    return selector


def engine_with(tmp_path: Path, selector: Selector, **settings: object) -> ReadEngine:
    engine = ReadEngine(Settings(roots=(tmp_path,), **settings))  # type: ignore[arg-type]
    engine.selection = Policy(engine.settings, engine.locators, selector)
    return engine


@pytest.fixture
def long_doc(tmp_path: Path) -> str:
    sections = long_markdown(sections=160).split("\n## ")
    # One section, two thirds in, is the only one about zeppelins.
    at = 2 * len(sections) // 3
    sections[at] += "\n\nThe zeppelin hangar stood empty after the storm; its doors faced the lake.\n"
    (tmp_path / "guide.md").write_text("\n## ".join(sections))
    return "guide.md"


def group_for(tmp_path: Path, name: str) -> str:
    return group_of("markdown", len((tmp_path / name).read_text()), "selective fact")


def test_the_pack_names_the_configuration_and_why(tmp_path: Path, long_doc: str) -> None:
    group = group_for(tmp_path, long_doc)
    selector = table_with(
        group,
        {"bm25 x windows": (30, 30, 1400), "bm25 x snippets": (5, 30, 900), FULL_VIEW: (30, 30, 90_000)},
    )
    pack = engine_with(tmp_path, selector).read("s", ReadRequest(target=long_doc, intent=Intent(goal="glacier")))
    assert pack.selection is not None
    assert pack.selection.configuration == "markdown x bm25 x windows"
    assert "Wilson" in pack.selection.reason and group in pack.selection.reason
    assert pack.items and pack.gate.decision != "full_view"
    # Windows: contiguous text, never more than the live focus exposure (1,500 chars for a fact).
    assert sum(len(item.text) for item in pack.items) <= 1_500


def test_nothing_reliable_answers_with_the_full_view_from_the_best_match(tmp_path: Path, long_doc: str) -> None:
    source = (tmp_path / long_doc).read_text()
    group = group_for(tmp_path, long_doc)
    selector = table_with(group, {"bm25 x snippets": (4, 40, 900), FULL_VIEW: (40, 40, 90_000)})
    engine = engine_with(tmp_path, selector)
    pack = engine.read("s", ReadRequest(target=long_doc, intent=Intent(goal="zeppelin hangar"), budget_tokens=3000))
    assert pack.gate.decision == "full_view"
    assert pack.selection is not None and pack.selection.configuration == "markdown x full_view"
    assert "no configuration reaches reliability 0.6" in pack.selection.reason
    assert "best match" in pack.selection.reason and pack.cursor
    # The first page holds the best match; the pages together are the whole document, each part once.
    assert "zeppelin" in pack.items[0].text.lower()
    pages = [pack]
    while pages[-1].cursor:
        pages.append(engine.read("s", ReadRequest(target=long_doc, cursor=pages[-1].cursor, budget_tokens=3000)))
    spans = sorted((source.index(p.items[0].text), p.items[0].text) for p in pages if p.items)
    position = 0
    for start, text in spans:
        assert source[position:start].strip("\n") == ""  # only the newline between two pages is skipped
        position = start + len(text)
    assert source[position:].strip("\n") == ""
    assert pages[-1].exposure.full_view_delivered_chars <= pages[-1].exposure.full_view_chars
    assert pages[-1].left_out and "last part" in pages[-1].left_out


def test_small_groups_use_the_default_and_fixed_location_skips_the_table(tmp_path: Path, long_doc: str) -> None:
    group = group_for(tmp_path, long_doc)
    selector = table_with(group, {"bm25 x windows": (MIN_REQUESTS - 2, MIN_REQUESTS - 1, 1000)})
    pack = engine_with(tmp_path, selector).read("s", ReadRequest(target=long_doc, intent=Intent(goal="glacier")))
    assert pack.selection is not None and pack.selection.configuration == "markdown x bm25 x snippets"
    assert "default" in pack.selection.reason
    fixed = engine_with(tmp_path, table_with(group, {FULL_VIEW: (40, 40, 1)}), location="lexical")
    pack = fixed.read("s", ReadRequest(target=long_doc, intent=Intent(goal="glacier")))
    assert pack.selection is not None and pack.selection.configuration == "markdown x lexical x snippets"


def test_follow_up_calls_raise_the_cost_of_the_configuration_that_answered(tmp_path: Path, long_doc: str) -> None:
    group = group_for(tmp_path, long_doc)
    selector = table_with(group, {"bm25 x snippets": (40, 40, 900), "lexical x snippets": (40, 40, 1000)})
    engine = engine_with(tmp_path, selector)
    first = engine.read("s", ReadRequest(target=long_doc, intent=Intent(goal="glacier moraine")))
    assert first.selection is not None and first.selection.configuration.endswith("bm25 x snippets")
    before = selector.groups[group]["bm25 x snippets"]
    reliability = before.reliability
    for _ in range(3):
        engine.read("s", ReadRequest(target=long_doc, action="refine"))
    stats = selector.groups[group]["bm25 x snippets"]
    assert stats.follow_ups == 3 and stats.follow_up_chars > 0
    assert stats.reliability == reliability  # reliability is calibrated once; only costs move
    assert selector.choose(group, "markdown").configuration == "lexical x snippets"


def test_without_the_semantic_extra_the_choice_says_so(tmp_path: Path, long_doc: str) -> None:
    group = group_for(tmp_path, long_doc)
    selector = table_with(
        group, {"hybrid x snippets": (40, 40, 900), "bm25 x snippets": (39, 40, 1000), FULL_VIEW: (40, 40, 9e4)}
    )
    engine = engine_with(tmp_path, selector)
    engine.locators.semantic = False
    pack = engine.read("s", ReadRequest(target=long_doc, intent=Intent(goal="glacier")))
    assert pack.selection is not None and pack.selection.configuration == "markdown x bm25 x snippets"
    assert "semantic extra (not installed)" in pack.selection.reason


def test_exposure_forms_stay_in_budget_and_windows_stay_in_their_region(tmp_path: Path) -> None:
    pages = "\n\f".join(
        f"Page {p} heading\n\n" + "\n\n".join(f"para {p}.{i} " * 30 for i in range(8)) for p in range(6)
    )
    (tmp_path / "paged.txt").write_text(pages)
    parsed = TextReader().parse(load_artifact(Roots((tmp_path,)).resolve("paged.txt")), passage_chars=300)
    ranking = LocatorSet().get("bm25").rank(parsed, build_query(["para 3.4"], []))
    assert ranking
    for budget in (300, 1000, 2500):
        for form in ("snippets", "windows", "context", "pages"):
            spans = plan_exposure(parsed, ranking, form, budget)  # type: ignore[arg-type]
            assert sum(s.end - s.start for s in spans) <= budget
            assert all(a.end <= b.start or b.end <= a.start for a in spans for b in spans if a is not b)
        # Context: every snippet, each grown by its neighbours on its own page with what the snippets left.
        snippets = plan_exposure(parsed, ranking, "snippets", budget)
        context = plan_exposure(parsed, ranking, "context", budget)
        assert [s.passage for s in snippets] == [s.passage for s in context]
        assert all(c.start <= s.start and s.end <= c.end for s, c in zip(snippets, context, strict=True))
        assert sum(s.end - s.start for s in context) >= sum(s.end - s.start for s in snippets)
        assert all(parsed.lines.page_of(c.start) == parsed.lines.page_of(c.end - 1) for c in context)
    spans = plan_exposure(parsed, ranking, "windows", 2500)
    region = regions(parsed)
    for span in spans:
        inside = [p.index for p in parsed.passages if span.start <= p.start and p.end <= span.end]
        assert len({region[i] for i in inside}) == 1  # a window never crosses a page
        assert "\f" not in pages[span.start : span.end].strip("\f\n")  # no page break inside


def test_pages_shows_the_best_passage_of_each_best_page_before_a_second_of_any(tmp_path: Path) -> None:
    # Page 2 matches the goal in every paragraph; pages 4 and 5 once each, less well.
    pages = [
        f"Page {p} heading\n\n"
        + "\n\n".join(
            ("harbour tariff schedule " * 3 if p == 2 else "harbour tariff " if p in (4, 5) and i == 0 else "")
            + f"filler {p}.{i} "
            + "words " * 40
            for i in range(6)
        )
        for p in range(7)
    ]
    (tmp_path / "paged.txt").write_text("\n\f".join(pages))
    parsed = TextReader().parse(load_artifact(Roots((tmp_path,)).resolve("paged.txt")), passage_chars=300)
    ranking = LocatorSet().get("bm25").rank(parsed, build_query(["harbour tariff schedule"], []))

    def pages_of(form: str) -> list[int | None]:
        spans = plan_exposure(parsed, ranking, form, 1_000)  # type: ignore[arg-type]
        return [parsed.lines.page_of(s.start) for s in spans]

    assert set(pages_of("snippets")) == {3}  # the best page's passages fill the budget
    spread = pages_of("pages")
    assert spread[0] == 3 and set(spread) == {3, 5, 6}  # each page's best first, in rank order
    assert sum(s.end - s.start for s in plan_exposure(parsed, ranking, "pages", 1_000)) <= 1_000


def test_a_small_file_already_sent_whole_is_named_not_resent(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("# Note\n\nThe audit fee was 4,200 dollars in 2021.\n\nNothing else happened.\n")
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    preview = engine.preview("s", "note.md")
    assert preview.content is not None  # native: the whole file came with the preview
    verify = engine.read(
        "s", ReadRequest(target="note.md", action="verify", intent=Intent(goal="the audit fee was 4,200"))
    )
    assert verify.items == [] and verify.exposure.payload_chars == 0
    assert verify.verification is not None and verify.verification.status == "supported"
    assert verify.already_delivered and verify.already_delivered[0].startswith("note.md@")
    focus = engine.read("s", ReadRequest(target="note.md", intent=Intent(goal="audit fee")))
    assert focus.items == [] and focus.already_delivered
    assert engine.read("s", ReadRequest(target="note.md", view="full")).items  # asked for: sent again
    # Another session, or a changed file, gets the text.
    assert engine.read("t", ReadRequest(target="note.md", intent=Intent(goal="audit fee"))).items
    (tmp_path / "note.md").write_text("# Note\n\nThe audit fee was 4,300 dollars in 2021.\n")
    assert engine.read("s", ReadRequest(target="note.md", intent=Intent(goal="audit fee"))).items


def test_a_live_focus_shows_what_was_calibrated_many_short_rows_included(tmp_path: Path) -> None:
    rows = ["city,country,river"] + [f"Town{i},Norland,{'Amber' if i % 3 == 0 else 'Slate'} river" for i in range(900)]
    (tmp_path / "towns.csv").write_text("\n".join(rows) + "\n")
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0, location="bm25"))
    pack = engine.read("s", ReadRequest(target="towns.csv", intent=Intent(goal="towns on the Amber river")))
    assert pack.gate.decision == "sparse"
    assert len(pack.items) > 4  # rows are short: the 1,500-character plan holds more than four
    assert all("Amber" in item.text for item in pack.items)
    assert sum(len(item.text) for item in pack.items) <= 1_500
