"""A claim as what `verify` checks: its words (up to inflection), numbers (up to format and scale) and
negations, in order. `claims` decides with them; `closest` picks what to show when nothing decides."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..locate.terms import STOPWORDS, stem

#: Words that belong to a number (its scale or currency), not to the statement.
_NUMBER_WORDS_TEXT = (
    "thousand thousands million millions billion billions trillion trillions percent per cent usd dollar dollars "
    "eur euro euros k m bn mn"
)
_NUMBER_WORDS = frozenset(_NUMBER_WORDS_TEXT.split())
_SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
_SPELLED_TEXT = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty"
)
_SPELLED = {word: n for n, word in enumerate(_SPELLED_TEXT.split())}
_NEGATIONS_TEXT = "not no never neither nor without cannot none n't"
_NEGATIONS = frozenset(_NEGATIONS_TEXT.split())
_TOKEN = re.compile(
    r"(?P<num>\d[\d,_]*(?:\.\d+)?)\)?(?:\s*(?P<pct>%|percent\b|per cent\b))?"
    r"(?:\s*(?P<scale>thousands?|millions?|billions?|trillions?|bn|mn|m|k)\b)?"
    r"|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)?)",
    re.IGNORECASE,
)
_DOC_SCALE = re.compile(r"\bin (thousands|millions|billions)\b", re.IGNORECASE)
_YEAR = re.compile(r"(?:1[89]|20)\d\d")


@dataclass(frozen=True, slots=True)
class Number:
    value: float  # the number times its own scale word
    decimals: int  # digits after the point, as written
    scale: float  # its own scale word's multiplier, 1 when none
    percent: bool
    year: bool
    digits: str = field(default="", compare=False)  # as written, separators removed


@dataclass(frozen=True, slots=True)
class Token:
    start: int
    end: int
    word: str | None = None  # the word's key (stemmed), or None for a number
    number: Number | None = None
    negation: bool = False


def tokens(text: str) -> list[Token]:
    """Words (stemmed keys, stopwords kept out except negations) and numbers with their scale."""
    out: list[Token] = []
    for match in _TOKEN.finditer(text):
        word = match.group("word")
        if word is not None:
            folded = word.casefold().replace("’", "'")
            if folded in _SPELLED:
                out.append(Token(match.start(), match.end(), number=Number(_SPELLED[folded], 0, 1.0, False, False)))
            elif folded in _NEGATIONS or folded.endswith("n't"):
                out.append(Token(match.start(), match.end(), negation=True))
            elif folded not in STOPWORDS and folded not in _NUMBER_WORDS and len(folded) > 1:
                out.append(Token(match.start(), match.end(), word=_key(folded.split("'")[0])))
            continue
        digits = match.group("num").replace(",", "").replace("_", "").rstrip(".")
        if len(digits) > 30:
            continue  # a run of digits that long is an identifier or noise, not an amount
        try:
            mantissa = float(digits)
        except ValueError:
            continue
        scale_word = (match.group("scale") or "").casefold().rstrip("s") or None
        scale = _SCALES.get(scale_word, 1.0) if scale_word else 1.0
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        year = bool(_YEAR.fullmatch(match.group("num").rstrip("."))) and scale == 1.0  # `1,947` is no year
        number = Number(mantissa * scale, decimals, scale, bool(match.group("pct")), year, digits)
        out.append(Token(match.start(), match.end(), number=number))
    return out


def _key(word: str) -> str:
    """A word up to inflection: the light stem, without a final e (increase, increased, increases)."""
    key = stem(word)
    return key[:-1] if len(key) > 4 and key.endswith("e") else key


def same_number(claim: Number, text: Number, doc_scales: tuple[float, ...]) -> bool:
    """Equal up to format and scale; rounding is allowed only where a scale was converted."""
    if claim.year or text.year:
        return claim.value == text.value  # a year is never scaled or rounded; `1975` still equals `1,975`
    if claim.value == text.value:
        return True
    options = [text.value] if text.scale != 1.0 else [text.value * s for s in doc_scales]
    if text.scale == 1.0 and claim.scale == 1.0:
        return False  # two plain numbers: equal or not, nothing was converted
    if claim.scale == 1.0 and claim.value * text.scale == text.value:
        return True  # "$25" for "$25 million": the claim left the scale word out
    step = claim.scale * 10.0**-claim.decimals
    return any(abs(option - claim.value) <= step / 2 + 1e-9 * step for option in options)


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    words: tuple[str, ...]
    numbers: tuple[Number, ...]
    negations: int
    #: Words and numbers in the claim's order, repeats kept: what `supported` must find in order.
    sequence: tuple[str | Number, ...]


def doc_scales(text: str) -> tuple[float, ...]:
    """The scales a document states for its figures ("in millions"), from its first 2 MB."""
    return tuple(sorted({_SCALES[m.casefold().rstrip("s")] for m in _DOC_SCALE.findall(text[:2_000_000])}))


#: What of a claim is checked: a claim is a sentence or two, not a document.
MAX_WORDS, MAX_NUMBERS = 48, 12


def parse_claim(text: str) -> Claim:
    toks = tokens(text[:4_000])
    words = tuple(dict.fromkeys(t.word for t in toks if t.word))[:MAX_WORDS]
    numbers = tuple(dict.fromkeys(t.number for t in toks if t.number))[:MAX_NUMBERS]
    sequence: list[str | Number] = []
    for t in toks:
        if t.word is not None:
            sequence.append(t.word)
        elif t.number is not None:
            sequence.append(t.number)
    sequence = sequence[: MAX_WORDS + MAX_NUMBERS]
    return Claim(words=words, numbers=numbers, negations=sum(t.negation for t in toks), sequence=tuple(sequence))


__all__ = ["Claim", "Number", "Token", "doc_scales", "parse_claim", "same_number", "tokens"]
