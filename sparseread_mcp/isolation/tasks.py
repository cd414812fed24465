"""What runs inside a worker process: each task takes plain values and returns plain values.

Every function here touches bytes someone else wrote (a file's content, an ignore file, two texts to
diff). They import the parsers; nothing in the server above the boundary does. A parse crosses back as
its parsed form (text, passages, outline, line index), never as a library object: a table's database is
handed over by its folder (`TableHandle`), which the server opens read-only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..answers.as_lines import lines_instead
from ..directory import needlesearch
from ..directory.collection import FileEntry, Inventory, build_inventory
from ..directory.fileindex import FileFeatures, extract_features
from ..errors import UnsupportedArtifact
from ..evidence import Hit
from ..files import safeopen
from ..files.artifacts import Artifact, load_artifact
from ..files.large import StreamedRange, stream_range
from ..files.roots import ResolvedPath
from ..files.textdiff import TextDiff, line_diff
from ..locate.bert import encode_with_bert
from ..locate.e5 import encode_with_e5
from ..locate.encoding import E5_MODEL, Kind
from ..locate.passage_size import parse_in_passages
from ..locate.patterns import count_here
from ..models import OpResult
from ..readers.base import ParsedArtifact, Passage, PassageKind, Reader
from ..readers.registry import ReaderRegistry
from ..readers.table_query import TableHandle, TableQueries

PassageRow = tuple[int, int, int, PassageKind, str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadRequest:
    reader: Reader
    location: ResolvedPath
    max_bytes: int
    passage_chars: int
    #: Fingerprints whose parse the server already holds: for those only the artifact comes back.
    known: frozenset[str] = frozenset()
    #: False: fingerprint only (the server looks in its shared index cache before asking for a parse).
    parse: bool = True
    #: The plain text reader, for a file `reader` refuses (None: `reader` is that reader).
    lines_reader: Reader | None = None
    #: Parse a refused file as lines (a line anchor, view='lines'); else the refusal says how to ask.
    as_lines: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Loaded:
    #: The artifact as read; without its text and bytes when no parse comes with it.
    artifact: Artifact
    parsed: ParsedArtifact | None = None
    #: A table's database, handed over (the parse's `queries` is None until the server adopts it).
    table: TableHandle | None = None
    #: The file's reader refused it and this is its parse as plain lines.
    as_lines: bool = False
    #: The parse's passages as plain rows (the parse crosses without them): a log's 40,000 passages pickle
    #: in a tenth of the time as tuples of numbers and strings than as objects (see `passages`).
    passage_rows: tuple[PassageRow, ...] = ()

    def passages(self) -> tuple[Passage, ...]:
        return tuple(
            Passage(index=i, start=s, end=e, kind=k, section=c, keywords=w) for i, s, e, k, c, w in self.passage_rows
        )


def load(request: LoadRequest) -> Loaded:
    """Read the file once from a descriptor beneath its root, fingerprint it, and parse it unless the
    server already holds that version's parse."""
    artifact = load_artifact(request.location, binary=request.reader.binary, max_bytes=request.max_bytes)
    if artifact.fingerprint in request.known or not request.parse:
        return Loaded(artifact=dataclasses.replace(artifact, text="", data=None))
    return parse(request.reader, artifact, request.passage_chars, request.lines_reader, as_lines=request.as_lines)


def parse(
    reader: Reader, artifact: Artifact, passage_chars: int, lines_reader: Reader | None, *, as_lines: bool = True
) -> Loaded:
    """Parse an artifact (read here, or an earlier version whose bytes came with it); a file `reader`
    refuses is parsed as plain lines by `lines_reader` when `as_lines`, or refused with how to ask for that."""
    try:
        parsed = parse_in_passages(reader, artifact, passage_chars)
    except UnsupportedArtifact as refusal:
        if lines_reader is None:
            raise
        readers = (lines_reader,)
        lines, text = lines_instead(readers, reader, artifact, refusal, as_lines=as_lines, stamp=_unstamped)
        return dataclasses.replace(_crossing(lines.parse(text, passage_chars=passage_chars)), as_lines=True)
    return _crossing(parsed)


def _unstamped(artifact: Artifact) -> Artifact:
    return artifact  # git stamps it in the server, where revisions live


def _crossing(parsed: ParsedArtifact) -> Loaded:
    """The parse as it crosses to the server: no raw bytes, and a table's database handed over."""
    table = None
    if isinstance(parsed.queries, TableQueries):
        table = parsed.queries.handover()
        parsed.queries = None
    bare = dataclasses.replace(parsed.artifact, data=None)  # the bytes stay here: the parse is what crosses
    rows = tuple((p.index, p.start, p.end, p.kind, p.section, p.keywords) for p in parsed.passages)
    return Loaded(
        artifact=bare, parsed=dataclasses.replace(parsed, artifact=bare, passages=()), table=table, passage_rows=rows
    )


def digest(location: ResolvedPath, head: int) -> safeopen.FileDigest:
    return location.digest(head=head)


def read_lines(location: ResolvedPath, first: int, last: int) -> StreamedRange:
    return stream_range(location, first, last)


def diff(old: str, new: str, old_label: str, new_label: str, context: int) -> TextDiff:
    return line_diff(old, new, old_label=old_label, new_label=new_label, context=context)


def search_folder(base: ResolvedPath, inventory: Inventory, needles: list[str], cap: int) -> tuple[list[Hit], OpResult]:
    return needlesearch.search_folder(base, inventory, needles, cap)


def count_patterns(needles: tuple[str, ...], texts: tuple[str, ...], allowed: float) -> list[list[int]]:
    return count_here(needles, texts, allowed)


def embed(model: str, kind: Kind, texts: tuple[str, ...]) -> np.ndarray:
    """A model's vectors of passages or a query: its native code runs here, where a kill is harmless."""
    return (encode_with_e5 if model == E5_MODEL else encode_with_bert)(model, kind, texts)


def features(base: ResolvedPath, entries: list[FileEntry]) -> list[FileFeatures]:
    return extract_features(base, entries)


def inventory(
    location: ResolvedPath,
    relative: str,
    registry: ReaderRegistry,
    types: dict[tuple[str, int, int], str],
    max_files: int,
) -> tuple[Inventory, dict[tuple[str, int, int], str]]:
    """Walk a directory (its ignore files compiled and matched here); the file types it learned come back."""
    found = build_inventory(location, relative, registry, types=types, max_files=max_files)
    return found, types
