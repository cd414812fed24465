"""Deciding a claim against the source, mechanically, and only as far as the text allows.

`supported`: every content word of the claim (up to inflection) and every number (up to format and
scale: `8_000` = `8,000` = `8000`; `404,381` in a table "in millions" = `$404.381 billion`; "five (5)"
= 5) appears in one contiguous stretch of the source, in the claim's order with at most `GAP` other
words between two of them, and with as many negations. `contradicted`: the
same statement (all of the claim's words and its other numbers, in a tight stretch) carries a
different value where the claim has one of its numbers. Anything else is `unverified`, with the
passages closest to deciding it, for the model to judge; `not_found` when no passage carries even half
of what the claim says. Word overlap alone never decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..deadline import checkpoint
from ..errors import AnchorError
from ..evidence import Candidate, passage_candidate, pointer_for
from ..locate.base import Locator, build_query
from ..locate.terms import STOPWORDS, stem
from ..models import Verification
from ..readers.base import ParsedArtifact
from ..vocabulary import VerifyStatus

#: Passages (by BM25 rank) whose neighbourhoods are searched for a stretch that decides the claim.
CANDIDATES = 8
#: Passages returned with a verdict: the deciding one and the next closest (every token is paid again later).
MAX_ITEMS = 2
#: Below this share of the claim's words and numbers in any stretch, the claim is `not_found`.
RELEVANT_SHARE = 0.5
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Stretch:
    start: int
    end: int
    covered: int  # how many of the claim's requirements it holds
    total: int


def best_stretch(claim: Claim, toks: list[Token], doc_scales: tuple[float, ...], *, skip: int = -1) -> Stretch | None:
    """The shortest run of tokens holding every requirement (words, then numbers but `skip`), else the
    best-covering one (its `covered` < `total`)."""
    words = {word: r for r, word in enumerate(claim.words)}
    numbers = [n for i, n in enumerate(claim.numbers) if i != skip]
    needs = len(words) + len(numbers)
    if not needs:
        return None
    hits: list[tuple[int, int]] = []  # (token index, requirement index)
    for i, tok in enumerate(toks):
        if tok.word is not None and tok.word in words:
            hits.append((i, words[tok.word]))
        elif tok.number is not None:
            hits.extend((i, len(words) + r) for r, n in enumerate(numbers) if same_number(n, tok.number, doc_scales))
    if not hits:
        return None
    counts = [0] * needs
    have, left = 0, 0
    best: tuple[int, int, int] | None = None  # (covered, -length, start hit) -> best
    best_span = (0, 0)
    for right in range(len(hits)):
        r = hits[right][1]
        counts[r] += 1
        have += counts[r] == 1
        while counts[hits[left][1]] > 1:
            counts[hits[left][1]] -= 1
            left += 1
        a, b = toks[hits[left][0]], toks[hits[right][0]]
        score = (have, -(b.end - a.start), left)
        if best is None or score[:2] > best[:2]:
            best, best_span = score, (a.start, b.end)
    assert best is not None
    return Stretch(start=best_span[0], end=best_span[1], covered=best[0], total=needs)


#: At most this many other words between two consecutive words of the claim in a supporting stretch.
GAP = 3


def in_order(claim: Claim, toks: list[Token], doc_scales: tuple[float, ...]) -> tuple[int, int] | None:
    """The first stretch holding the claim's words and numbers in the claim's order, each within `GAP`
    other words of the one before (a number may sit beside its spelled form): (start, end) or None."""
    seq = claim.sequence
    if not seq:
        return None
    content = [t for t in toks if t.word or t.number]

    def matches(need: str | Number, tok: Token) -> bool:
        if isinstance(need, str):
            return tok.word == need
        return tok.number is not None and same_number(need, tok.number, doc_scales)

    for first, tok in enumerate(content):
        if not matches(seq[0], tok):
            continue
        at, ok = first, True
        for need in seq[1:]:
            nxt = next((k for k in range(at + 1, min(len(content), at + GAP + 2)) if matches(need, content[k])), None)
            if nxt is None:
                ok = False
                break
            at = nxt
        if ok:
            return content[first].start, content[at].end
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    status: VerifyStatus
    reason: str
    span: tuple[int, int]


def decide(parsed: ParsedArtifact, claim_text: str, locator: Locator) -> tuple[list[Candidate], Verification]:
    """The verdict on a claim and the passages that decide it (or come closest), best first."""
    claim = parse_claim(claim_text)
    ranking = locator.rank(parsed, build_query([claim_text], []))
    text = parsed.artifact.text
    doc_scales = tuple(sorted({_SCALES[m.casefold().rstrip("s")] for m in _DOC_SCALE.findall(text[:2_000_000])}))
    total = len(claim.words) + len(claim.numbers)
    if not ranking or total == 0:
        return [], Verification(status="not_found", reason="no passage of the artifact matches the claim's words")
    limit = max(200, 3 * len(claim_text))
    regions: list[tuple[int, int, int]] = []  # (passage index, region start, region end)
    last = len(parsed.passages) - 1
    for index, _score in ranking[:CANDIDATES]:
        regions.append((index, parsed.passages[max(0, index - 1)].start, parsed.passages[min(last, index + 1)].end))
    closest: list[tuple[float, int, Stretch | None]] = []
    contradiction: Decision | None = None
    for index, lo, hi in regions:
        checkpoint()
        toks = tokens(text[lo:hi])
        stretch = best_stretch(claim, toks, doc_scales)
        share = stretch.covered / total if stretch else 0.0
        closest.append((share, index, stretch))
        found = in_order(claim, toks, doc_scales) if stretch and stretch.covered == stretch.total else None
        if found is not None:
            window = text[lo + found[0] : lo + found[1]]
            if _negations(window) == claim.negations:
                span = (lo + found[0], lo + found[1])
                reason = (
                    f"every word and number of the claim appears in one stretch of {len(window)} characters "
                    "(words up to inflection, numbers up to format and scale)"
                )
                return _answer(parsed, Decision(status="supported", reason=reason, span=span), [index])
        if contradiction is None:
            contradiction = _contradiction(claim, toks, doc_scales, text, lo, limit)
    if contradiction is not None:
        return _answer(parsed, contradiction, [i for _, i, _ in sorted(closest, key=lambda c: -c[0])][:1])
    closest.sort(key=lambda c: -c[0])
    share = closest[0][0]
    order = [i for s, i, _ in closest if s > 0][:3]
    if share < RELEVANT_SHARE:
        reason = f"no passage holds even half of the claim's words and numbers (best: {share:.0%})"
        return [], Verification(status="not_found", reason=reason)
    missing = _missing(claim, closest[0][2], text, parsed, closest[0][1], doc_scales)
    reason = (
        f"not established in one stretch of the source (the closest holds {share:.0%} of the claim's words and "
        f"numbers{missing}): the passages are given so you can judge; the verdict is yours"
    )
    best = parsed.passages[order[0]]
    return _answer(parsed, Decision(status="unverified", reason=reason, span=(best.start, best.end)), order)


def _contradiction(
    claim: Claim, toks: list[Token], doc_scales: tuple[float, ...], text: str, lo: int, limit: int
) -> Decision | None:
    """The same statement with another value: every other requirement in a tight stretch, and beside
    it a number of the same kind where the claim's number is nowhere in the region."""
    tight = max(160, 2 * limit // 3)
    for j, wanted in enumerate(claim.numbers):
        if any(t.number and same_number(wanted, t.number, doc_scales) for t in toks) or written_anywhere(text, wanted):
            continue  # the claim's value is there, or somewhere else it may refer to: not a contradiction
        stretch = best_stretch(claim, toks, doc_scales, skip=j)
        if stretch is None or stretch.covered < stretch.total or not claim.words:
            continue
        others = [
            t
            for t in toks
            if t.number
            and t.number.year == wanted.year
            and t.number.percent == wanted.percent
            and t.number.scale == wanted.scale
            and not any(same_number(n, t.number, doc_scales) for n in claim.numbers)
            and stretch.start - 40 <= t.start
            and t.end <= stretch.end + 40
        ]
        if not others:
            continue
        other = min(others, key=lambda t: abs(t.start - stretch.end))
        start, end = min(stretch.start, other.start), max(stretch.end, other.end)
        if end - start > tight or _negations(text[lo + start : lo + end]) != claim.negations:
            continue
        value = text[lo + other.start : lo + other.end]
        reason = f"the same statement gives {value!r} where the claim has a different value"
        return Decision(status="contradicted", reason=reason, span=(lo + start, lo + end))
    return None


def written_anywhere(text: str, number: Number) -> bool:
    """Whether the number, as the claim writes it (thousands separators optional), is anywhere in the text."""
    whole, _, fraction = number.digits.partition(".")
    if not whole.isdigit() or len(whole) > 30:
        return False
    groups = [whole[max(0, k - 3) : k] for k in range(len(whole), 0, -3)][::-1]
    body = "[,_]?".join(groups) + (r"\." + fraction if fraction else "")
    # A comma or underscore before or after may be a CSV cell's: "2019,2018" holds 2019.
    return re.search(rf"(?<![\d.]){body}(?!\d|\.\d)", text) is not None


def _missing(
    claim: Claim, stretch: Stretch | None, text: str, parsed: ParsedArtifact, index: int, doc_scales: tuple[float, ...]
) -> str:
    passage = parsed.passages[index]
    toks = tokens(text[passage.start : passage.end])
    words = {t.word for t in toks if t.word}
    absent = [w for w in claim.words if w not in words]
    numbers = [n for n in claim.numbers if not any(t.number and same_number(n, t.number, doc_scales) for t in toks)]
    parts = [*absent[:4], *(f"{n.value:g}" for n in numbers[:3])]
    return f"; not in the best passage: {', '.join(parts)}" if parts else ""


def _negations(window: str) -> int:
    return sum(t.negation for t in tokens(window))


def _answer(parsed: ParsedArtifact, decision: Decision, order: list[int]) -> tuple[list[Candidate], Verification]:
    start, end = decision.span
    inside = [p.index for p in parsed.passages if p.start < end and start < p.end]
    first = Candidate(start=parsed.passages[inside[0]].start, end=parsed.passages[inside[-1]].end, score=1.0)
    rest = [passage_candidate(parsed, i, 0.5) for i in order if i not in inside]
    verification = Verification(
        status=decision.status,
        reason=decision.reason,
        pointer=_pointer(parsed, start, end, first),
    )
    return [first, *rest][:MAX_ITEMS], verification


def _pointer(parsed: ParsedArtifact, start: int, end: int, passage: Candidate) -> str:
    """The stretch's own pointer, widened to whole lines when it crosses a line, else its passage's."""
    lines = parsed.lines
    for a, b in ((start, end), (lines.starts[lines.line_of(start) - 1], lines.line_end(lines.line_of(end - 1)))):
        try:
            return pointer_for(parsed, a, b)
        except AnchorError:
            continue
    return pointer_for(parsed, passage.start, passage.end)


__all__ = ["Claim", "best_stretch", "decide", "parse_claim", "same_number", "tokens"]
