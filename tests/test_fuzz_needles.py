"""Fuzzed regex needles (nested quantifiers, huge repeats, backreferences, lookarounds, bad syntax) on a
file and a folder: always a typed error or an answer, and a call stops at its limit.

`SPARSEREAD_FUZZ_EXAMPLES` scales the examples (CI sets it higher).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scratch import scratch_dir

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import deadline
from sparseread_mcp.errors import SparsereadError

EXAMPLES = int(os.environ.get("SPARSEREAD_FUZZ_EXAMPLES", "60"))
#: Each call's limit: a needle that backtracks is stopped by its match timeout within it.
CALL_SECONDS = 0.5

_ROOT = scratch_dir("sparseread-needles-")
(_ROOT / "runs.txt").write_text(("a" * 300 + "!\n") * 20 + "ERR-42 a-a-a-a-a-a " * 50 + "\n")
(_ROOT / "sub").mkdir()
(_ROOT / "sub" / "notes.md").write_text("# Notes\n\n" + "aaaa " * 400 + "\n\n" + '"' * 500 + "\n")
_ENGINE = ReadEngine(Settings(roots=(_ROOT,)))

#: Backtracking, huge repeats, backreferences, bad nesting, recursion, capture history, fuzzy matching.
KNOWN_HARD = [
    *("/(a+)+$/", "/(a|aa)+$/", "/(.*a){20}/", "/a{1000000}/", r"/(a)\1{1000}/", "/" + "(" * 300 + "/"),
    *("/(?R)?a/", "/(.)*/", "/(?:a{1,100}){e<=50}/", "/(?b)(?:ab){e}/", r"/\p{L}+\P{L}*$/"),
]
atom = st.sampled_from(
    ["a", "aa", ".", r"\w", r"\s", "[a-z]", "[^!]", "(a|aa)", "(a|a?)", r"\1", "!", "-", "x", "$", "^"]
)
quantifier = st.sampled_from(["", "", "+", "*", "?", "+?", "{2}", "{0,1000}", "{1000000}", "{1,}", "{99999999999}"])
wrap = st.sampled_from(["({})", "(?:{})", "(?={})", "(?<={})", "(?!{})", "{}", "{}"])


@st.composite
def regex_body(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 3 and draw(st.booleans()):
            inner = draw(regex_body(depth + 1))
            parts.append(draw(wrap).format(inner) + draw(quantifier))
        else:
            parts.append(draw(atom) + draw(quantifier))
    return "".join(parts)


needle = st.one_of(
    regex_body().map(lambda body: f"/{body}/"),
    st.text(alphabet="a()[]{}*+?|\\^$.,0123456789-!:<=", max_size=30).map(lambda body: f"/{body}/"),
    st.sampled_from(KNOWN_HARD),
    st.text(min_size=1, max_size=20),  # a plain needle
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(needles=st.lists(needle, min_size=1, max_size=3), target=st.sampled_from(["runs.txt", "sub/notes.md", "."]))
def test_fuzzed_regex_needles_end_in_an_answer_or_a_typed_error(needles: list[str], target: str) -> None:
    try:
        with deadline(CALL_SECONDS):
            pack = _ENGINE.read("fuzz", ReadRequest(target=target, intent=Intent(needles=needles)))
    except SparsereadError as exc:
        message = str(exc)
        assert message and "Traceback" not in message and len(message) < 600, message
    else:
        assert pack.tokens is not None and pack.tokens > 0
