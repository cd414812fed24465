"""One Configuration (method, exposure form) for readers, the selector, calibration, previews and packs: its
text round-trips, and every configuration anyone declares names methods the locators or readers run."""

from __future__ import annotations

import copy
import pickle
from typing import get_args

import pytest

from sparseread_mcp.errors import ConfigError
from sparseread_mcp.locate import LocatorSet
from sparseread_mcp.readers.registry import default_registry
from sparseread_mcp.readers.text import TextReader
from sparseread_mcp.select.configuration import FULL_VIEW, Configuration, ReaderMethod
from sparseread_mcp.select.selector import FALLBACK_CONFIGURATION, Selector
from sparseread_mcp.vocabulary import ExposureForm, LocationMethod


def every_declared() -> list[tuple[str, Configuration]]:
    return [(reader.name, c) for reader in default_registry().readers for c in reader.configurations]


def test_the_text_round_trips() -> None:
    shipped = [c for group in Selector.load().groups.values() for c in group]
    for configuration in [c for _, c in every_declared()] + shipped + [FULL_VIEW, FALLBACK_CONFIGURATION]:
        text = str(configuration)
        again = Configuration.parse(text)
        assert type(again) is Configuration and again == configuration == text
        assert (again.method, again.form) == (configuration.method, configuration.form)
        for copied in (copy.deepcopy(configuration), pickle.loads(pickle.dumps(configuration))):
            assert type(copied) is Configuration and (copied.method, copied.form) == (again.method, again.form)
    windows = Configuration("bm25", "windows")
    parts = (windows.method, windows.form, windows.exposure)
    assert str(windows) == "bm25 x windows" and parts == ("bm25", "windows", "windows")
    assert windows.qualified("markdown") == "markdown x bm25 x windows"
    # The full view has no method; the reader's `any x full_view` is a different text, as previews list it.
    assert str(FULL_VIEW) == "full_view" and FULL_VIEW.method is None and Configuration.parse("full_view") == FULL_VIEW
    assert Configuration.parse("any x full_view") != FULL_VIEW
    # A reader's own form plans its located passages as snippets.
    assert Configuration("bm25", "page_snippets").exposure == "snippets"


def test_unknown_names_are_refused_with_the_real_choices() -> None:
    with pytest.raises(ConfigError, match=r"unknown method 'grep'.*bm25"):
        Configuration.parse("grep x snippets")
    with pytest.raises(ConfigError, match=r"unknown exposure form 'chapters'.*windows"):
        Configuration.parse("bm25 x chapters")
    with pytest.raises(ConfigError, match="ranks nothing"):
        _ = FULL_VIEW.location


def test_every_declared_configuration_names_methods_the_locators_or_its_reader_run() -> None:
    locators = LocatorSet()
    locators.semantic = True  # every method this code can build, with or without the extra installed
    # The vocabulary of location methods is what the locators build, no more and no less.
    assert set(get_args(LocationMethod)) == set(locators.available)
    # Every exposure form the shipped table names exists; `pages` is measured by the location ablation
    # (bench/location_ablation.py) and not calibrated into the table, the only one left out.
    in_table = {c.form for group in Selector.load().groups.values() for c in group}
    assert set(get_args(ExposureForm)) - in_table == {"pages"}
    declared = every_declared()
    assert {reader for reader, _ in declared} == {r.name for r in default_registry().readers}
    for reader, configuration in declared:
        assert type(configuration) is Configuration, (reader, configuration)
        method = configuration.method
        assert method is not None, (reader, configuration)
        # A location method the locators build, or the reader's own, built on one (`bm25+symbols`) or not.
        location = method.partition("+")[0]
        assert location in locators.available or method in get_args(ReaderMethod), (reader, configuration)
        if location in ("bm25", "lexical"):
            assert locators.get(location) is not None
    # The shipped table names only location methods (and the full view): what a live read can run.
    for group in Selector.load().groups.values():
        assert all(c == FULL_VIEW or c.method in locators.available for c in group)


def test_previews_list_each_readers_configurations_with_its_name() -> None:
    listed = default_registry().configurations(TextReader())
    methods = ("bm25 x snippets", "lexical x snippets", "needles x snippets", "any x full_view")
    assert listed == [f"text x {m}" for m in methods]
