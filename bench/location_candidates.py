"""Data-free replacements for the glossary and clause list, measured in bench.location_ablation, none shipped.

The hand-written lists (locate/concepts.py) are off by default: they help only the set they were written
from. These candidates need no vocabulary; each learns what to add or weigh from the document or the
question itself, and each swaps one step of the BM25 locator (`bm25.passage_scores`) or of the exposure
(`exposure._windows`) so the rest of the served path stays as shipped:
- `rm3`: pseudo-relevance feedback (RM3): the terms of the best passages of a first ranking, weighted by
  those passages' scores and the terms' rarity, added to the query;
- `region_prior`: a passage's score lifted by its page's (or section's) own BM25 score;
- `title_vocabulary`: the question's words that the document's own titles use weigh full, the others less;
- `coherence`: a word weighs by how often the passages that have it also have another word of the question
  (instructions around a question rarely share a passage with its subject);
- `question_clause`: the words of the interrogative clause (`what is ... ?`) weigh full, the rest less;
- `figures_prior`: passages on a page of figures lifted (statements, where a quantity is asked);
- `fused`: the sum of several of these forms, each scaled to its best;
- `windows_and_other_pages`: on a page of figures, a window around the best hit and the best passage of
  other pages in the budget it leaves.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from sparseread_mcp.locate import bm25
from sparseread_mcp.locate.base import Query, concept_terms
from sparseread_mcp.locate.context import passage_titles
from sparseread_mcp.locate.exposure import Span, regions
from sparseread_mcp.locate.terms import terms
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.select.figures import FIGURES_SHARE, figures_share

Scoring = Callable[[ParsedArtifact, Query], np.ndarray]


def _cached(parsed: ParsedArtifact, key: str, build: Callable[[], Any]) -> Any:
    state = parsed.locator_state
    if key not in state:
        state[key] = build()
    return state[key]


def _indexed_terms(parsed: ParsedArtifact) -> list[list[str]]:
    """Each passage's terms as the BM25 index holds them (its text, keywords twice, titles)."""

    def build() -> list[list[str]]:
        titles = passage_titles(parsed)
        weight = bm25.TITLE_WEIGHT
        return [
            terms(parsed.text_of(p)) + 2 * terms(p.keywords) + weight * terms(title)
            for p, title in zip(parsed.passages, titles, strict=True)
        ]

    return _cached(parsed, "candidates.terms", build)  # type: ignore[no-any-return]


def _weighted(parsed: ParsedArtifact, query: Query, weight: Callable[[str], float]) -> np.ndarray:
    """BM25 with one weight per query term (a term said twice counts twice)."""
    corpus = bm25.passage_index(parsed)
    counts = Counter(t for t in concept_terms(parsed, query) if t in corpus.vocab)
    if not counts:
        return np.zeros(0)
    out = np.zeros(corpus.size)
    for term, times in counts.items():
        share = weight(term)
        if share > 0:
            out += times * share * corpus.scores([term])
    return out


def plain(parsed: ParsedArtifact, query: Query) -> np.ndarray:
    return bm25.passage_index(parsed).scores(concept_terms(parsed, query))


def rm3(documents: int = 5, added: int = 10, share: float = 0.3) -> Scoring:
    """RM3: the query, and at `share` of the weight the `added` best terms of the `documents` best passages
    (term frequency in each, weighted by its score, times the term's rarity; numbers left out)."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        corpus = bm25.passage_index(parsed)
        asked = [t for t in concept_terms(parsed, query) if t in corpus.vocab]
        base = corpus.scores(asked)
        if not base.size:
            return base
        best = [int(i) for i in np.argsort(-base)[:documents] if base[i] > 0]
        total = float(sum(base[i] for i in best)) or 1.0
        model: Counter[str] = Counter()
        indexed = _indexed_terms(parsed)
        for i in best:
            counts, length = Counter(indexed[i]), max(1, len(indexed[i]))
            for term, n in counts.items():
                if term not in asked and not term[0].isdigit():
                    model[term] += float(base[i]) / total * n / length
        chosen = [(t, w * corpus.rarity(t)) for t, w in model.items()]
        chosen = sorted(chosen, key=lambda pair: -pair[1])[:added]
        mass = sum(w for _, w in chosen)
        if mass <= 0:
            return base
        expansion = sum((w / mass * corpus.scores([t]) for t, w in chosen), np.zeros(corpus.size))
        return (1 - share) * base / len(asked) + share * expansion

    return score


def region_prior(weight: float = 1.0) -> Scoring:
    """Each passage's score times 1 + `weight` x its page's (or section's) BM25 score, the best page 1."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        base = plain(parsed, query)
        if not base.size:
            return base

        def build() -> tuple[list[int], bm25.Bm25Corpus]:
            region = regions(parsed)
            merged: dict[int, list[str]] = {}
            for r, words in zip(region, _indexed_terms(parsed), strict=True):
                merged.setdefault(r, []).extend(words)
            return region, bm25.Bm25Corpus([merged.get(r, []) for r in range(max(region) + 1)])

        region, pages = _cached(parsed, "candidates.regions", build)
        page_scores = pages.scores(concept_terms(parsed, query))
        if not page_scores.size or page_scores.max() <= 0:
            return base
        return base * (1 + weight * page_scores[np.asarray(region)] / page_scores.max())

    return score


def title_vocabulary(other: float = 0.5, header_share: float = 0.25, *, pages: bool = True) -> Scoring:
    """Question words found in the document's titles weigh 1, the others `other`; a word in more than
    `header_share` of the distinct titles is a running header (the company's name), not a topic. Without
    `pages`, a paged document (whose titles are each page's first lines, not headings) scores as shipped."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        if not pages and parsed.lines.page_count:
            return plain(parsed, query)

        def build() -> set[str]:
            distinct = {t for t in passage_titles(parsed) if t}
            met = Counter(word for title in distinct for word in set(terms(title)))
            return {w for w, n in met.items() if n <= header_share * max(1, len(distinct))}

        topical = _cached(parsed, f"candidates.titles.{header_share}", build)
        if not any(t in topical for t in concept_terms(parsed, query)):
            return plain(parsed, query)
        return _weighted(parsed, query, lambda t: 1.0 if t in topical else other)

    return score


def coherence(power: float = 0.5) -> Scoring:
    """Each word weighs (the share of its passages that hold another word of the question) ** `power`."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        corpus = bm25.passage_index(parsed)
        asked = {t for t in concept_terms(parsed, query) if t in corpus.vocab}
        if len(asked) < 2:
            return plain(parsed, query)
        matrix = corpus.model.scores
        postings = {
            t: matrix["indices"][matrix["indptr"][corpus.vocab[t]] : matrix["indptr"][corpus.vocab[t] + 1]]
            for t in asked
        }
        held = np.zeros(corpus.size, dtype=np.int32)
        for docs in postings.values():
            held[docs] += 1
        share = {t: float(np.mean(held[docs] >= 2)) if len(docs) else 0.0 for t, docs in postings.items()}
        return _weighted(parsed, query, lambda t: share[t] ** power)

    return score


def residual_idf(scale: float = 1.0, floor: float = 0.25, block_chars: int = 2500, shrink: bool = False) -> Scoring:
    """Each word weighs its residual IDF over blocks (pages, else `block_chars` stretches) / `scale`, within
    [`floor`, 1]: how much more it clusters than a word of its frequency scattered at random (Church and
    Gale). A question's frame (`explain`, `useful`, `like`) is rare in a filing and scattered; its subject
    (`segment`, `margin`) clusters where it is discussed. A word used once has residual IDF 0."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        def build() -> tuple[int, Counter[str], Counter[str]]:
            text, lines = parsed.artifact.text, parsed.lines
            if lines.page_count:
                spans = [lines.page_span(page) for page in range(1, lines.page_count + 1)]
            else:
                spans = [(i, i + block_chars) for i in range(0, len(text), block_chars)]
            df: Counter[str] = Counter()
            cf: Counter[str] = Counter()
            for start, end in spans:
                held = Counter(terms(text[start:end]))
                cf.update(held)
                df.update(held.keys())
            return len(spans), df, cf

        count, df, cf = _cached(parsed, "candidates.blocks", build)

        def weight(term: str) -> float:
            if count < 2 or not df[term] or df[term] >= count:
                return 1.0
            expected = -math.log(1 - math.exp(-cf[term] / count))
            weight = max(floor, min(1.0, (math.log(count / df[term]) - expected) / scale))
            # A word in few blocks says little about how it clusters: its weight stays nearer 1.
            return 1 - (1 - weight) * (1 - 1 / df[term]) if shrink else weight

        return _weighted(parsed, query, weight)

    return score


#: The interrogative clause: from a question word that opens a clause to the question mark.
_CLAUSE = re.compile(
    r"(?:^|(?<=[.:;,!?])\s+|\n)((?i:what|which|who|whom|whose|when|where|why|how|is|are|was|were|did|does|do|"
    r"has|have|had|can|could|should|will|would|among|according)\b[^?]{0,400}\?)"
)


def question_clause(other: float = 0.5) -> Scoring:
    """Words of the question's interrogative clause weigh 1, the instructions around it `other`."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        clauses = _CLAUSE.findall(query.text)
        if not clauses:
            return plain(parsed, query)
        core = {t for clause in clauses for t in terms(clause)}
        return _weighted(parsed, query, lambda t: 1.0 if t in core else other)

    return score


def figures_prior(lift: float = 0.3) -> Scoring:
    """Passages on a page of figures (select/figures.py's measure, over the whole page) x (1 + `lift`)."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        base = plain(parsed, query)
        if not base.size or not parsed.lines.page_count:
            return base

        def build() -> np.ndarray:
            region = regions(parsed)
            texts: dict[int, list[str]] = {}
            for r, p in zip(region, parsed.passages, strict=True):
                texts.setdefault(r, []).append(parsed.text_of(p))
            dense = {r: figures_share(" ".join(t)) >= FIGURES_SHARE for r, t in texts.items()}
            return np.asarray([1.0 + lift * dense[r] for r in region])

        return base * _cached(parsed, f"candidates.figures.{lift}", build)

    return score


def fused(*forms: Scoring) -> Scoring:
    """The sum of the forms' scores, each scaled so its best passage scores 1."""

    def score(parsed: ParsedArtifact, query: Query) -> np.ndarray:
        found = [f(parsed, query) for f in forms]
        found = [s / s.max() for s in found if s.size and s.max() > 0]
        return sum(found, np.zeros(len(parsed.passages))) if found else np.zeros(0)

    return score


def windows_and_other_pages(windows: Callable[..., list[Span]], reserve: int = 500) -> Callable[..., list[Span]]:
    """`exposure._windows` with `reserve` characters kept for the best passage of each other page."""

    def plan(parsed: ParsedArtifact, ranked: list[tuple[int, float]], max_chars: int, skip: Any) -> list[Span]:
        spans = windows(parsed, ranked, max_chars - reserve, skip)
        region = regions(parsed)
        shown = {region[s.passage] for s in spans}
        used = 0
        for index, score in ranked:
            passage = parsed.passages[index]
            size = passage.end - passage.start
            inside = any(s.start < passage.end and passage.start < s.end for s in spans)
            if region[index] in shown or used + size > reserve or inside or (skip and skip(passage.start, passage.end)):
                continue
            spans.append(Span(passage.start, passage.end, score, index))
            shown.add(region[index])
            used += size
        return spans

    return plan


#: Each candidate row of the ablation: (family, parameter, what it patches: (module, name, value) triples).
def candidate_rows() -> list[tuple[str, str, list[tuple[Any, str, Any]]]]:
    from sparseread_mcp.locate import exposure

    def scoring(value: Scoring) -> list[tuple[Any, str, Any]]:
        return [(bm25, "passage_scores", value)]

    return [
        ("RM3 feedback from the 5 best passages, 10 terms", "weight 0.1", scoring(rm3(share=0.1))),
        ("RM3 feedback from the 5 best passages, 10 terms", "weight 0.3", scoring(rm3(share=0.3))),
        ("page or section prior", "0.5", scoring(region_prior(0.5))),
        ("page or section prior", "2", scoring(region_prior(2.0))),
        ("title vocabulary weighs the question's words", "others 0.5", scoring(title_vocabulary(0.5))),
        ("title vocabulary weighs the question's words", "others 0.25", scoring(title_vocabulary(0.25))),
        (
            "title vocabulary, headings only (a paged document as shipped)",
            "others 0.5",
            scoring(title_vocabulary(0.5, pages=False)),
        ),
        ("coherence weighs the question's words", "power 0.5", scoring(coherence(0.5))),
        ("coherence weighs the question's words", "power 1", scoring(coherence(1.0))),
        ("residual IDF weighs the question's words", "scale 0.5", scoring(residual_idf(0.5))),
        ("residual IDF weighs the question's words", "scale 1", scoring(residual_idf(1.0))),
        ("residual IDF weighs the question's words", "scale 1, shrunk", scoring(residual_idf(1.0, shrink=True))),
        ("residual IDF weighs the question's words", "scale 0.5, shrunk", scoring(residual_idf(0.5, shrink=True))),
        (
            "residual IDF weighs the question's words",
            "scale 1, 1k blocks",
            scoring(residual_idf(1.0, block_chars=1000)),
        ),
        ("residual IDF weighs the question's words", "scale 1, floor 0.5", scoring(residual_idf(1.0, floor=0.5))),
        ("interrogative clause weighs the question's words", "others 0.5", scoring(question_clause(0.5))),
        ("interrogative clause weighs the question's words", "others 0.25", scoring(question_clause(0.25))),
        ("pages of figures lifted", "0.3", scoring(figures_prior(0.3))),
        ("pages of figures lifted", "1", scoring(figures_prior(1.0))),
        (
            "fusion: question + coherence + title vocabulary",
            "sum",
            scoring(fused(plain, coherence(0.5), title_vocabulary(0.5))),
        ),
        (
            "on figures: a window and other pages' best passage",
            "500 kept",
            [(exposure, "_windows", windows_and_other_pages(exposure._windows, 500))],
        ),
        (
            "on figures: a window and other pages' best passage",
            "1,000 kept",
            [(exposure, "_windows", windows_and_other_pages(exposure._windows, 1000))],
        ),
    ]


def row_name(family: str, parameter: str) -> str:
    return f"candidate: {family} ({parameter})"


#: Columns that are one set in several forms: none chooses a parameter for another.
_TWINS = (
    {"articles", "articles one-line", "articles reworded", "articles other words"},
    {"financebench", "financebench pdf"},
)


def held_out(table: dict[str, dict[str, Any]], family: str, pdf: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Per column, the family's row whose figures are best over the other sets (the mean of their hit
    rates, the PDF's page hit), and which parameter that was: the family's figures held out by set."""
    prefix = f"candidate: {family} ("
    rows = {name[len(prefix) : -1]: row for name, row in table.items() if name.startswith(prefix)}
    if len(rows) < 2:
        return {}, {}  # one parameter: nothing was chosen

    def figure(row: dict[str, Any], column: str) -> float:
        return float(row[column]["page" if column == pdf else "hit"])

    out: dict[str, Any] = {}
    chosen: dict[str, str] = {}
    for column in next(iter(rows.values())):
        outside = next((twins for twins in _TWINS if column in twins), {column})
        best = max(
            rows,
            key=lambda p: np.mean([figure(rows[p], c) for c in rows[p] if c not in outside] or [0.0]),
        )
        out[column], chosen[column] = rows[best][column], best
    return out, chosen
