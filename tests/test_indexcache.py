"""The shared on-disk index cache: one parse per file version across processes, safe with concurrent writers."""

from __future__ import annotations

import os
import pickle
import threading
from pathlib import Path

from docs import long_markdown

from sparseread_mcp.files.artifacts import Artifact, load_artifact
from sparseread_mcp.files.indexcache import IndexCache
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.registry import default_registry
from sparseread_mcp.readers.text import TextReader


class CountingReader(TextReader):
    def __init__(self) -> None:
        super().__init__()
        self.parses = 0

    def parse(self, artifact: Artifact, *, passage_chars: int) -> ParsedArtifact:
        self.parses += 1
        return super().parse(artifact, passage_chars=passage_chars)


def artifact(root: Path, name: str = "manual.md", text: str | None = None) -> Artifact:
    (root / name).write_text(long_markdown() if text is None else text)
    return load_artifact(Roots((root,)).resolve(name))


def test_a_second_process_reads_the_parse_instead_of_parsing(tmp_path: Path) -> None:
    source = artifact(tmp_path)
    first, second = CountingReader(), CountingReader()
    built = IndexCache(tmp_path / "cache").parse(first, source, passage_chars=500)
    loaded = IndexCache(tmp_path / "cache").parse(second, source, passage_chars=500)
    assert (first.parses, second.parses) == (1, 0)
    assert loaded.passages == built.passages and loaded.outline == built.outline
    assert loaded.artifact == source and loaded.lines.starts == built.lines.starts


def test_entries_are_keyed_by_version_settings_and_content(tmp_path: Path) -> None:
    source, reader = artifact(tmp_path), CountingReader()
    cache = IndexCache(tmp_path / "cache", version="1.0")
    paths = {
        cache.entry_path(reader, source, passage_chars=500),
        cache.entry_path(reader, source, passage_chars=800),
        IndexCache(tmp_path / "cache", version="1.1").entry_path(reader, source, passage_chars=500),
        cache.entry_path(TextReader(), source, passage_chars=500),
        cache.entry_path(reader, artifact(tmp_path, "other.md", "# Other\n\nchanged"), passage_chars=500),
    }
    assert len(paths) == 5


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path: Path) -> None:
    source = artifact(tmp_path)
    cache = IndexCache(tmp_path / "cache")
    target = cache.entry_path(TextReader(), source, passage_chars=500)
    stop = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        own = IndexCache(tmp_path / "cache")  # as another replica: its own object, the same folder
        while not stop.is_set():
            own.parse(CountingReader(), source, passage_chars=500)
            own._store(target, TextReader().parse(source, passage_chars=500))

    def read() -> None:
        for _ in range(300):
            try:
                with target.open("rb") as handle:
                    pickle.load(handle)  # a half-written file would raise here
            except FileNotFoundError:
                continue
            except Exception as exc:
                failures.append(exc)

    writers = [threading.Thread(target=write) for _ in range(3)]
    readers = [threading.Thread(target=read) for _ in range(3)]
    for thread in [*writers, *readers]:
        thread.start()
    for thread in readers:
        thread.join(timeout=120)
    stop.set()
    for thread in writers:
        thread.join(timeout=120)
    assert failures == []
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".tmp-")] == []
    assert IndexCache(tmp_path / "cache").parse(CountingReader(), source, passage_chars=500).passages


def test_a_damaged_entry_is_parsed_again_and_replaced(tmp_path: Path) -> None:
    source, reader = artifact(tmp_path), CountingReader()
    cache = IndexCache(tmp_path / "cache")
    cache.parse(reader, source, passage_chars=500)
    entry = cache.entry_path(reader, source, passage_chars=500)
    entry.write_bytes(entry.read_bytes()[:100])
    again = IndexCache(tmp_path / "cache")
    assert again.parse(reader, source, passage_chars=500).passages and reader.parses == 2
    assert again.writes == 1 and IndexCache(tmp_path / "cache").parse(reader, source, passage_chars=500)
    assert reader.parses == 2


def test_a_table_with_a_live_connection_is_not_cached(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3,4\n")
    location = Roots((tmp_path,)).resolve("t.csv")
    reader = default_registry().reader_for(location.absolute)
    cache = IndexCache(tmp_path / "cache")
    parsed = cache.parse(reader, load_artifact(location, binary=reader.binary), passage_chars=500)
    assert parsed.queries is not None and cache.writes == 0


def test_the_least_recently_used_entries_are_pruned_past_the_size_limit(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "cache")
    sources = [artifact(tmp_path, f"f{n}.md", f"# File {n}\n\n" + "word " * 400) for n in range(4)]
    reader = CountingReader()
    for n, source in enumerate(sources):
        cache.parse(reader, source, passage_chars=500)
        os.utime(cache.entry_path(reader, source, passage_chars=500), (1_000 + n, 1_000 + n))
    cache.parse(reader, sources[0], passage_chars=500)  # a hit: f0 becomes the most recently used
    sizes = sorted(p.stat().st_size for p in cache.folder.glob("*/*.pickle"))
    IndexCache(tmp_path / "cache", max_bytes=sum(sizes[:3])).prune()
    kept = {p for p in cache.folder.glob("*/*.pickle")}
    assert cache.entry_path(reader, sources[0], passage_chars=500) in kept
    assert cache.entry_path(reader, sources[1], passage_chars=500) not in kept
    assert len(kept) <= 3
