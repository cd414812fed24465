"""The parse and index caches are bounded by memory as well as entries; evicted files are parsed again."""

from __future__ import annotations

from pathlib import Path

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.files.artifacts import LruCache


def test_the_least_recently_used_go_first_when_the_byte_budget_is_exceeded() -> None:
    cache: LruCache[str, str] = LruCache(100, max_bytes=100, weigh=len)
    cache.put("a", "x" * 40)
    cache.put("b", "y" * 40)
    assert cache.get("a") is not None  # now b is the least recently used
    cache.put("c", "z" * 40)
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    assert cache.bytes == 80 and cache.evictions == 1
    cache.put("a", "x" * 10)  # replacing a value re-weighs it
    assert cache.bytes == 50 and len(cache) == 2


def test_a_value_larger_than_the_whole_budget_is_returned_but_not_kept() -> None:
    cache: LruCache[str, str] = LruCache(100, max_bytes=100, weigh=len)
    cache.put("small", "s" * 10)
    assert cache.get_or_build("huge", lambda: "h" * 500) == "h" * 500
    assert cache.get("huge") is None and cache.get("small") is not None and cache.bytes == 10


def test_the_entry_count_still_bounds_a_cache_without_a_weigher() -> None:
    cache: LruCache[int, int] = LruCache(2)
    for i in range(5):
        cache.put(i, i)
    assert len(cache) == 2 and cache.bytes == 0 and cache.get(4) == 4


def write_docs(root: Path, count: int) -> None:
    for n in range(count):
        body = "".join(f"Paragraph {i} of doc {n} says CACHE-{n}-{i} once.\n\n" for i in range(2_000))
        (root / f"doc{n}.md").write_text(f"# Doc {n}\n\n{body}")


def test_past_the_cache_budget_files_are_evicted_and_reads_still_work(tmp_path: Path) -> None:
    write_docs(tmp_path, 3)  # each about 100 KB, about 0.6 MB once parsed and indexed
    small = ReadEngine(Settings(roots=(tmp_path,), cache_mb=2))  # half, 1 MB, for parsed files: one at a time
    roomy = ReadEngine(Settings(roots=(tmp_path,)))
    for engine in (small, roomy):
        for call, n in enumerate((0, 1, 2, 0)):
            pack = engine.read(f"s{call}", ReadRequest(target=f"doc{n}.md#L5", budget_tokens=1000))
            assert pack.items[0].text == f"Paragraph 1 of doc {n} says CACHE-{n}-1 once."
    assert roomy.parse_count == 3 and roomy.files.cache.evictions == 0
    assert small.parse_count == 4, "doc0 was evicted and parsed again"
    assert small.files.cache.evictions >= 2
    assert 0 < small.files.cache.bytes <= 1024 * 1024
