from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from sparseread_mcp.errors import AnchorError
from sparseread_mcp.files.anchors import Anchor, format_pointer, parse_anchor, parse_target
from sparseread_mcp.files.lines import LineIndex

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
        ("L2:C5-L4:C9", "columns"),
        ("p12", "page"),
        ("p2:L3:C5-L4:C9", "page"),
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


@pytest.mark.parametrize("bad", ["L0", "L9-L3", "L3:C9-C2", "L1x", "L5:C3-L4:C9", "L4:C9-L4:C2"])
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


_long_lines = st.lists(st.text(alphabet="ab \f", min_size=0, max_size=120), min_size=1, max_size=8).map("\n".join)


@given(text=_long_lines, data=st.data())
def test_any_span_is_named_exactly_and_read_back(text: str, data: st.DataObject) -> None:
    # A passage cut from long lines may start inside one line and end inside a later one: its anchor
    # (and the page form of it) must name exactly those characters, never fail, never widen.
    assume(text)
    start = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=len(text)))
    index = LineIndex(text)
    anchor = index.anchor_for(start, end)
    assert index.span_of(parse_anchor(anchor.format())) == (start, end)
    page = index.page_of(start)
    if page is not None and index.page_span(page)[0] <= start and end <= index.page_span(page)[1]:
        paged = index.page_anchor_for(start, end)
        assert index.span_of(parse_anchor(paged.format())) == (start, end)
