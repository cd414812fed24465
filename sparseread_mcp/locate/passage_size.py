"""How finely a parse is cut into passages: the configured size, or smaller for long plain prose.

Long plain prose (text, Markdown or HTML without pages or a heading vocabulary, over PROSE_MIN_CHARS) holds
its evidence in a sentence or two, and smaller passages put more places in one answer's budget. Served with
the default install: articles 86.0 -> 88.3%, asked in other words 62.7 -> 68.7%. Documents with pages or a
heading vocabulary keep the configured size, where smaller passages lose (contracts 56.0 -> 48.4%,
FinanceBench's pages 72.5 -> 60.8%), and so do documents of at most PROSE_MIN_CHARS, whose answer spans most
of them whatever the passages (TAT-QA 83.3 -> 82.9% when cut finer; bench/results/issue33_location.md,
session 31).

The file is parsed once: the smaller passages are cut from the same line index, and only the passage split
runs again (0.1 s of a 0.3-0.5 s parse on a 1.7 MB text). Every caller that parses for location comes here:
the workers, the shared parse cache and calibration.
"""

from __future__ import annotations

import dataclasses

from ..files.artifacts import Artifact
from ..readers.base import ParsedArtifact, Reader
from ..readers.text import text_passages
from .context import plain_prose

#: Long plain prose is cut into passages of this share of the configured size (400 at the default 500).
PROSE_PASSAGE_SHARE = 0.8
#: The selector's first size band (full views of up to 8,000 characters).
PROSE_MIN_CHARS = 8_000


def prose_passage_chars(passage_chars: int) -> int:
    return int(passage_chars * PROSE_PASSAGE_SHARE)


def long_plain_prose(parsed: ParsedArtifact) -> bool:
    """Plain prose (see `context.plain_prose`) longer than PROSE_MIN_CHARS: what is cut more finely."""
    return len(parsed.artifact.text) > PROSE_MIN_CHARS and plain_prose(parsed)


def parse_in_passages(reader: Reader, artifact: Artifact, passage_chars: int) -> ParsedArtifact:
    """`reader`'s parse of `artifact`, long plain prose in passages of PROSE_PASSAGE_SHARE of the size."""
    parsed = reader.parse(artifact, passage_chars=passage_chars)
    if PROSE_PASSAGE_SHARE == 1 or not long_plain_prose(parsed):
        return parsed
    passages = text_passages(parsed.lines, prose_passage_chars(passage_chars), markdown=parsed.type != "text")
    # Per-passage state (each passage's titles) was computed for the other cut: the locators rebuild it.
    return dataclasses.replace(parsed, passages=passages, locator_state={})
