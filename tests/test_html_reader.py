"""HTML: main content with its headings; navigation and scripts never reach the agent."""

from __future__ import annotations

from pathlib import Path

from conftest import source_at

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings

PAGE = """<!doctype html>
<html><head><title>Guide</title><style>body { color: red }</style>
<script>var NAV_SCRIPT_MARK = 1;</script></head>
<body>
<nav><a href="/">Home</a> NAV-MARK</nav>
<main>
<h1>Operating guide</h1>
<p>This guide explains how the
   pump station is operated.</p>
<h2>Maintenance</h2>
<p>Replace the filter every <b>90 days</b> (MARKER-HTML-FILTER).</p>
<ul><li>Check seals</li><li>Log pressure</li></ul>
<table><tr><th>Part</th><th>Interval</th></tr><tr><td>Filter</td><td>90 days</td></tr></table>
<h2>Safety</h2>
<p>Never open the valve under pressure.</p>
<pre>valve --close
valve --status</pre>
</main>
<footer>FOOTER-MARK</footer>
</body></html>
"""


def test_main_content_headings_and_source_lines(tmp_path: Path) -> None:
    filler = "".join(f"<p>Filler paragraph {i} about routine checks of the station.</p>\n" for i in range(120))
    (tmp_path / "guide.html").write_text(PAGE.replace("<h2>Safety</h2>", filler + "<h2>Safety</h2>"))
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    preview = engine.preview("s", "guide.html")
    assert [(o.title, o.level) for o in preview.outline] == [("Operating guide", 1), ("Maintenance", 2), ("Safety", 2)]
    full = engine.read("s", ReadRequest(target="guide.html", view="full", budget_tokens=20_000))
    text = "\n".join(i.text for i in full.items)
    for hidden in ("NAV-MARK", "NAV_SCRIPT_MARK", "FOOTER-MARK", "color: red"):
        assert hidden not in text
    assert "This guide explains how the pump station is operated." in text
    assert "- Check seals" in text and "Part | Interval" in text
    assert "valve --close\nvalve --status" in text

    pack = engine.read("t", ReadRequest(target="guide.html", intent=Intent(goal="how often is the filter replaced")))
    item = pack.items[0]
    assert "MARKER-HTML-FILTER" in item.text
    assert source_at(text, item.anchor) == item.text
    source = (tmp_path / "guide.html").read_text().split("\n")
    assert item.source_lines is not None
    assert any("MARKER-HTML-FILTER" in line for line in source[item.source_lines[0] - 1 : item.source_lines[1]])
    section = engine.read("u", ReadRequest(target="guide.html#Safety"))
    assert section.items[0].text.startswith("## Safety") and "valve --status" in section.items[0].text
