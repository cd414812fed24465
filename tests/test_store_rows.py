"""A session store row cut, hand-edited or of any JSON value: the server starts that session afresh
(and logs why), never answers with an internal error. The store is written by a server, edited, then
read by a fresh server through the MCP client."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import answer_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from test_typed_errors import EXAMPLES, call_all

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

HUGE = 10**30
_COUNTER = itertools.count()
Edit = Callable[[sqlite3.Connection], object]


def _sql(statement: str) -> Edit:
    return lambda db: db.execute(statement)


def _state(change: Callable[[dict[str, Any]], object]) -> Edit:
    def edit(db: sqlite3.Connection) -> None:
        for key, text in db.execute("SELECT key, state FROM sessions").fetchall():
            state = json.loads(text)
            change(state)
            db.execute("UPDATE sessions SET state = ? WHERE key = ?", (json.dumps(state), key))

    return edit


def _field(name: str, change: Callable[[dict[str, Any]], object]) -> Edit:
    def edit(state: dict[str, Any]) -> None:
        value = json.loads(state[name])
        change(value)
        state[name] = json.dumps(value)

    return _state(edit)


def _episode(change: Callable[[dict[str, Any]], object]) -> Edit:
    def edit(db: sqlite3.Connection) -> None:
        for episode, text in db.execute("SELECT id, state FROM episodes").fetchall():
            state = json.loads(text)
            change(state)
            db.execute("UPDATE episodes SET state = ? WHERE id = ?", (json.dumps(state), episode))

    return edit


def _first_call(index: int, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda calls: calls["calls"][0].__setitem__(index, value)


STORE_EDITS: dict[str, Edit] = {
    "state not JSON": _sql("UPDATE sessions SET state = '{not json'"),
    "state a number": _sql("UPDATE sessions SET state = 42"),
    "state bytes": _sql("UPDATE sessions SET state = x'ff00'"),
    "used is text": _sql("UPDATE sessions SET used = 'yesterday'"),
    "format 2": _state(lambda s: s.update(fmt="2")),
    "meta not JSON": _state(lambda s: s.update(meta="{")),
    "meta a list": _state(lambda s: s.update(meta="[]")),
    "meta an object, not text": _state(lambda s: s.update(meta={"a": 1})),
    "meta nested past the stack": _state(lambda s: s.update(meta="[" * 100_000)),
    "intent of wrong types": _field("meta", lambda m: m.update(intent={"goal": 5, "want": "everything"})),
    "seen a list": _field("meta", lambda m: m.update(seen=[1])),
    "whole a string": _field("meta", lambda m: m.update(whole="x")),
    "order missing": _field("meta", lambda m: m.pop("order")),
    "order of numbers": _field("meta", lambda m: m.update(order=[1, 2])),
    "calls not JSON": _state(lambda s: s.update(calls="]")),
    "a call row cut": _field("calls", lambda c: c.update(calls=[[1]])),
    "a call's tokens a word": _field("calls", _first_call(6, "many")),
    "a call's tokens huge": _field("calls", _first_call(6, HUGE)),
    "dropped a word": _field("calls", lambda c: c.update(dropped="x")),
    "episode not JSON": _sql("UPDATE episodes SET state = 'nope'"),
    "episode a list": _sql("UPDATE episodes SET state = '[]'"),
    "episode emptied": _episode(lambda e: e.clear()),
    "ledger a string": _episode(lambda e: e.update(ledger="x")),
    "ledger huge": _episode(lambda e: e.update(ledger=[HUGE, HUGE, HUGE])),
    "ledger negative": _episode(lambda e: e.update(ledger=[-1, -5, -7])),
    "ledger of strings": _episode(lambda e: e.update(ledger=["1", "2", "3"])),
    "ledger of another text": _episode(
        lambda e: e.update(ledger=[50, 0, 0], delivered=[], full_view_next=None, full_view_done=False, closed=False)
    ),
    "full view tokens a word": _episode(lambda e: e.update(full_view_tokens="x")),
    "full view paged past the end": _episode(lambda e: e.update(full_view_next=HUGE)),
    "a delivered row cut": _episode(lambda e: e.update(delivered=[[1, 2]])),
    "delivered pages forgotten": _episode(lambda e: e.update(delivered=[["###@@@", 1, 2, [], "", False]])),
    "ranking of words": _episode(lambda e: e.update(ranking=[["a", "b"]])),
    "a slot without an id": _episode(lambda e: e.update(slots=[{"id": ""}])),
    "coverage of another shape": _episode(lambda e: e.update(coverage={"goal": {"status": "weird"}})),
    "path null": _episode(lambda e: e.update(path=None)),
    "closed a word": _episode(lambda e: e.update(closed="no")),
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A store file the server wrote (a focus, a paged full view, a preview), and the file it reads."""
    base = tmp_path_factory.mktemp("store")
    (base / "docs").mkdir()
    (base / "docs" / "a.md").write_text(
        "# A\n\n" + "".join(f"## S{i}\n\nalpha beta {i} gamma.\n\n" for i in range(300))
    )
    store = base / "sessions.db"

    async def write() -> None:
        async with Client(create_server(Settings(roots=(base / "docs",), store=store, session="stored"))) as client:
            await call_all(
                client,
                [
                    ("sro_read", {"target": "a.md", "intent": {"goal": "alpha beta"}}),
                    ("sro_read", {"target": "a.md", "view": "full", "budget_tokens": 1000}),
                    ("sro_preview", {"path": "a.md"}),
                ],
            )

    anyio.run(write)
    image = base / "image.db"  # one consistent file, with what the write-ahead log held
    with sqlite3.connect(store) as source, sqlite3.connect(image) as copy:
        source.backup(copy)
    return base / "docs", image.read_bytes()


@pytest.mark.anyio
async def test_the_stored_session_is_what_a_restarted_server_reads(tmp_path: Path, stored: tuple[Path, bytes]) -> None:
    """The edits below are read only if a restarted server resumes the stored session (by its name)."""
    docs, image = stored
    store = tmp_path / "sessions.db"
    store.write_bytes(image)
    async with Client(create_server(Settings(roots=(docs,), store=store, session="stored"))) as client:
        card = await client.call_tool("sro_card", {"trace": True})
    assert not card.is_error and "a.md" in str(answer_record(card))


@pytest.mark.anyio
@pytest.mark.parametrize("edit", list(STORE_EDITS), ids=str)
async def test_a_hand_edited_store_row_starts_a_fresh_session_never_an_internal_error(
    tmp_path: Path, stored: tuple[Path, bytes], edit: str
) -> None:
    """Each edit once reached the gate as it was stored: an internal error on every call of the session
    (a KeyError, a TypeError, or the ledger's own assertion that the full view was charged twice)."""
    docs, image = stored
    store = tmp_path / "sessions.db"
    store.write_bytes(image)
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM episodes").fetchone()[0] > 0
        STORE_EDITS[edit](db)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("sro_card", {}),
        ("sro_card", {"trace": True}),
        ("sro_read", {"target": "a.md", "action": "refine"}),
        ("sro_read", {"target": "a.md", "intent": {"goal": "alpha"}}),
        ("sro_read", {"target": "a.md", "view": "full", "budget_tokens": 1000}),
        ("sro_preview", {"path": "a.md"}),
        ("sro_card", {"path": "a.md"}),
    ]
    async with Client(create_server(Settings(roots=(docs,), store=store, session="stored"))) as client:
        answers = await call_all(client, calls)
    assert not answers[4][0].is_error  # the full view is read, from a fresh episode if need be


stored_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.sampled_from([2**53, 2**53 + 1, -1, 0]),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.lists(st.integers(-5, 10**6), max_size=4),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _mutated(value: Any, path: list[int], replacement: object) -> Any:
    """`value` with the leaf that `path` picks (indexes taken modulo each level's size) replaced."""
    if not path or not isinstance(value, dict | list) or not value:
        return replacement
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    value[key] = _mutated(value[key], path[1:], replacement)
    return value


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    field=st.sampled_from(["meta", "calls", "episode"]),
    path=st.lists(st.integers(0, 10**6), min_size=1, max_size=5),
    replacement=stored_value,
)
def test_a_stored_value_replaced_by_any_json_never_causes_an_internal_error(
    tmp_path: Path, stored: tuple[Path, bytes], field: str, path: list[int], replacement: object
) -> None:
    docs, image = stored
    store = tmp_path / f"fuzz{next(_COUNTER)}.db"
    store.write_bytes(image)
    change = partial(_mutated, path=path, replacement=replacement)
    edit = _episode(change) if field == "episode" else _field(field, change)
    with sqlite3.connect(store) as db:
        edit(db)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("sro_card", {"trace": True}),
        ("sro_read", {"target": "a.md", "action": "refine"}),
        ("sro_read", {"target": "a.md", "view": "full", "budget_tokens": 1000}),
    ]

    async def run() -> None:
        async with Client(create_server(Settings(roots=(docs,), store=store, session="stored"))) as client:
            await call_all(client, calls)

    anyio.run(run)
