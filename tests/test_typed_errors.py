"""Bad input gets a typed error, never an internal error: any bytes in a file name, any number in an
anchor, any malformed file (any value in a session store: test_store_rows.py). Every answer is a success, or a bounded
`is_error` message of ours (the server words an untyped failure "internal error (id ...)"); and a file
its reader refuses can still be read as lines, which the refusal says."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from flow import answer_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import CallToolResult

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import MAX_ERROR_CHARS, create_server

EXAMPLES = int(os.environ.get("SPARSEREAD_FUZZ_EXAMPLES", "40"))
_UNTYPED = re.compile(r"internal error|Traceback", re.IGNORECASE)
#: The SDK's prefix before our (clamped) message.
_PREFIX_CHARS = 60


def assert_typed(result: CallToolResult, what: object) -> str:
    """The answer's text, once it is a success or one of our bounded, typed errors."""
    text = "".join(getattr(block, "text", "") for block in result.content)
    if result.is_error:
        assert not _UNTYPED.search(text), (what, text)
        assert len(text) <= MAX_ERROR_CHARS + _PREFIX_CHARS, (what, len(text))
    return text


async def call_all(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[CallToolResult, str]]:
    answers = []
    with anyio.fail_after(120):  # a hang guard only
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            answers.append((result, assert_typed(result, (tool, arguments))))
    return answers


def file_calls(name: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("sro_preview", {"path": name}),
        ("sro_read", {"target": name}),
        ("sro_read", {"target": name + "#L1"}),
        ("sro_read", {"target": name, "intent": {"goal": "marker"}}),
        ("sro_card", {"path": name}),
    ]


# -- file names ------------------------------------------------------------------------------------

HOSTILE_NAMES = [
    b"bad\xff\xfename.md",  # not UTF-8: the server sees it as lone surrogates (surrogateescape)
    b"ctl\x01\x1b[31m.md",
    b"new\nline.md",
    b"tab\t.md",
    b"a.md#L1",  # looks like an anchor
    b"x@abcdef1",  # looks like a pointer
    b"x@abcdef1.md",
    b"L" * 250 + b".md",  # near the file system's limit
    b"-dash.md",
    b'quote".md',
    b"back\\slash.md",
    b"\xe2\x80\xaereversed.md",  # a right-to-left override
]


@pytest.mark.anyio
async def test_hostile_file_names_and_their_folder_are_answered_or_refused_with_a_typed_error(tmp_path: Path) -> None:
    """A folder holding an undecodable name once answered `sro_preview(".")` with an internal error (its
    inventory fingerprint encoded the name as strict UTF-8)."""
    folder = os.fsencode(tmp_path)
    for name in HOSTILE_NAMES:
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(b"# Head\n\nThe marker line.\n")
    os.makedirs(os.path.join(folder, b"dir\xff"))
    with open(os.path.join(folder, b"dir\xff", b"in\xfe.txt"), "wb") as handle:
        handle.write(b"marker inside\n")
    calls = [c for name in HOSTILE_NAMES for c in file_calls(os.fsdecode(name))]
    calls += file_calls("dir\udcff") + file_calls(".") + [("sro_read", {"target": ".", "intent": {"goal": "marker"}})]
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        answers = await call_all(client, calls)
    listing = [text for (result, text), (tool, args) in zip(answers, calls, strict=True) if args.get("path") == "."]
    assert listing and "bad" in listing[0]  # the folder with the undecodable names is listed, not refused


NAMES_NO_FILE_HOLDS = [
    "\ud800.md",  # a lone surrogate outside the surrogateescape range: no bytes spell it
    "a\udfffb",
    "\x00",
    "a/\x00/b",
    "",
    " ",
    "x" * 5000,
    "a/" * 3000,
    "../" * 50 + "etc/passwd",
    "~nobody-here/x",
    "@abcdef1",
    "#L1",
]


@pytest.mark.anyio
@pytest.mark.parametrize("name", NAMES_NO_FILE_HOLDS, ids=lambda n: repr(n[:12]))
async def test_a_name_no_file_can_hold_is_a_typed_error(tmp_path: Path, name: str) -> None:
    """A lone surrogate once reached `os.path.realpath`, whose UnicodeEncodeError was an internal error."""
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        await call_all(client, file_calls(name))


name_bytes = st.binary(min_size=1, max_size=200).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")
)
_COUNTER = itertools.count()


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(name_bytes, min_size=1, max_size=4, unique=True))
def test_fuzzed_file_names_never_cause_an_untyped_error(tmp_path: Path, names: list[bytes]) -> None:
    folder = tmp_path / f"case{next(_COUNTER)}"
    folder.mkdir()
    for name in names:
        with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
            handle.write(b"marker text\n" + name + b"\n")
    calls = [c for name in names for c in file_calls(os.fsdecode(name))[:3]] + file_calls(".")[:2]

    async def run() -> None:
        async with Client(create_server(Settings(roots=(folder,)))) as client:
            await call_all(client, calls)

    anyio.run(run)


@pytest.mark.anyio
async def test_a_name_holding_hash_or_at_is_read_and_never_shadows_another_files_anchor(tmp_path: Path) -> None:
    """`x@abcdef1` was read as file `x` at commit abcdef1 (no such file), and `a.md#L1#L2` as `a.md` with a
    malformed anchor: a file whose name holds `#` or `@` could not be read, nor its pointers verified."""
    (tmp_path / "a.md").write_text("# A\n\nMARK-PLAIN line\n")
    (tmp_path / "a.md#L1").write_text("MARK-HASH first\nsecond\nthird\n")
    (tmp_path / "x@abcdef1").write_text("MARK-AT only\n")
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        answers = await call_all(
            client,
            [
                ("sro_read", {"target": "a.md#L1-L3"}),  # a.md exists: its anchor, never the other file
                ("sro_read", {"target": "a.md#L1#L1-L2"}),
                ("sro_read", {"target": "x@abcdef1"}),
                ("sro_preview", {"path": "x@abcdef1"}),
                ("sro_read", {"target": "a.md#"}),  # still an empty anchor, never the whole file
            ],
        )
        assert answers[4][0].is_error and "empty anchor" in answers[4][1], answers[4][1]
        texts = [text for _, text in answers]
        assert "MARK-PLAIN" in texts[0] and "MARK-HASH" not in texts[0]
        assert "MARK-HASH" in texts[1] and "MARK-AT" in texts[2] and not answers[3][0].is_error
        pointer = answer_record(answers[1][0])["items"][0]["pointer"]  # type: ignore[index]
        assert pointer.startswith("a.md#L1@sha256:"), pointer
        verified = await client.call_tool("sro_read", {"target": pointer, "action": "verify"})
    assert '"ok"' in assert_typed(verified, pointer) and "MARK-HASH" in assert_typed(verified, pointer)


# -- anchors ---------------------------------------------------------------------------------------

BIG = "9" * 5000  # past `int`'s 4,300-digit limit: a ValueError, never an answer, if it reaches int()
ANCHORS = [
    "L0",
    "L-1",
    "L99999999999999999999",
    "L" + BIG,
    "L3-L1",
    "L1-L" + BIG,
    "L1:C0-C5",
    "L1:C5-C3",
    "L1:C1-C99999999999",
    "L1:C" + BIG + "-C" + BIG,
    "L1:C1-L" + BIG + ":C1",
    "L1:C1-L0:C1",
    "p0",
    "p99",
    "p" + BIG,
    "p1:L9999",
    "p1:L" + BIG,
    "row=0",
    "row=" + "1" + "0" * 30,
    "row=" + BIG,
    "Sheet1!R" + BIG,
    "Sheet1!R0",
    "$",
    "$.",
    "$..a",
    "$[",
    "$.a[99999999999999999999]",
    "$.a[" + BIG + "]",
    "$" + "." * 1000,
    "$.a" * 2000,
    "L١",  # an Arabic-Indic digit matches \d
    "L1-L2-L3",
    "#",
    "x" * 5000,
]
ANCHORED_FILES = {
    "a.md": "# A\n\nalpha\nbeta\n\n## B\n\ngamma\n",
    "t.csv": "a,b\n1,2\n3,4\n",
    "c.json": '{"a": {"b": [1, 2, {"c": 3}]}}',
    "y.yaml": "a:\n  b: [1, 2]\n",
    "x.py": "def f():\n    return 1\n",
}


@pytest.mark.anyio
@pytest.mark.parametrize("anchor", ANCHORS, ids=lambda a: a[:24])
async def test_any_number_in_an_anchor_is_answered_or_a_typed_error(tmp_path: Path, anchor: str) -> None:
    """A line, page, row or column number of more than 4,300 digits once reached `int()`: an internal error."""
    for name, text in ANCHORED_FILES.items():
        (tmp_path / name).write_text(text)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("sro_read", {"target": f"{name}#{anchor}", **view})
        for name in ANCHORED_FILES
        for view in ({}, {"view": "lines"})
    ]
    calls += [("sro_read", {"target": f"a.md@sha256:000000000000#{anchor}", "action": "verify"})]
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        answers = await call_all(client, calls)
    if BIG in anchor and not anchor.startswith("$"):  # numbers, not key-path subscripts
        assert all(result.is_error and "digits" in text for result, text in answers[:-1]), answers[0][1]


number = st.one_of(st.integers(-3, 3), st.integers(0, 10**6), st.integers(10**18, 10**40)).map(str) | st.just(BIG)
anchor_text = st.one_of(
    st.tuples(number, st.sampled_from(["", "-L", "-", ":C"]), number).map(lambda t: f"L{''.join(t)}"),
    st.tuples(number, number, number).map(lambda t: f"L{t[0]}:C{t[1]}-L{t[2]}:C{t[0]}"),
    st.tuples(number, number).map(lambda t: f"p{t[0]}:L{t[1]}"),
    number.map(lambda n: f"p{n}"),
    number.map(lambda n: f"row=1{n}"),
    st.tuples(st.text(max_size=8), number).map(lambda t: f"{t[0]}!R{t[1]}"),
    st.lists(st.one_of(st.text(max_size=6), number.map(lambda n: f"[{n}]")), max_size=6).map(
        lambda parts: "$." + ".".join(parts)
    ),
    st.text(max_size=30),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(anchors=st.lists(anchor_text, min_size=1, max_size=5))
def test_fuzzed_anchors_are_answered_or_a_typed_error_in_every_reader(tmp_path: Path, anchors: list[str]) -> None:
    for name, text in ANCHORED_FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "l.log").write_text("2024-01-01T00:00:00Z INFO up\n2024-01-01T00:00:01Z ERROR down\n")
    (tmp_path / "h.html").write_text("<h1>T</h1><p>para</p>")
    names = [*ANCHORED_FILES, "l.log", "h.html"]
    calls = [("sro_read", {"target": f"{name}#{anchor}"}) for anchor in anchors for name in names]

    async def run() -> None:
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            await call_all(client, calls)

    anyio.run(run)


# -- malformed files -------------------------------------------------------------------------------

MALFORMED = {
    "bad.json": b'{"a": 1,\n "b": [1, 2\n "c": }\nMARK-JSON\n',
    "bad.yaml": b"a: [1, 2\nb: {c: d\n  - x: :\nMARK-YAML\n",
    "bad.toml": b"[a\nb = = 1\n[[c]\nMARK-TOML\n",
    "bad.jsonl": b'{"a": 1}\n{bad\nMARK-JSONL\n',
    "big.toml": b"a = " + b"9" * 5000 + b"\nMARK-TOML-INT\n",  # tomllib's int() raised ValueError past 4,300 digits
    "bad.html": b"<p>para</p>\n<![<![CDATA[\nMARK-HTML\n",  # the stdlib parser raised AssertionError
}


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(MALFORMED))
async def test_a_file_its_reader_refuses_is_still_read_as_lines_and_the_refusal_says_so(
    tmp_path: Path, name: str
) -> None:
    """The refusals said "read it as text with a line anchor", yet a line anchor or view='lines' got the
    same refusal: the reader was asked again, whatever the read asked for. (An HTML page the stdlib
    parser chokes on was an internal error: its AssertionError was not translated.)"""
    (tmp_path / name).write_bytes(MALFORMED[name])
    marker = MALFORMED[name].decode().strip().splitlines()[-1]
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:  # apart: nothing is resent in one
        [(lines, view_text)] = await call_all(client, [("sro_read", {"target": name, "view": "lines"})])
    assert not lines.is_error and marker in view_text, view_text
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        answers = await call_all(
            client,
            [
                ("sro_preview", {"path": name}),
                ("sro_read", {"target": name}),
                ("sro_read", {"target": f"{name}#L1-L3"}),
            ],
        )
        (preview, refusal), (read, _), (anchored, lines_text) = answers
        assert preview.is_error and read.is_error
        last = MALFORMED[name].count(b"\n") + 1  # the file's lines, no more
        assert f"{name}#L1-L{last}" in refusal and "view='lines'" in refusal, refusal
        assert not anchored.is_error and marker in lines_text, lines_text
        pointer = answer_record(anchored)["items"][0]["pointer"]  # type: ignore[index]
        verified = await client.call_tool("sro_read", {"target": pointer, "action": "verify"})
    assert '"ok"' in assert_typed(verified, pointer)  # a pointer into the lines still verifies


SYNTAX = [
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    '"',
    "'",
    "=",
    "- ",
    "\t",
    "  ",
    "\n",
    "<![",
    "<",
    ">",
    "&#",
    "#",
    "a",
    "1",
    "9" * 4400,
]
malformed_text = st.tuples(
    st.sampled_from([".json", ".yaml", ".toml", ".jsonl", ".csv", ".html"]),
    st.lists(st.sampled_from(SYNTAX), min_size=1, max_size=40).map("".join),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(file=malformed_text)
def test_whenever_a_refusal_offers_lines_the_lines_are_read(tmp_path: Path, file: tuple[str, str]) -> None:
    suffix, text = file
    name = f"f{next(_COUNTER)}{suffix}"
    (tmp_path / name).write_text(text)

    async def run() -> None:
        async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
            [(preview, refusal)] = await call_all(client, [("sro_preview", {"path": name})])
            if not (preview.is_error and "view='lines'" in refusal):
                return
            answers = await call_all(
                client, [("sro_read", {"target": f"{name}#L1"}), ("sro_read", {"target": name, "view": "lines"})]
            )
            assert not any(result.is_error for result, _ in answers), answers

    anyio.run(run)


@pytest.mark.anyio
async def test_a_malformed_table_names_the_file_not_the_servers_private_copy(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(MALFORMED["bad.jsonl"])
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        [(result, text)] = await call_all(client, [("sro_read", {"target": "bad.jsonl"})])
    assert result.is_error and "sparseread-table-" not in text and "bad.jsonl" in text, text


@pytest.mark.anyio
async def test_binary_content_a_reader_refuses_is_not_offered_as_lines(tmp_path: Path) -> None:
    (tmp_path / "bad.xlsx").write_bytes(b"PK\x03\x04" + b"\x00\x01\x02" * 400)
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        answers = await call_all(
            client, [("sro_read", {"target": "bad.xlsx"}), ("sro_read", {"target": "bad.xlsx#L1"})]
        )
    assert all(result.is_error and "view='lines'" not in text for result, text in answers), answers


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog), with a correct cross-reference table."""
    out, offsets = b"%PDF-1.7\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + b"trailer << /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, table)


_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
DAMAGED_PDFS = {
    "cycle.pdf": [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>", _PAGE],
    "count.pdf": [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 99999999999 >>", _PAGE],
    "nokids.pdf": [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Count 3 >>"],
}


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(DAMAGED_PDFS))
async def test_a_damaged_pdf_page_tree_is_a_typed_refusal_and_still_read_as_lines(tmp_path: Path, name: str) -> None:
    """A page-tree cycle or an impossible page count raised PyMuPDF's own error from the page loop: an
    internal error on every read of the file."""
    pytest.importorskip("pymupdf")
    (tmp_path / name).write_bytes(_pdf(DAMAGED_PDFS[name]))
    async with Client(create_server(Settings(roots=(tmp_path,)))) as client:
        (preview, refusal), (lines, text) = await call_all(
            client, [("sro_preview", {"path": name}), ("sro_read", {"target": f"{name}#L1-L3"})]
        )
    assert preview.is_error and "damaged PDF" in refusal and "view='lines'" in refusal, refusal
    assert not lines.is_error and "%PDF-1.7" in text, text
