"""Fuzzed file contents: every reader, misleading extensions, broken encodings and deep nesting.

Whatever a file holds, a preview, a read (any action, view, anchor, intent, budget) and the session card
answer within their budget or raise one of our typed errors; nothing else escapes. Bounded: a few dozen
examples by default, 500 under CI=true, SPARSEREAD_FUZZ_FILE_EXAMPLES overrides.
"""

from __future__ import annotations

import itertools
import json
import os

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from scratch import scratch_dir

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings, Slot
from sparseread_mcp.errors import SparsereadError
from sparseread_mcp.wire import wire_blocks

_DEFAULT = 500 if os.environ.get("CI") else 50
EXAMPLES = int(os.environ.get("SPARSEREAD_FUZZ_FILE_EXAMPLES", str(_DEFAULT)))

_DIR = scratch_dir("sparseread-fuzz-files-")
_CACHE = scratch_dir("sparseread-fuzz-cache-")
_NAMES = itertools.count()
_ENGINE = ReadEngine(Settings(roots=(_DIR,), cache_dir=_CACHE, call_timeout_seconds=30))

WORDS = ["alpha", "beta", "ERR-42", "naïve", "Zürich", "—", "", "x" * 60, "\t", "\\u0000", "é", "日本", "🙂"]
word = st.one_of(st.sampled_from(WORDS), st.text(max_size=12))
line = st.lists(word, max_size=12).map(" ".join)
lines = st.lists(line, max_size=40).map("\n".join)

scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), word)
json_value = st.recursive(
    scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(word, inner, max_size=5)),
    max_leaves=30,
)


def nested(depth: int, kind: str) -> str:
    if kind == "json":
        return '{"a":' * depth + "1" + "}" * depth
    if kind == "list":
        return "[" * depth + "]" * depth
    if kind == "yaml":
        return "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v\n"
    return "<div>" * depth + "deep" + "</div>" * depth


deep = st.tuples(st.integers(1, 3_000), st.sampled_from(["json", "list", "yaml", "html"])).map(
    lambda t: (".json" if t[1] in ("json", "list") else ".yaml" if t[1] == "yaml" else ".html", nested(*t))
)
markdown = st.lists(
    st.one_of(line, line.map(lambda s: "# " + s), line.map(lambda s: "- " + s), lines.map(lambda s: f"```\n{s}")),
    max_size=30,
).map("\n\n".join)
python = st.lists(
    st.one_of(
        word.map(lambda w: f"def f_{abs(hash(w)) % 997}(x):\n    return {w!r}"),
        word.map(lambda w: f"class C{abs(hash(w)) % 97}:\n    '''{w}'''\n    def m(self): pass"),
        line.map(lambda s: "    " * (len(s) % 4) + s),
        st.sampled_from(["(((", "]]]", "'''", "\\", "import", "@decorator", "async def"]),
    ),
    max_size=25,
).map("\n".join)
toml = st.lists(
    st.one_of(
        st.tuples(word, scalar).map(lambda kv: f"{kv[0]!r} = {json.dumps(kv[1])}"),
        word.map(lambda w: f"[{w}]"),
        line,
    ),
    max_size=20,
).map("\n".join)
csv_text = st.lists(st.lists(st.one_of(word, word.map(lambda w: f'"{w}')), max_size=6).map(",".join), max_size=40).map(
    "\n".join
)
jsonl = st.lists(st.one_of(json_value.map(json.dumps), line), max_size=30).map("\n".join)
log = st.lists(
    st.tuples(st.integers(0, 59), st.sampled_from(["INFO", "ERROR", "WARN", "DEBUG", "??"]), line).map(
        lambda t: f"2024-05-01T10:{t[0]:02d}:00Z {t[1]} {t[2]}"
    ),
    max_size=40,
).map("\n".join)
html = st.lists(
    st.one_of(
        line.map(lambda s: f"<h{len(s) % 6 + 1}>{s}</h{len(s) % 6 + 1}>"),
        line.map(lambda s: f"<p>{s}"),
        st.sampled_from(["<script>alert(1)</script>", "<table><tr><td>1", "<!--", "</div>", "&amp;&#x;"]),
    ),
    max_size=30,
).map("\n".join)
texts = st.one_of(
    markdown.map(lambda s: (".md", s)),
    lines.map(lambda s: (".txt", s)),
    python.map(lambda s: (".py", s)),
    json_value.map(lambda v: (".json", json.dumps(v))),
    json_value.map(lambda v: (".yaml", json.dumps(v, indent=1))),
    toml.map(lambda s: (".toml", s)),
    csv_text.map(lambda s: (".csv", s)),
    jsonl.map(lambda s: (".jsonl", s)),
    log.map(lambda s: (".log", s)),
    html.map(lambda s: (".html", s)),
    deep,
)
ANY_SUFFIX = [".md", ".txt", ".py", ".json", ".yaml", ".toml", ".csv", ".jsonl", ".log", ".html", ".pdf", ".xlsx", ""]


@st.composite
def file_bytes(draw: st.DrawFn) -> tuple[str, bytes]:
    """(suffix, bytes): typed text in some encoding, cut or corrupted, or raw bytes under any suffix."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(ANY_SUFFIX)), draw(st.binary(max_size=3_000))
    suffix, text = draw(texts)
    repeat = draw(st.sampled_from([1, 1, 1, 30, 300]))  # long files take the sparse route, not native fit
    if repeat > 1 and suffix == ".json":
        text = "[" + ",".join([text] * repeat) + "]"
    elif repeat > 1:
        text = "\n".join([text] * repeat)
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "latin-1", "utf-16", "mixed"]))
    if encoding == "mixed":
        half = len(text) // 2
        data = text[:half].encode("utf-8") + text[half:].encode("latin-1", "replace")
    else:
        data = text.encode(encoding, "replace")
    damage = draw(st.sampled_from(["none", "none", "cut", "invalid", "nul"]))
    where = draw(st.integers(0, max(0, len(data))))
    if damage == "cut":
        data = data[:where]
    elif damage == "invalid":
        data = data[:where] + b"\xff\xfe\xc3" + data[where:]
    elif damage == "nul":
        data = data[:where] + b"\x00" + data[where:]
    return suffix, data


intents = st.one_of(
    st.none(),
    st.builds(Intent, goal=line),
    st.builds(Intent, needles=st.lists(word.filter(bool), min_size=1, max_size=3)),
    st.builds(
        Intent,
        slots=st.lists(
            st.builds(Slot, id=st.sampled_from(["a", "b"]), question=line.filter(bool)),
            max_size=2,
            unique_by=lambda s: s.id,
        ),
    ),
    st.builds(Intent, query=st.sampled_from(["SELECT count(*) FROM data", "SELECT * FROM data", "$.a", "x"])),
    st.builds(Intent, goal=st.just("all of it"), need_full=st.just(True)),
)
VIEWS = [None, "snippets", "card", "outline", "section", "lines", "full", "summary", "compact", "projection"]
calls = st.lists(
    st.tuples(
        st.sampled_from(["scout", "focus", "collect", "refine", "verify"]),
        st.sampled_from(VIEWS),
        intents,
        st.sampled_from([600, 800, 1_500, 4_000, 22_500]),
        st.sampled_from(["", "#L1", "#L2-L9", "#L1:C1-C3", "#p1", "#row=1", "#$", "#$.a", "#Heading", "#L99999"]),
    ),
    min_size=1,
    max_size=3,
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(content=file_bytes(), preview_budget=st.sampled_from([600, 2_000, 8_000]), reads=calls)
def test_any_file_content_is_read_within_budget_or_refused_with_a_typed_error(
    content: tuple[str, bytes], preview_budget: int, reads: list[tuple[str, str | None, Intent | None, int, str]]
) -> None:
    suffix, data = content
    name = f"f{next(_NAMES)}{suffix}"
    (_DIR / name).write_bytes(data)
    session = f"s-{name}"
    try:
        preview = _ENGINE.preview(session, name, None, preview_budget)
        event(f"preview {suffix or 'no suffix'}: {preview.artifact.type}")
        assert preview.tokens <= preview_budget
    except SparsereadError as exc:
        event(f"preview refused: {type(exc).__name__}")
    cursor: str | None = None
    for action, view, intent, budget, anchor in reads:
        request = ReadRequest(
            target=name + anchor,
            action=action,  # type: ignore[arg-type]
            view=view,  # type: ignore[arg-type]
            intent=intent,
            budget_tokens=budget,
            cursor=cursor,
        )
        try:
            pack = _ENGINE.read(session, request)
        except SparsereadError as exc:
            event(f"read refused: {type(exc).__name__}")
            cursor = None
            continue
        event(f"read {action}/{view}: {pack.gate.decision}")
        cursor = pack.cursor
        assert pack.tokens <= budget
        assert sum(_ENGINE.counter.count(b) for b in wire_blocks(pack)) <= budget
    card = _ENGINE.card(session)
    assert card.tokens > 0
