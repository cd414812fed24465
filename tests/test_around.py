"""What "around a passage" may read: never more than its share on either side, and on a paged text never
another page's text, whatever the pages and the passage (protocol/around.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.protocol.around import bounds_around

_line = st.text(alphabet="abc xyz 0123456789.,", min_size=0, max_size=90)
_page = st.lists(_line, min_size=1, max_size=30).map("\n".join)
_pages = st.lists(_page, min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(pages=_pages, paged=st.booleans(), data=st.data())
def test_around_stays_within_its_share_and_on_the_passages_pages(
    pages: list[str], paged: bool, data: st.DataObject
) -> None:
    text = ("\n\f" if paged else "\n").join(pages) + "\n"
    start = data.draw(st.integers(min_value=0, max_value=len(text) - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=len(text)))
    chars = data.draw(st.integers(min_value=1, max_value=400))
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "doc.txt").write_text(text)
        parsed = ReadEngine(Settings(roots=(Path(root),))).open("doc.txt")
    before, after = bounds_around(parsed, (start, end), chars)
    assert 0 <= start - before <= chars and 0 <= after - end <= chars
    lines = parsed.lines
    if lines.page_count:
        first, last = lines.page_of(start), lines.page_of(end - 1)
        assert first is not None and last is not None
        assert before >= lines.page_span(first)[0] and after <= max(end, lines.page_span(last)[1])
