"""Terms: the one tokenizer that documents and queries share."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+(?:[.,'’][^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just may me might more most must my
    myself no nor not now of off on once only or other our ours ourselves out over own per same shall she should
    so some such than that the their theirs them themselves then there these they this those through to too under
    until up very via was we were what when where which while who whom why will with would you your yours yourself
    yourselves please give show tell find based using use""".split()  # noqa: SIM905 - a word list reads best as text
)


def terms(text: str) -> list[str]:
    """Lower-cased, lightly stemmed content terms; numbers lose thousands separators.

    Identifiers also yield their camelCase parts (`loadConfig` -> loadconfig, load, config);
    snake_case is split by the word pattern itself.
    """
    out: list[str] = []
    for raw in _WORD.findall(text):
        out.extend(_known_word_terms(raw) if len(raw) <= CACHED_CHARS else _word_terms(raw))
    return out


#: Words and parts up to this long are worked out once and remembered (most words of a text are met again:
#: a directory index reads 10,000 files of about 8,000 words each); longer ones, which rarely repeat and
#: would let a hostile file fill the memory with them, each time.
CACHED_CHARS = 64


def _word_terms(raw: str) -> tuple[str, ...]:
    """The terms of one word as written."""
    word = raw.casefold()
    if word[0].isdigit():
        return (_number(word),)
    out = [
        stem(part)
        for part in _SEPARATOR.split(word)
        if part and part not in STOPWORDS and (len(part) > 1 or part.isdigit())
    ]
    if _CAMEL.search(raw):
        out.extend(stem(p.casefold()) for p in _CAMEL_PART.findall(raw) if len(p) > 1)
    return tuple(out)


_known_word_terms = lru_cache(maxsize=65536)(_word_terms)
_CAMEL = re.compile(r"[a-z][A-Z]")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SEPARATOR = re.compile(r"[.,'’]")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
#: Starts only where a run of digits starts: searched anywhere, `\d+\.0+` was quadratic on a long run.
_WHOLE = re.compile(r"(?<!\d)\d+\.0+")


def _number(word: str) -> str:
    """One spelling per number: `1,577`, `1577` and `1577.00` are the same term."""
    word = word.rstrip(".,")
    if _THOUSANDS.fullmatch(word):
        word = word.replace(",", "")
    if _WHOLE.fullmatch(word):
        word = word.split(".")[0]
    return word


def stem(word: str) -> str:
    """A light suffix stripper: enough to join plurals and simple verb forms, never aggressive."""
    return _known_stem(word) if len(word) <= CACHED_CHARS else _stem(word)


def _stem(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement, min_len in (
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("ness", "", 7),
        ("ments", "ment", 7),
        ("ings", "", 7),
        ("ing", "", 6),
        ("edly", "", 7),
        ("ed", "", 5),
        ("es", "e", 5),
        ("s", "", 4),
    ):
        if word.endswith(suffix) and len(word) >= min_len:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + replacement
    return word


_known_stem = lru_cache(maxsize=65536)(_stem)
