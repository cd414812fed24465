"""Hostile and broken inputs: nothing crashes, hangs, escapes or answers with an untyped error."""

from __future__ import annotations

import os
import re
from pathlib import Path

import anyio
import pytest
from flow import answer_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from scratch import scratch_dir

from sparseread_mcp import ReadEngine, ReadRequest, Settings, StaleArtifact
from sparseread_mcp.errors import SparsereadError
from sparseread_mcp.serve.server import create_server


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    (tmp_path / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (tmp_path / "mixed.txt").write_bytes("héllo\n".encode() + "café\n".encode("latin-1") + b"\xff\xfe\x00bad\n" * 5)
    (tmp_path / "ragged.csv").write_text('a,b,c\n1,2\n3,4,5,6\n"unterminated,7\n')
    (tmp_path / "deep.yaml").write_text(
        "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 400)) + "  " * 400 + "v\n"
    )
    os.mkfifo(tmp_path / "pipe.txt")
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    (tmp_path / "garbage.bin").write_bytes(os.urandom(4096))
    (tmp_path / "secret.txt").write_text("unreadable")
    os.chmod(tmp_path / "secret.txt", 0)
    return tmp_path


@pytest.mark.parametrize(
    "name", ["deep.json", "mixed.txt", "ragged.csv", "deep.yaml", "pipe.txt", "loop1", "garbage.bin", "secret.txt", "."]
)
def test_every_hostile_file_is_answered_or_refused_clearly(hostile: Path, name: str) -> None:
    engine = ReadEngine(Settings(roots=(hostile,)))
    with anyio.fail_after(30) if False else _nothing():  # reads are synchronous; the bound is the test timeout
        for call in (
            lambda: engine.preview("s", name),
            lambda: engine.read("s", ReadRequest(target=name, view="full", budget_tokens=2000)),
        ):
            try:
                call()
            except SparsereadError as exc:
                assert str(exc) and "Traceback" not in str(exc)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


def test_a_file_replaced_mid_episode_is_a_fingerprint_mismatch(tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\n" + "".join(f"Paragraph {i} with enough words to page.\n\n" for i in range(400)))
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    first = engine.read("s", ReadRequest(target="notes.md", view="full", budget_tokens=1000))
    assert first.cursor
    doc.write_text("# Notes\n\nentirely new content\n")
    with pytest.raises(StaleArtifact, match="changed while its full view was paged"):
        engine.read("s", ReadRequest(target="notes.md", cursor=first.cursor))


_ROOT = scratch_dir("sparseread-fuzz-")
(_ROOT / "doc.md").write_text("# Title\n\n" + "".join(f"## S{i}\n\nText {i} ERR-{i}.\n\n" for i in range(200)))
(_ROOT / "t.csv").write_text("a,b\n" + "".join(f"{i},{i * 2}\n" for i in range(500)))
text = st.text(max_size=40)
anchor = st.sampled_from(["", "#L1-L3", "#L0", "#L9-L2", "#p3", "#row=5", "#$.x", "#S7", "#L1:C1-C5", "#L99999"])
target = st.one_of(st.sampled_from(["doc.md", "t.csv", ".", "../etc/passwd", "/etc/passwd", "nope.md", ""]), text)
arguments = st.fixed_dictionaries(
    {"target": st.tuples(target, anchor).map("".join)},
    optional={
        "action": st.one_of(st.sampled_from(["scout", "focus", "collect", "refine", "verify"]), text),
        "view": st.one_of(st.sampled_from(["card", "outline", "full", "lines", "compact", "projection"]), text),
        "budget_tokens": st.one_of(st.integers(-10, 30_000), st.just(None)),
        "cursor": st.one_of(text, st.just("ep1-00000000:10")),
        "since": text,
        "intent": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "goal": text,
                    "needles": st.lists(text, max_size=3),
                    "query": st.sampled_from(["SELECT 1", "DROP TABLE data", "x"]),
                    "want": text,
                    "slots": st.lists(st.fixed_dictionaries({"id": text, "question": text}), max_size=2),
                },
            ),
        ),
    },
)


@settings(
    max_examples=int(os.environ.get("SPARSEREAD_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(args=arguments)
def test_fuzzed_tool_arguments_never_cause_untyped_errors(args: dict[str, object]) -> None:
    async def run() -> None:
        async with Client(create_server(Settings(roots=(_ROOT,)))) as client:
            result = await client.call_tool("sro_read", args)
            if result.is_error:
                message = result.content[0].text  # type: ignore[union-attr]
                assert not re.search(r"internal error \(id [0-9a-f]{8}\)", message), message
                assert "Traceback" not in message
            else:
                assert answer_record(result) is not None

    anyio.run(run)


def test_files_over_the_parse_limit_get_a_card_and_streamed_ranges(tmp_path: Path) -> None:
    (tmp_path / "huge.log").write_text("".join(f"line {i} of a very large log\n" for i in range(20_000)))
    engine = ReadEngine(Settings(roots=(tmp_path,), max_parse_bytes=100_000))
    card = engine.preview("s", "huge.log")
    assert card.artifact.type == "large" and "parse limit" in card.reason and card.outline == []
    pack = engine.read("s", ReadRequest(target="huge.log#L15000-L15002"))
    assert (
        pack.items[0].text
        == "line 14999 of a very large log\nline 15000 of a very large log\nline 15001 of a very large log"
    )
    assert pack.items[0].pointer.startswith("huge.log@sha256:")
    with pytest.raises(SparsereadError, match="only line ranges"):
        engine.read("s", ReadRequest(target="huge.log", intent=None))
