"""No response of any tool, reader or view exceeds its budget, as counted by the configured tokenizer."""

from __future__ import annotations

import json
import os

from docs import long_markdown, single_line
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scratch import scratch_dir

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.errors import SparsereadError
from sparseread_mcp.wire import wire_blocks

_ROOT = scratch_dir("sparseread-budgets-")
(_ROOT / "manual.md").write_text(long_markdown(sections=30))
(_ROOT / "scraped.txt").write_text(single_line(sentences=400))
(_ROOT / "app.py").write_text(
    "".join(f"class C{i}:\n    def m{k}(self):\n        return {i * k}\n\n" for i in range(40) for k in range(3))
)
(_ROOT / "rows.csv").write_text("id,city,amount\n" + "".join(f"{i},City{i},{i * 3}\n" for i in range(1, 1500)))
(_ROOT / "data.json").write_text(json.dumps({"items": [{"id": i, "tag": f"t{i % 7}"} for i in range(800)]}, indent=1))
(_ROOT / "app.log").write_text("".join(f"2026-11-29T10:00:{i % 60:02d}Z INFO request {i} ok\n" for i in range(900)))
(_ROOT / "page.html").write_text(
    "<main>" + "".join(f"<h2>H{i}</h2><p>para {i} text</p>" for i in range(300)) + "</main>"
)
FILES = ["manual.md", "scraped.txt", "app.py", "rows.csv", "data.json", "app.log", "page.html", "."]
VIEWS = [None, "card", "outline", "full", "summary", "lines", "section", "snippets"]
ENGINES = {
    (tokenizer, margin): ReadEngine(Settings(roots=(_ROOT,), tokenizer=tokenizer, token_margin=margin))
    for tokenizer in ("o200k_base", "cl100k_base", "chars")
    for margin in (0.0, 0.25)
}


@settings(
    max_examples=int(os.environ.get("SPARSEREAD_BUDGET_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    target=st.sampled_from(FILES),
    view=st.sampled_from(VIEWS),
    action=st.sampled_from(["focus", "collect", "refine", "scout", "verify"]),
    goal=st.sampled_from(["City77 amount", "para 120", "m2 return", "request 512", "tag t3", "section 7", "x"]),
    anchor=st.sampled_from(["", "#L1-L60", "#L5", "#L1-L400"]),
    budget=st.one_of(st.sampled_from([200, 300]), st.integers(min_value=200, max_value=22_500)),
    engine_key=st.sampled_from(sorted(ENGINES)),
    session=st.integers(0, 3),
)
def test_no_response_exceeds_its_budget(
    target: str,
    view: str | None,
    action: str,
    goal: str,
    anchor: str,
    budget: int,
    engine_key: tuple[str, float],
    session: int,
) -> None:
    engine = ENGINES[engine_key]
    if target == ".":
        anchor = ""
    try:
        preview = engine.preview(f"s{session}", target, budget_tokens=budget)
        assert preview.tokens <= budget
        # As sent: a native preview is its frame, then the file verbatim (not the file JSON-escaped).
        assert sum(engine.counter.count(block) for block in wire_blocks(preview)) <= budget
        request = ReadRequest(
            target=target + anchor,
            action=action,
            view=view,
            intent=Intent(goal=goal),  # type: ignore[arg-type]
            budget_tokens=budget,
        )
        pack = engine.read(f"s{session}", request)
    except SparsereadError:
        return  # a clear refusal (budget too small, anchor out of range, ...) is an allowed answer
    assert pack.tokens <= budget
    assert sum(engine.counter.count(b) for b in wire_blocks(pack)) <= budget
    assert pack.tokenizer == engine.counter.name and pack.truncated is False
