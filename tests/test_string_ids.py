"""A directory index finds words and names by hash, not by dictionary: every lookup must answer what a
scan of the list would, whatever the strings, and a copy in another process (another hash seed) too."""

from __future__ import annotations

import pickle
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from sparseread_mcp.directory.collection import FileEntry
from sparseread_mcp.directory.fileindex import FileIndex
from sparseread_mcp.directory.filerows import from_counts
from sparseread_mcp.directory.string_ids import StringIds

_WORD = st.text(alphabet="aAbB_é", max_size=4)


@given(st.lists(_WORD, max_size=40), _WORD)
def test_a_lookup_answers_as_a_scan_of_the_list(strings: list[str], other: str) -> None:
    exact, folded = StringIds(strings), StringIds(strings, key=str.casefold)
    for wanted in [*strings, other]:
        assert exact.positions(wanted) == [n for n, s in enumerate(strings) if s == wanted]
        assert folded.positions(wanted.casefold()) == [
            n for n, s in enumerate(strings) if s.casefold() == wanted.casefold()
        ]
        assert (wanted in exact) == (wanted in strings)


def test_a_copy_in_a_process_with_another_hash_seed_finds_the_same_strings() -> None:
    strings = [f"word{n}" for n in range(500)] + ["Sinc", "sinc"]
    sent = pickle.dumps((StringIds(strings), StringIds(strings, key=str.casefold)))
    script = (
        "import pickle, sys; exact, folded = pickle.loads(sys.stdin.buffer.read()); "
        "print(exact.get('word321'), exact.get('nothing'), folded.positions('sinc'))"
    )
    for seed in ("1", "2"):
        env = {"PYTHONHASHSEED": seed, "PYTHONPATH": ":".join(sys.path)}
        out = subprocess.run([sys.executable, "-c", script], input=sent, capture_output=True, env=env, check=True)
        assert out.stdout.decode().split() == ["321", "None", "[500,", "501]"]


def test_definitions_of_a_name_and_of_its_other_cases_in_file_order() -> None:
    words: list[str] = []
    symbols = [[("Sinc", 5), ("sinc", 1)], [("helper", 2)], [("SINC", 9), ("sinc", 3)]]
    rows = from_counts([{"a": 1}, {"b": 1}, {"a": 2}], symbols, words)
    index = FileIndex([_entry(n) for n in range(3)], rows)
    assert index.defined("sinc") == [(0, 1), (2, 3)]
    assert index.defined_any_case("sinc") == [(0, 1), (2, 3), (0, 5), (2, 9)]  # its own first, then Sinc, SINC
    assert index.defined("nothing") == [] and index.defined_any_case("NOTHING") == []
    assert index.vocab.get("a") == 0 and "c" not in index.vocab


def _entry(n: int) -> FileEntry:
    return FileEntry(path=f"pkg/m{n}.py", size=10, mtime_ns=1, type="code")
