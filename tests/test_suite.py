"""The suite's split (issue #32): `python -m pytest` runs the fast suite, `-m slow` the end-to-end groups
that tests/conftest.py names. A name there that no longer matches a test (renamed, moved) would silently
put that test back into the fast suite: each must name a file and a test."""

from __future__ import annotations

from pathlib import Path

from conftest import SLOW_FILES, SLOW_TESTS

TESTS = Path(__file__).parent


def test_every_slow_group_names_a_test_file_and_every_slow_test_a_test() -> None:
    for name in SLOW_FILES:
        assert (TESTS / name).is_file(), f"SLOW_FILES names {name}, which does not exist"
    for entry in SLOW_TESTS:
        file, test = entry.split("::", 1)
        source = (TESTS / file).read_text()
        function = test.split("[", 1)[0]
        assert f"def {function}(" in source, f"SLOW_TESTS names {entry}: no such test"
        if "[" in test:  # a parameter set: the words of its id come from the test's parameters
            for word in test.split("[", 1)[1].rstrip("]").split("-"):
                assert word in source, f"SLOW_TESTS names {entry}: no parameter holds {word!r}"
