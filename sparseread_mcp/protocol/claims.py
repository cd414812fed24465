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
from collections.abc import Callable
from dataclasses import dataclass

from ..deadline import checkpoint
from ..errors import AnchorError
from ..evidence import Candidate, passage_candidate, pointer_for
from ..locate.base import Locator, build_query
from ..models import Verification
from ..readers.base import ParsedArtifact
from ..vocabulary import VerifyStatus
from .claim_terms import Claim, Number, Token, doc_scales, parse_claim, same_number, tokens
from .closest import Place, closest_places, shown_span

#: Passages (by BM25 rank) whose neighbourhoods are searched for a stretch that decides the claim.
CANDIDATES = 8
#: How far down the ranking a passage the agent already holds is looked for (see `decide`'s `held`).
HELD_LOOKUP = 400
#: Passages returned with a verdict: the deciding one and the next closest (every token is paid again later).
MAX_ITEMS = 2
#: Places shown for an undecided claim: short windows, so three cost about what two passages did.
MAX_PLACES = 3
#: Below this share of the claim's words and numbers in any stretch, the claim is `not_found`.
RELEVANT_SHARE = 0.5
#: An undecided claim's closest place (see `closest`) holding this share of its weight is shown even
#: when the claim is `not_found`: a paraphrase keeps the rarer words and numbers, not half of all its words.
NEAR_SHARE = 0.25


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


def decide(
    parsed: ParsedArtifact,
    claim_text: str,
    locator: Locator,
    *,
    held: Callable[[int, int], bool] | None = None,
) -> tuple[list[Candidate], Verification]:
    """The verdict on a claim and the passages that decide it (or come closest), best first.

    `held(start, end)`: whether the agent already received that span. The passages it holds are searched
    first: a claim is most likely written from what was read, and a short claim ("2015") is supported in
    many places, of which the one the agent read is the one to cite, not the first that BM25 ranks."""
    claim = parse_claim(claim_text)
    ranking = locator.rank(parsed, build_query([claim_text], []))
    searched = ranking[:CANDIDATES]
    if held is not None:
        passages = parsed.passages
        mine = [r for r in ranking[:HELD_LOOKUP] if held(passages[r[0]].start, passages[r[0]].end)][:CANDIDATES]
        searched = mine + [r for r in searched if r not in mine]
    text = parsed.artifact.text
    scales = doc_scales(text)
    total = len(claim.words) + len(claim.numbers)
    if not ranking or total == 0:
        return [], Verification(status="not_found", reason="no passage of the artifact matches the claim's words")
    limit = max(200, 3 * len(claim_text))
    regions: list[tuple[int, int, int]] = []  # (passage index, region start, region end)
    last = len(parsed.passages) - 1
    for index, _score in searched:
        regions.append((index, parsed.passages[max(0, index - 1)].start, parsed.passages[min(last, index + 1)].end))
    closest: list[tuple[float, int, Stretch | None]] = []
    contradiction: Decision | None = None
    for index, lo, hi in regions:
        checkpoint()
        toks = tokens(text[lo:hi])
        stretch = best_stretch(claim, toks, scales)
        share = stretch.covered / total if stretch else 0.0
        closest.append((share, index, stretch))
        found = in_order(claim, toks, scales) if stretch and stretch.covered == stretch.total else None
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
            contradiction = _contradiction(claim, toks, scales, text, lo, limit)
    if contradiction is not None:
        return _answer(parsed, contradiction, [i for _, i, _ in sorted(closest, key=lambda c: -c[0])][:1])
    closest.sort(key=lambda c: -c[0])
    return _undecided(parsed, claim_text, claim, locator, scales, closest[0])


def _undecided(
    parsed: ParsedArtifact,
    claim_text: str,
    claim: Claim,
    locator: Locator,
    scales: tuple[float, ...],
    closest: tuple[float, int, Stretch | None],
) -> tuple[list[Candidate], Verification]:
    """`unverified` with the places closest to deciding the claim (see `closest`), or `not_found` when
    no passage holds even half of the claim's words and numbers."""
    share, index, stretch = closest
    places = closest_places(parsed, claim_text, claim, locator, scales)
    if share < RELEVANT_SHARE:
        reason = f"no passage holds even half of the claim's words and numbers (best: {share:.0%})"
        if not places or places[0].share < NEAR_SHARE:
            return [], Verification(status="not_found", reason=reason)
        near = places[0]
        reason += f"; the place shown holds {near.share:.0%} of its rarer words and numbers: judge it"
        return _places_answer(parsed, Decision(status="not_found", reason=reason, span=(0, 0)), [near])
    missing = _missing(claim, stretch, parsed.artifact.text, parsed, index, scales)
    reason = (
        f"no one stretch holds it all (the closest {share:.0%} of its words and numbers{missing}): judge the "
        "places shown"
    )
    if not places:
        best = parsed.passages[index]
        return _answer(parsed, Decision(status="unverified", reason=reason, span=(best.start, best.end)), [index])
    return _places_answer(parsed, Decision(status="unverified", reason=reason, span=(0, 0)), places[:MAX_PLACES])


def _places_answer(
    parsed: ParsedArtifact, decision: Decision, places: list[Place]
) -> tuple[list[Candidate], Verification]:
    """An undecided claim's places, each shown as a short window (see `closest.shown_span`), best first."""
    spans: list[tuple[int, int]] = []
    for place in places:
        start, end = shown_span(parsed, place)
        if all(end <= a or b <= start for a, b in spans):
            spans.append((start, end))
    items = [Candidate(start=a, end=b, score=1.0 if not k else 0.5) for k, (a, b) in enumerate(spans)]
    pointer = _pointer(parsed, places[0].start, places[0].end, items[0])
    return items, Verification(status=decision.status, reason=decision.reason, pointer=pointer)


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
