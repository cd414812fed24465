"""CPU-time attacks: regex needles that backtrack without end, huge or broken patterns, and the server
staying responsive to other sessions while one call's regex runs.

No timed assertions: each call runs under a small per-call limit, with a generous `anyio.fail_after` as a
hang guard, and must end with a typed error or a bounded answer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from flow import answer_text
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import deadline
from sparseread_mcp.errors import IntentError, PatternTooSlow
from sparseread_mcp.locate import patterns
from sparseread_mcp.locate.patterns import compile_needle
from sparseread_mcp.serve.server import create_server

#: Exponential for `re` (it tries every split of the run before the `!`); `regex` prunes some of that
#: but still takes 0.15 s on each 390-character run (2 s at 1,000), so a file of them runs past any limit.
CATASTROPHIC = "/(a+)+$/"
HANG_GUARD = 60


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    # Lines that fit one passage of long plain prose (400 characters), so the pattern meets the whole run before
    # its `!`: about 0.15 s a line for `regex`, 120 lines.
    (tmp_path / "runs.txt").write_text(("a" * 390 + "!\n") * 120)
    (tmp_path / "small.md").write_text("# Small\n\nThe answer is MARKER-42.\n")
    return tmp_path


def _typed_stop(text: str) -> bool:
    """The needle was stopped with a typed error: its own timeout, or the call's limit (whichever first)."""
    return ("simpler pattern" in text and "(a+)+$" in text) or "ran past its" in text


@pytest.mark.anyio
@pytest.mark.parametrize("target", ["runs.txt", "."])
async def test_a_catastrophic_regex_needle_is_stopped_with_a_typed_error(runs: Path, target: str) -> None:
    server = create_server(Settings(roots=(runs,), call_timeout_seconds=2))
    with anyio.fail_after(HANG_GUARD):
        async with Client(server) as client:
            result = await client.call_tool("sro_read", {"target": target, "intent": {"needles": [CATASTROPHIC]}})
    assert result.is_error
    assert _typed_stop(answer_text(result)), answer_text(result)
    assert "internal error" not in answer_text(result)


def test_a_slow_needle_outside_any_call_stops_at_the_match_cap(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MATCH_SECONDS", 0.2)
    engine = ReadEngine(Settings(roots=(runs,)))
    stopped = r"needle '/\(a\+\)\+\$/' was stopped: regex matching may take 0.2 s .* use a plain needle"
    with pytest.raises(PatternTooSlow, match=stopped):
        engine.read("s", ReadRequest(target="runs.txt", intent=Intent(needles=[CATASTROPHIC])))


def test_regex_matching_is_capped_per_call_not_only_per_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many passages that each backtrack for a while, none past the cap alone: the call's matching time
    runs out and the needle is refused, long before the call's own limit."""
    monkeypatch.setattr(patterns, "MATCH_SECONDS", 1.0)
    (tmp_path / "many.txt").write_text(("a" * 400 + "!\n\n") * 200)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    with deadline(HANG_GUARD), pytest.raises(PatternTooSlow, match="regex matching may take 1 s of a call"):
        engine.read("s", ReadRequest(target="many.txt", intent=Intent(needles=[CATASTROPHIC])))


def test_the_remaining_time_and_a_kinds_allowance_come_from_the_current_call() -> None:
    from sparseread_mcp.deadline import allowance, remaining, spend

    assert remaining() is None and allowance("regex", 5.0) == 5.0  # outside a call: the whole cap each step
    with deadline(10):
        assert remaining() is not None and 0 < remaining() <= 10  # type: ignore[operator]
        spend("regex", 4.5)
        assert allowance("regex", 5.0) <= 0.5 and allowance("other", 5.0) > 4.5
    with deadline(0):
        assert remaining() == 0.0 and allowance("regex", 5.0) == 0.0


#: Runs in a child process, so that a match holding the GIL (as `re` did) cannot also freeze the hang guard.
_TWO_SESSIONS = """
import sys, threading
from pathlib import Path
from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.deadline import deadline
from sparseread_mcp.errors import SparsereadError

started, attack_done, outcome = threading.Event(), threading.Event(), []
engine = ReadEngine(Settings(roots=(Path(sys.argv[1]),)))
count = engine.files._count_patterns  # sends the patterns to a worker

def count_and_signal(*args):
    started.set()
    return count(*args)

engine.files._count_patterns = count_and_signal

def attack():
    try:
        with deadline(8):  # time enough for three small reads on a busy machine
            engine.read("attacker", ReadRequest(target="runs.txt", intent=Intent(needles=[sys.argv[2]])))
    except SparsereadError as exc:
        outcome.append(str(exc))
    finally:
        attack_done.set()

thread = threading.Thread(target=attack)
thread.start()
assert started.wait(60)
for _ in range(3):
    pack = engine.read("other", ReadRequest(target="small.md", intent=Intent(needles=["MARKER-42"])))
    assert "MARKER-42" in pack.model_dump_json()
    assert not attack_done.is_set(), "the other session waited for the regex to finish"
thread.join()
print(outcome[0] if outcome else "no error")
"""


def test_another_session_is_answered_while_a_regex_needle_runs(runs: Path) -> None:
    """Two reading sessions in two threads, as the server runs two HTTP sessions' calls: `re` held the GIL
    for the whole match, so the other session waited (10 of 12 probes failed); now the match runs in a
    worker process.
    (Two in-memory clients of one server share its own (stdio-style) session, and with it its lock.)"""
    done = subprocess.run(
        [sys.executable, "-c", _TWO_SESSIONS, str(runs), CATASTROPHIC],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _typed_stop(done.stdout), done.stdout


@pytest.mark.anyio
async def test_http_sessions_and_healthz_are_answered_while_a_regex_needle_runs(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's probe, over the real server: with `re`, /healthz and a second session failed 10 of 12
    one-second probes while one session's needle ran. The other session keeps calling for as long as the
    attack is pending; every answer must come while it still is. (The server is a child process, so the
    hang guard here still fires if the server freezes.)"""
    import httpx
    from test_mcp_transports import running_http_server

    monkeypatch.setenv("SPARSEREAD_CALL_TIMEOUT", "8")  # the window for three answers, on a busy machine too
    attack_done = anyio.Event()
    answered_meanwhile = 0

    with running_http_server(runs, tmp_path) as url, anyio.fail_after(HANG_GUARD):
        async with Client(f"{url}/mcp") as attacker, Client(f"{url}/mcp") as other:

            async def attack() -> None:
                result = await attacker.call_tool(
                    "sro_read", {"target": "runs.txt", "intent": {"needles": [CATASTROPHIC]}}
                )
                assert result.is_error and _typed_stop(answer_text(result)), answer_text(result)
                attack_done.set()

            async with anyio.create_task_group() as tasks, httpx.AsyncClient() as http:
                tasks.start_soon(attack)
                while not attack_done.is_set():
                    result = await other.call_tool(
                        "sro_read", {"target": "small.md", "intent": {"needles": ["MARKER"]}}
                    )
                    health = await http.get(f"{url}/healthz")
                    assert not result.is_error and "MARKER-42" in answer_text(result) and health.status_code == 200
                    answered_meanwhile += not attack_done.is_set()
    assert answered_meanwhile >= 3


@pytest.mark.parametrize(
    ("needle", "message"),
    [
        ("/" + "a" * 100_000 + "/", "is a pattern of 100,000 characters"),
        ("/(?:(?:a{1000}){1000}){1000}/", "repeats to about"),
        ("/(?:a{65535}){65535}/", "repeats to about"),
        ("/a{99999999999999999999}/", "repeats to about"),
        ("/(/", "not a valid regular expression"),
        ("/" + "(" * 450 + "a" + ")" * 450 + "/", "not a valid regular expression|ok"),
        (r"/(a)\2/", "not a valid regular expression"),
        (r"/\p{Nope}/", "not a valid regular expression"),
        ("/a{2,1}/", "not a valid regular expression"),
        ("/x**/", "not a valid regular expression"),
    ],
)
def test_huge_or_broken_patterns_are_refused_before_they_run(needle: str, message: str) -> None:
    try:
        compiled = compile_needle(needle)
    except IntentError as exc:
        assert len(str(exc)) < 400
        assert any(part in str(exc) for part in message.split("|")), str(exc)
    else:
        assert "ok" in message  # deep nesting may compile; then it must still match under its timeout
        compiled.count("a" * 100)


def test_a_pattern_matching_everywhere_counts_a_bounded_number_of_matches() -> None:
    assert compile_needle("/./").count("x" * 50_000) == patterns.MAX_COUNT
    assert compile_needle("/x*/").count("y" * 1000) == 0  # empty matches mark nothing


@pytest.mark.parametrize(
    ("pattern", "size"),
    [("abc", 3), ("a{10}", 10), ("(?:ab){3}", 12), ("[a{9}]{2}", 2), (r"\p{L}{4}", 4), ("x{2,5}y", 6)],
)
def test_program_size_multiplies_counted_repeats(pattern: str, size: int) -> None:
    assert patterns.program_size(pattern) == size


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="abc ", max_size=3000),
    pattern=st.sampled_from(["ab|ba", "a(?!b)", "(?<=c)a", r"\bab", "[ab]c", "abc$", "^a", "c{2}", "a b"]),
)
def test_windowed_matching_counts_what_one_pass_counts(text: str, pattern: str) -> None:
    """With matches shorter than the overlap, matching in windows finds exactly what one pass finds."""
    import regex

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(patterns, "WINDOW_CHARS", 100)
        patch.setattr(patterns, "OVERLAP_CHARS", 10)
        needle = compile_needle(f"/{pattern}/")
        whole = [m for m in regex.finditer(pattern, text, flags=regex.IGNORECASE) if m.end() > m.start()]
        assert needle.count(text) == min(len(whole), patterns.MAX_COUNT)
        assert needle.search(text) == bool(regex.search(pattern, text, flags=regex.IGNORECASE))


#: VmHWM is this process's own peak; ru_maxrss would carry the parent's peak across exec.
_MATCH_MEMORY = """
import sys
from sparseread_mcp.locate.patterns import compile_needle
def peak_kb():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
text = "a" * 5_000_000
before = peak_kb()
for needle in ("/(.)*/", "/((((a))))*/", "/(?:\\\\w\\\\w?)*$/"):
    compile_needle(needle).count(text)
print((peak_kb() - before) // 1024)
"""


def test_matching_memory_stays_bounded_on_a_long_text() -> None:
    """Backtracking keeps memory for every character a match passes: `(.)*` took 500 MB on 3 MB of text.
    Long texts are matched a window at a time (in a child process with an address-space cap)."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n" + _MATCH_MEMORY,
        ],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) < 200, f"{done.stdout.strip()} MB more to match"


@pytest.mark.parametrize("needle", ["/(?R)?a/", "/(a(?1)?)/", "/(?P<x>a(?&x)?)/", "/(?P<x>a(?P>x)?)/", "/(a(?-1)?)/"])
def test_patterns_that_call_a_group_are_refused(needle: str) -> None:
    """Recursion took gigabytes in under a second on 100,000 characters."""
    with pytest.raises(IntentError, match="calls a group or itself"):
        compile_needle(needle)
