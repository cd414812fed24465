"""The Redis session store against a real redis-server on loopback: round trip, eviction, concurrent writers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from docs import long_markdown

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.config import store_setting
from sparseread_mcp.errors import ConfigError, MissingDependency
from sparseread_mcp.gate.ledger import Ledger
from sparseread_mcp.models import Slot
from sparseread_mcp.protocol.session import MAX_EPISODES, DeliveredItem, Episode, Session
from sparseread_mcp.stores.fields import session_fields
from sparseread_mcp.stores.redis_store import RedisSessionStore, _redacted, _split_url


def required(reason: str) -> None:
    """Skip, except under CI=true, where a missing Redis would hide the replica tests: fail instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must run the Redis tests; .ci/run installs redis-server)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_redis(folder: Path) -> Iterator[str]:
    """A throwaway redis-server on a free loopback port, no persistence; yields its redis:// URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        required("redis-server is not installed (apt-get install redis-server)")
    try:
        import redis
    except ImportError:
        required("the redis extra is not installed (pip install 'sparseread-mcp[redis]')")
    assert binary is not None
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder)]
    command += ["--save", "", "--appendonly", "no", "--logfile", str(folder / "redis.log")]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT) as process:
        try:
            client = redis.Redis(host="127.0.0.1", port=port)
            deadline = time.monotonic() + 30
            while True:  # bounded: it answers PING, or the deadline fails the test
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        log = folder / "redis.log"
                        raise AssertionError(f"redis-server did not start: {log.read_text()}") from None
                    time.sleep(0.05)
            client.close()
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


_prefixes = iter(range(1_000_000))


@pytest.fixture
def url(redis_url: str) -> str:
    """The module's Redis with a key prefix of this test's own, so tests never see each other's sessions."""
    return f"{redis_url}?prefix=t{next(_prefixes)}:"


def _store(url: str, **options: int) -> RedisSessionStore:
    """A replica's store: its own connection pool and its own local copies."""
    import redis

    server, prefix, ttl = _split_url(url)
    options.setdefault("ttl_seconds", ttl)
    return RedisSessionStore(redis.Redis.from_url(server, decode_responses=True), prefix=prefix, **options)


def add_episode(session: Session, path: str = "a.md") -> Episode:
    episode = Episode(
        id=session.new_episode_id(),
        path=path,
        type="markdown",
        fingerprint="f" * 64,
        rev="sha256:ffffffffffff",
        objective="goal",
        full_view_tokens=900,
        ledger=Ledger(full_view_chars=4_000),
    )
    session.add_episode(episode)
    return episode


def _deliver(episode: Episode, start: int, end: int) -> None:
    episode.delivered.append(
        DeliveredItem(pointer=f"a.md@r#{start}", start=start, end=end, slots=("s",), support={}, text="t")
    )
    episode.ledger.record(end - start)


def test_a_session_round_trips_through_redis(url: str) -> None:
    writer, reader = _store(url), _store(url)
    session = writer.get("k")
    session.intent = Intent(goal="turbine harbor", slots=[Slot(id="rate", question="which rate?")])
    session.seen["a.md"] = "f" * 64
    episode = add_episode(session)
    _deliver(episode, 10, 90)
    episode.ranking = [(3, 0.5), (7, 0.25)]
    episode.full_view_next = 120
    writer.commit(session)
    copy = reader.get("k")
    assert session_fields(copy) == session_fields(session)
    assert copy.episodes[episode.id].ledger.sparse_chars == 80
    assert reader.keys() == ["k"]


def test_a_replica_sees_another_replicas_later_writes(url: str) -> None:
    a, b = _store(url), _store(url)
    first = a.get("k")
    add_episode(first)
    a.commit(first)
    on_b = b.get("k")
    _deliver(next(iter(on_b.episodes.values())), 0, 40)
    b.commit(on_b)
    again = a.get("k")  # the version moved: A reloads instead of trusting its copy
    assert next(iter(again.episodes.values())).ledger.sparse_chars == 40
    assert again is first  # refreshed in place, so its lock is still the one callers hold


def test_concurrent_writes_to_one_session_merge_without_losing_exposure(url: str) -> None:
    a, b = _store(url), _store(url)
    base = a.get("k")
    shared = add_episode(base)
    a.commit(base)
    on_a, on_b = a.get("k"), b.get("k")
    # Both replicas serve a call on the same session at once: each delivers an item of the shared
    # episode and opens an episode of its own; B commits second, on a version that has moved.
    _deliver(on_a.episodes[shared.id], 0, 100)
    _deliver(on_b.episodes[shared.id], 200, 260)
    only_a, only_b = add_episode(on_a, "a2.md"), add_episode(on_b, "b2.md")
    a.commit(on_a)
    b.commit(on_b)
    assert b.merges == 1
    final = _store(url).get("k")
    merged = final.episodes[shared.id]
    assert {(d.start, d.end) for d in merged.delivered} == {(0, 100), (200, 260)}
    assert merged.ledger.sparse_chars == 160  # both writers' exposure counts
    assert set(final.episodes) == {shared.id, only_a.id, only_b.id}
    assert session_fields(on_b) == session_fields(final)  # B holds the merged record too


def test_racing_replicas_never_lose_an_item(url: str) -> None:
    seed = _store(url)
    session = seed.get("k")
    episode_id = add_episode(session).id
    seed.commit(session)
    barrier = threading.Barrier(6)

    def replica(n: int) -> None:
        store = _store(url)  # its own connection pool and local copy, as another process has
        barrier.wait()
        for i in range(5):
            mine = store.get("k")
            with mine.lock:
                _deliver(mine.episodes[episode_id], 1000 * n + 10 * i, 1000 * n + 10 * i + 7)
                store.commit(mine)

    threads = [threading.Thread(target=replica, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    final = _store(url).get("k").episodes[episode_id]
    assert len(final.delivered) == 30
    assert final.ledger.sparse_chars == 30 * 7


def test_the_least_recently_used_sessions_are_evicted_past_the_limit(url: str) -> None:
    store = _store(url, max_sessions=3)
    for key in ("s1", "s2", "s3"):
        session = store.get(key)
        add_episode(session)
        store.commit(session)
    store.get("s1")  # used again: s2 is now the least recently used
    fourth = store.get("s4")
    add_episode(fourth)
    store.commit(fourth)
    assert sorted(store.keys()) == ["s1", "s3", "s4"]
    fresh = _store(url)
    assert not fresh.get("s2").episodes and fresh.get("s1").episodes


def test_sessions_expire_after_their_ttl_and_each_use_renews_it(url: str) -> None:
    store = _store(url, ttl_seconds=600)
    session = store.get("k")
    add_episode(session)
    store.commit(session)
    key = store._key("k")
    assert 0 < store._redis.pttl(key) <= 600_000
    store._redis.pexpire(key, 5_000)
    store.get("k")
    assert store._redis.pttl(key) > 5_000


def test_an_episode_count_past_the_limit_drops_the_oldest(url: str) -> None:
    store = _store(url)
    session = store.get("k")
    first = add_episode(session)
    for _ in range(MAX_EPISODES):
        add_episode(session)
    store.commit(session)
    stored = _store(url).get("k")
    assert len(stored.episodes) == MAX_EPISODES and first.id not in stored.episodes
    assert not store._redis.hexists(store._key("k"), f"ep:{first.id}")


def test_replicas_continue_one_reading_session_and_share_parsed_files(url: str, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "manual.md").write_text(long_markdown())
    settings = Settings(roots=(tmp_path / "docs",), store=url, cache_dir=tmp_path / "cache")
    a, b = ReadEngine(settings), ReadEngine(settings)
    focus = a.read("s", ReadRequest(target="manual.md", intent=Intent(goal="turbine harbor")))
    assert a.index_cache is not None and a.index_cache.writes == 1

    refine = b.read("s", ReadRequest(target="manual.md", action="refine"))
    assert refine.items and not {i.anchor for i in refine.items} & {i.anchor for i in focus.items}
    assert refine.exposure.episode_chars == focus.exposure.episode_chars + refine.exposure.payload_chars
    paged = a.read("s", ReadRequest(target="manual.md", view="full", budget_tokens=1500))
    assert paged.cursor
    nxt = b.read("s", ReadRequest(target="manual.md", cursor=paged.cursor, budget_tokens=1500))
    (first, last), (start, end) = paged.items[0].lines, nxt.items[0].lines
    assert nxt.items and (end < first or start > last)  # the next page: text the first page did not send
    assert b.index_cache is not None and (b.index_cache.hits, b.index_cache.writes) == (1, 0)
    card_a, card_b = a.card("s"), b.card("s")
    assert card_a.episodes == card_b.episodes and card_a.pointers == card_b.pointers
    assert {i.pointer for i in [*focus.items, *refine.items]} <= set(card_a.pointers)


def test_store_urls_are_parsed_and_checked(redis_url: str) -> None:
    assert store_setting("SPARSEREAD_STORE", "redis://h:6379/2") == "redis://h:6379/2"
    assert store_setting("SPARSEREAD_STORE", "state/s.db") == Path("state/s.db")
    with pytest.raises(ConfigError, match="http:// is not a session store"):
        store_setting("--store", "http://h/")
    assert Settings.from_env({"SPARSEREAD_STORE": "redis://h:1/0"}).store == "redis://h:1/0"
    assert _split_url("redis://h:1/3?ttl=60&prefix=x:&socket_timeout=2") == ("redis://h:1/3?socket_timeout=2", "x:", 60)
    assert _redacted("redis://:secret@h:1/0") == "redis://:***@h:1/0"
    with pytest.raises(ConfigError, match="ttl='soon' must be a positive number"):
        RedisSessionStore.from_url(f"{redis_url}?ttl=soon")
    with pytest.raises(ConfigError, match="unreachable"):
        RedisSessionStore.from_url(f"redis://127.0.0.1:{free_port()}/0")


def test_a_missing_redis_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis now raises ImportError
    with pytest.raises(MissingDependency, match=r"pip install 'sparseread-mcp\[redis\]'"):
        RedisSessionStore.from_url("redis://127.0.0.1:1/0")


def test_doctor_says_whether_the_redis_extra_is_importable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sparseread_mcp.commands.doctor import diagnose

    settings = Settings(roots=(tmp_path,), store="redis://127.0.0.1:1/0")
    assert next(c for c in diagnose(settings) if c.name == "redis extra").ok
    monkeypatch.setitem(sys.modules, "redis", None)
    missing = next(c for c in diagnose(settings) if c.name == "redis extra")
    assert not missing.ok and not missing.optional and "pip install 'sparseread-mcp[redis]'" in missing.detail
    assert next(c for c in diagnose(Settings(roots=(tmp_path,))) if c.name == "redis extra").optional
