from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparseread_mcp.anchors import Anchor, format_pointer, parse_anchor, parse_target
from sparseread_mcp.errors import AnchorError

lines = st.integers(min_value=1, max_value=10**6)


@given(first=lines, extra=st.integers(min_value=0, max_value=1000))
def test_line_anchors_round_trip(first: int, extra: int) -> None:
    anchor = Anchor(kind="lines", first_line=first, last_line=first + extra)
    assert parse_anchor(anchor.format()) == anchor


@given(line=lines, first=st.integers(min_value=1, max_value=10**6), extra=st.integers(min_value=0, max_value=5000))
def test_column_anchors_round_trip(line: int, first: int, extra: int) -> None:
    anchor = Anchor(kind="columns", first_line=line, last_line=line, first_col=first, last_col=first + extra)
    assert parse_anchor(anchor.format()) == anchor


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("L3", "lines"),
        ("L3-L9", "lines"),
        ("L2:C5-C80", "columns"),
        ("p12", "page"),
        ("p2:L3-L20", "page"),
        ("row=17", "row"),
        ("$.a.b", "keypath"),
        ("Renewal", "section"),
        ("Store.load", "section"),
    ],
)
def test_anchor_kinds(text: str, kind: str) -> None:
    anchor = parse_anchor(text)
    assert anchor.kind == kind
    assert anchor.format() == text


@pytest.mark.parametrize("bad", ["L0", "L9-L3", "L3:C9-C2", "L1x"])
def test_malformed_line_anchors_say_what_to_use(bad: str) -> None:
    with pytest.raises(AnchorError, match=r"L12|1-based"):
        parse_anchor(bad)


def test_pointer_parses_into_path_rev_and_anchor() -> None:
    target = parse_target("docs/a@b.md@sha256:0123456789ab#L12-L18")
    assert (target.path, target.rev) == ("docs/a@b.md", "sha256:0123456789ab")
    assert target.anchor == Anchor(kind="lines", first_line=12, last_line=18)
    assert format_pointer(target.path, target.rev or "", target.anchor) == "docs/a@b.md@sha256:0123456789ab#L12-L18"


def test_plain_path_with_heading_anchor_is_not_a_pointer() -> None:
    target = parse_target("notes/x.md#Renewal terms")
    assert target.rev is None and target.path == "notes/x.md"
    assert target.anchor is not None and target.anchor.name == "Renewal terms"
