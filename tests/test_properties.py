"""Properties of the gate and the protocol over random documents, intents, actions and budgets."""

from __future__ import annotations

import itertools

from conftest import source_at
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scratch import scratch_dir

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings, Slot
from sparseread_mcp.errors import AnchorError, BudgetTooSmall, IntentError
from sparseread_mcp.wire import wire_blocks

WORDS = ["alpha", "beta", "gamma", "delta", "ledger", "river", "42", "3.5%", "Zürich", "naïve", "—", "x"]
_DIR = scratch_dir("sparseread-props-")
_NAMES = itertools.count()

word = st.sampled_from(WORDS)
sentence = st.lists(word, min_size=1, max_size=30).map(lambda ws: " ".join(ws) + ".")
paragraph = st.lists(sentence, min_size=1, max_size=8).map(" ".join)
block = st.one_of(
    paragraph,
    st.tuples(st.integers(1, 3), st.lists(word, min_size=1, max_size=4)).map(
        lambda t: "#" * t[0] + " " + " ".join(t[1])
    ),
    st.lists(paragraph, min_size=1, max_size=3).map(lambda ps: "\n".join("- " + p for p in ps)),
    st.lists(word, min_size=2, max_size=4).map(lambda ws: "| " + " | ".join(ws) + " |\n|---|---|"),
    paragraph.map(lambda p: "```\n" + p + "\n```"),
    st.just("\f"),
)
multi_line_doc = st.lists(block, min_size=1, max_size=60).map("\n\n".join)
single_line_doc = st.lists(sentence, min_size=1, max_size=200).map(" ".join)
document = st.one_of(multi_line_doc, single_line_doc)

intent = st.one_of(
    st.none(),
    st.builds(Intent, goal=st.lists(word, min_size=1, max_size=6).map(" ".join)),
    st.builds(Intent, needles=st.lists(word, min_size=1, max_size=2)),
    st.builds(
        Intent,
        slots=st.lists(
            st.builds(
                Slot, id=st.sampled_from(["a", "b", "c"]), question=st.lists(word, min_size=1, max_size=5).map(" ".join)
            ),
            min_size=1,
            max_size=3,
            unique_by=lambda s: s.id,
        ),
    ),
    st.builds(Intent, goal=st.just("all of it"), need_full=st.just(True)),
)
call = st.tuples(
    st.sampled_from(["scout", "focus", "collect", "refine", "verify", "focus", "refine"]),
    intent,
    st.sampled_from([600, 700, 1000, 1500, 4000, 8000]),
    st.one_of(st.none(), st.integers(1, 50).map(lambda n: f"#L{n}"), st.integers(1, 50).map(lambda n: f"#L1-L{n}")),
)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=document, calls=st.lists(call, min_size=1, max_size=6), native=st.sampled_from([0, 60, 2000]))
def test_the_gate_and_protocol_invariants_hold(
    text: str, calls: list[tuple[str, Intent | None, int, str | None]], native: int
) -> None:
    name = f"doc{next(_NAMES)}.md"
    (_DIR / name).write_text(text, encoding="utf-8")
    engine = ReadEngine(Settings(roots=(_DIR,), native_fit_tokens=native))
    delivered: dict[str, int] = {}
    sparse_spans: dict[str, list[tuple[str, str]]] = {}
    cursor: str | None = None
    for action, intent_, budget, anchor in calls:
        request = ReadRequest(
            target=name + (anchor or ""),
            action=action,
            intent=intent_,
            budget_tokens=budget,  # type: ignore[arg-type]
            cursor=cursor,
        )
        try:
            pack = engine.read("session", request)
        except (BudgetTooSmall, AnchorError, IntentError):
            cursor = None
            continue
        cursor = pack.cursor
        event(f"{action}:{pack.gate.decision}:{bool(pack.items)}")
        exposure = pack.exposure
        assert exposure.full_view_chars == len(text)
        assert exposure.episode_chars <= exposure.full_view_chars, "E must never exceed L"
        assert exposure.full_view_delivered_chars <= exposure.full_view_chars
        total = delivered.get(pack.episode.id, 0) + exposure.payload_chars
        delivered[pack.episode.id] = total
        assert total <= 2 * len(text), "an episode delivered more than 2L"
        assert pack.tokens <= budget
        assert sum(engine.counter.count(b) for b in wire_blocks(pack)) <= budget
        assert pack.truncated is False
        for item in pack.items:
            assert source_at(text, item.anchor) == item.text, "item text must be verbatim at its anchor"
        if pack.gate.decision == "sparse":
            earlier = sparse_spans.setdefault(pack.episode.id, [])
            for item in pack.items:
                # An explicit anchor dereferences: its text comes back whether or not it was sent before
                # (counted in E, so E <= L and 2L still hold above); only search results are never resent.
                if anchor is None:
                    assert item.anchor not in [a for a, _ in earlier], "an item was sent twice in one episode"
                earlier.append((item.anchor, item.text))
