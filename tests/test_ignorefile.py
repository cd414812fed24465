"""`.gitignore` rules as git reads them (gitignore(5)), matched in one pass over the path whatever the
pattern: the backtracking pattern that froze the server is answered at once (before the hang guard)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseread_mcp.directory.ignorefile import IgnoreFile, parse_rule

RULES = (
    """
# a comment, then a blank line

*.pyc
!keep.pyc
build/
/dist
docs/**/*.tmp
**/node_modules
cache/**
a/**/z
foo\\*bar
\\#hash
[abc]x?.log
[!0-9]*.bak
"""
    + "trailing\\ \n"
)  # an escaped trailing space


@pytest.mark.parametrize(
    ("path", "is_dir", "ignored"),
    [
        ("x.pyc", False, True),
        ("src/deep/x.pyc", False, True),  # no slash in the rule: any depth
        ("keep.pyc", False, False),  # re-included by the later `!` rule
        ("build", True, True),
        ("build", False, False),  # `build/` names folders only
        ("src/build", True, True),
        ("dist", True, True),
        ("src/dist", True, False),  # `/dist` is anchored to the ignore file's folder
        ("docs/c.tmp", False, True),  # `**/` matches no folder too
        ("docs/a/b/c.tmp", False, True),
        ("other/c.tmp", False, False),
        ("x/y/node_modules", True, True),
        ("cache/a/b", False, True),  # `cache/**`: everything inside
        ("a/z", False, True),
        ("a/b/c/z", False, True),
        ("b/a/z", False, False),
        ("foo*bar", False, True),  # an escaped star is a star
        ("fooxbar", False, False),
        ("#hash", False, True),
        ("bx1.log", False, True),
        ("dx1.log", False, False),
        ("x.bak", False, True),
        ("1.bak", False, False),
        ("trailing ", False, True),  # an escaped trailing space stays
        ("readme.md", False, False),
    ],
)
def test_rules_decide_as_git_does(path: str, is_dir: bool, ignored: bool) -> None:
    assert bool(IgnoreFile.parse(RULES).decides(path, is_dir=is_dir)) == ignored


def test_lines_that_are_not_rules_are_skipped_and_counted() -> None:
    rules = IgnoreFile.parse("ok\n[unterminated\n" + "x" * 5000 + "\n" + "/".join(["**"] * 9) + "/a\n# note\n\n")
    assert len(rules.rules) == 1 and rules.skipped == 3


def test_the_backtracking_pattern_is_decided_in_one_pass() -> None:
    hostile = IgnoreFile.parse("*a" * 40 + "\n")
    assert hostile.decides("a" * 4000 + "b", is_dir=False) is None  # every star, no final `a`: no match
    assert hostile.decides("a" * 4000, is_dir=False) is True


glob_piece = st.sampled_from(["a", "b", "*", "?", "[ab]", "[!a]", "**", "/", "."])


@given(st.lists(glob_piece, min_size=1, max_size=12), st.text("ab./", max_size=30))
def test_any_generated_rule_is_parsed_or_skipped_and_matches_without_error(pieces: list[str], path: str) -> None:
    rule = parse_rule("".join(pieces))
    if rule is not None and path.strip("/"):
        rule.matches(path.strip("/"), is_dir=False)
