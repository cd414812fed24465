"""The places closest to deciding a claim that no mechanical verdict decides.

A model restating a fact shares few of the source's words, in another order, with words of its own; the
claim's BM25 ranking then favours passages that repeat its common words. Here every word of the claim
counts by how rare it is in this file (BM25's inverse document frequency: a name or a term of art
outweighs "total"), a number the claim gives counts as much as the rarest word, and a place is a window
about as long as the claim, not a whole neighbourhood: the places are the windows holding the most of
that weight, searched around the claim's BM25 passages, the passages of its rare words alone and every
place its numbers are written. Nothing here decides a verdict; it only picks what is shown.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from ..deadline import checkpoint
from ..errors import AnchorError
from ..locate.base import Locator, build_query
from ..locate.bm25 import passage_index
from ..locate.terms import terms
from ..readers.base import ParsedArtifact
from .claim_terms import Claim, Number, Token, same_number, tokens

#: Passages taken from each ranking (the claim's, its rare words'): their neighbourhoods are searched.
PER_RANKING = 16
#: Passages where one of the claim's numbers is written, per number: those the claim's ranking puts first
#: among the first `_WRITTEN` places it is written (a small number is written everywhere in a report).
PER_NUMBER = 8
_WRITTEN = 400
#: A claim word this much rarer than the claim's median word is one of its rare words.
_RARE_FACTOR = 1.0
_YEAR_WEIGHT = 0.5  # a year is in many statements: it says less than an amount does


@dataclass(frozen=True, slots=True)
class Place:
    start: int
    end: int
    share: float  # the rarity-weighted share of the claim's words and numbers the window holds
    rank: int  # the order its passage was found in (the claim's BM25 rank first): breaks ties


def closest_places(
    parsed: ParsedArtifact, claim_text: str, claim: Claim, locator: Locator, doc_scales: tuple[float, ...]
) -> list[Place]:
    """Windows about as long as the claim, best first, none overlapping another; empty when none holds
    any of the claim's words or numbers."""
    weights = _weights(parsed, claim_text, claim)
    total = sum(weights.values())
    if not total:
        return []
    text = parsed.artifact.text
    width = max(240, int(1.5 * len(claim_text)))
    places: list[Place] = []
    last = len(parsed.passages) - 1
    for rank, index in enumerate(_candidates(parsed, claim_text, claim, weights, locator)):
        checkpoint()
        lo, hi = parsed.passages[max(0, index - 1)].start, parsed.passages[min(last, index + 1)].end
        found = _best_window(claim, tokens(text[lo:hi]), weights, doc_scales, width)
        if found is not None:
            places.append(Place(start=lo + found[0], end=lo + found[1], share=found[2] / total, rank=rank))
    places.sort(key=lambda p: (-round(p.share, 6), p.rank))
    kept: list[Place] = []
    for place in places:
        if all(place.end <= k.start or k.end <= place.start for k in kept):
            kept.append(place)
    return kept


#: Characters shown either side of a place's own words (three places cost about what two passages did).
PAD = 60


def shown_span(parsed: ParsedArtifact, place: Place) -> tuple[int, int]:
    """What to show of a place: the place and about `PAD` characters either side, out to whole lines where
    the lines are short, else cut at a word boundary (a claim may join the end of one sentence to the next
    one's start); its passages when that span cannot be anchored."""
    text, lines = parsed.artifact.text, parsed.lines
    before, after = max(0, place.start - PAD), min(len(text), place.end + PAD)
    start = lines.starts[lines.line_of(before) - 1]
    end = lines.line_end(lines.line_of(max(0, after - 1)))
    if before - start > PAD:  # a long line: cut inside it
        start = _cut(text, before, place.start, backward=True)
    if end - after > PAD:
        end = _cut(text, after, place.end, backward=False)
    try:
        parsed.anchor_for(start, end)
    except AnchorError:
        inside = [p for p in parsed.passages if p.start < place.end and place.start < p.end] or parsed.passages[:1]
        return inside[0].start, inside[-1].end
    return start, end


def _cut(text: str, limit: int, edge: int, *, backward: bool) -> int:
    """The word boundary nearest `limit` between it and the place's `edge` (never inside a word)."""
    if backward:
        space = text.find(" ", limit, edge)
        return space + 1 if space != -1 else edge
    space = text.rfind(" ", edge, limit)
    return space if space != -1 else edge


def _weights(parsed: ParsedArtifact, claim_text: str, claim: Claim) -> dict[str | Number, float]:
    """Each requirement's weight: a word's rarity in this file (the rarest when no passage has it: it may
    be the claim's own word for what the source says otherwise), a number's the rarest's, half for a year."""
    index = passage_index(parsed)
    surface: dict[str, str] = {}
    for tok in tokens(claim_text[:4_000]):
        if tok.word is not None:
            surface.setdefault(tok.word, claim_text[tok.start : tok.end])
    rarities = {w: max((index.rarity(t) for t in terms(surface.get(w, w))), default=0.0) for w in claim.words}
    top = max([*rarities.values(), 1.0])
    weights: dict[str | Number, float] = {w: (r or top) for w, r in rarities.items()}
    for number in claim.numbers:
        weights[number] = top * (_YEAR_WEIGHT if number.year else 1.0)
    return weights


def _candidates(
    parsed: ParsedArtifact, claim_text: str, claim: Claim, weights: dict[str | Number, float], locator: Locator
) -> list[int]:
    """Passages to search around: the claim's BM25 best, the best for its rare words alone, and those
    where its numbers are written."""
    scores = dict(locator.rank(parsed, build_query([claim_text], [])))
    ranked = list(scores)[:PER_RANKING]
    words = sorted((w for w in claim.words), key=lambda w: -weights[w])
    median = weights[words[len(words) // 2]] if words else 0.0
    rare = [w for w in words if weights[w] >= _RARE_FACTOR * median and weights[w] > 0][:8]
    if rare and len(rare) < len(words):
        surface = " ".join(_surfaces(claim_text, set(rare)))
        ranked += [i for i, _ in locator.rank(parsed, build_query([surface], []))[:PER_RANKING]]
    text = parsed.artifact.text
    starts = [p.start for p in parsed.passages]
    for number in claim.numbers:
        if number.year or not number.digits:
            continue
        written = dict.fromkeys(_passage_at(starts, at) for at in _written_at(text, number))
        ranked += sorted(written, key=lambda i: -scores.get(i, 0.0))[:PER_NUMBER]  # those nearest the claim
    return list(dict.fromkeys(ranked))


def _surfaces(claim_text: str, keys: set[str]) -> list[str]:
    return [claim_text[t.start : t.end] for t in tokens(claim_text[:4_000]) if t.word in keys]


def _written_at(text: str, number: Number) -> list[int]:
    """Where the number is written as the claim writes it (thousands separators optional), first ones first."""
    whole, _, fraction = number.digits.partition(".")
    if not whole.isdigit() or len(whole) > 30:
        return []
    groups = [whole[max(0, k - 3) : k] for k in range(len(whole), 0, -3)][::-1]
    body = "[,_]?".join(groups) + (r"\." + fraction if fraction else "")
    found = re.finditer(rf"(?<![\d.]){body}(?!\d|\.\d)", text)
    return [m.start() for _, m in zip(range(_WRITTEN), found, strict=False)]


def _passage_at(starts: list[int], at: int) -> int:
    return max(0, bisect_right(starts, at) - 1)


def _best_window(
    claim: Claim, toks: list[Token], weights: dict[str | Number, float], doc_scales: tuple[float, ...], width: int
) -> tuple[int, int, float] | None:
    """The window at most `width` characters wide holding the most weight of distinct requirements:
    (start, end, weight) relative to the tokens' text, or None when no token is a requirement."""
    keys = list(weights)
    position = {k: r for r, k in enumerate(keys)}
    hits: list[tuple[int, int]] = []
    for i, tok in enumerate(toks):
        if tok.word is not None and tok.word in position:
            hits.append((i, position[tok.word]))
        elif tok.number is not None:
            hits.extend(
                (i, position[n]) for n in claim.numbers if n in position and same_number(n, tok.number, doc_scales)
            )
    if not hits:
        return None
    counts = [0] * len(keys)
    held, left = 0.0, 0
    best = (0.0, 0, 0)
    for i, r in hits:
        counts[r] += 1
        held += weights[keys[r]] if counts[r] == 1 else 0.0
        while toks[i].end - toks[hits[left][0]].start > width:
            gone = hits[left][1]
            counts[gone] -= 1
            held -= weights[keys[gone]] if counts[gone] == 0 else 0.0
            left += 1
        if held > best[0] + 1e-9:
            best = (held, toks[hits[left][0]].start, toks[i].end)
    return best[1], best[2], best[0]


__all__ = ["Place", "closest_places", "shown_span"]
