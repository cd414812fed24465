"""Token economy of a scripted agent driving the MCP tools over stdio, against one full read per document.

Not a test. Run:  python -m bench.agent_bench [--data ../shared/data] [--limit 10] [--json out.json]

Each question gets a fresh server process (`python -m sparseread_mcp --root DOCS`, the official client's
stdio transport), so no question inherits another's session. The policy is what an agent told "preview
first, then collect, refine, verify before citing" does:

1. `sro_preview` the document with the question as intent. A `native` route returns the whole document:
   the agent has it and reads no further.
2. `sro_read` action `collect`, the question as goal and as its one slot.
3. Until the evidence is held, `refine` (SKILL.md: "if the evidence is not there, refine, add needles, or
   ask view='full'"). "Held" (`--stop held`, the default, the agent of issue #13) is a reader that knows the
   answer when it sees it: what it has read covers the gold; `--stop found` is a reader that trusts the
   server's coverage (every slot `found`). Sparse reads give up once the episode's ledger says they have
   read `--sparse-share` of the full view (E >= 0.25 L: SKILL.md's "keep refining while E is under a quarter
   of L"; before session 23 it was the tokens received, frames included, against L_tokens) or after
   `--sparse-reads` reads (8), or when a refine brings nothing; the agent then
   asks `view="full"` once (page 1 begins at the best match for its goal) and follows the `cursor` until
   the evidence is held or the pages end (`--no-fallback`: it stops instead). A page of a full view the
   server chose itself (the selector's last resort, the gate's fallback) is followed the same way.
   `--exposure-tokens` caps what it receives, `--max-calls` its reads (pages included).
4. `sro_read` action `verify` with the gold answer as the claim.

Tokens received = the text content of every tool result (the compact JSON the model reads), counted with
the server's tokenizer; the counterfactual is one full read of the document, counted the same way.
Hit = the evidence the agent read before it verified (every item of the preview and of every read, or
the whole document when it was delivered) covers at least 80% of the gold characters. The passages
`verify` returns do not count: the claim it checks is the gold answer, which a real agent would only have
derived from what it read (on `contracts` the answer *is* the gold clause, so counting them scored the
answer key, not the reading); `hit w/ verify` reports the old, leaky figure beside it.
The 2L bound: for every episode, the sparse characters E
plus the full-view characters delivered must stay within 2 x L, read from each pack's ledger, summed
independently from the payloads, and read again from `sro_card(trace=true)`; a breach raises.
`sro_card` and `list_tools` are instrumentation, not counted (the tool schemas are reported once).

Mode `product` runs the server's default settings; mode `sparse` sets SPARSEREAD_NATIVE_FIT_TOKENS=0 so
small documents are read sparsely too, and runs only on sets where some document went native.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from bench.paraphrased import PARAPHRASED, paraphrases
from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.locate.base import build_query
from sparseread_mcp.locate.bm25 import Bm25Locator
from sparseread_mcp.locate.exposure import plan_exposure
from sparseread_mcp.select.calibrate import covered, doc_file, gold_spans
from sparseread_mcp.tokens import TokenCounter
from sparseread_mcp.wire import anchor_lines, gate_decision, record_of

REPO = Path(__file__).resolve().parent.parent
SETS = (
    "financebench",
    "tatqa",
    "fetaqa",
    "contracts",
    "articles",
    "articles-oneline",
    "articles-reworded",
    "articles-other-words",
)
#: A set read from another set's folder, with another file per document: the one-line copies of the articles.
LAYOUTS = {"articles-oneline": ("articles", ".oneline.txt")}
#: The articles' questions asked in other words (bench/paraphrased.py): same documents and gold.
REWORDED = {"articles-reworded": "articles reworded", "articles-other-words": "articles other words"}
#: Documents longer than this many characters are reported as long.
LONG_CHARS = 32_000
MODES = ("product", "sparse")
#: Gate decisions after which the episode is closed: refining it would return nothing new.
CLOSING = frozenset({"full_view", "fallback", "native_fit"})
BOUND = 2.0
#: The share of the gold characters the evidence read must cover to count as a hit.
HIT_SHARE = 0.8

Json = dict[str, Any]
STOPS = {
    "held": "the evidence read covers the gold",
    "found": "the server says every slot is found",
    "skill": "coverage says found (SKILL.md); on a page of a full view, once it holds the gold",
    "skill-held": "what it read holds the gold (SKILL.md's calls, a reader that judges what it reads)",
}
#: Where the tokens go: a preview, the first read, refines, pages of a full view, the check, the verify.
STEPS = ("preview", "first", "refine", "page", "check", "verify")
#: The agents that make SKILL.md's calls: read with the question (no preview), focus, refines that continue it.
SKILL_AGENTS = ("skill", "skill-held")


class BoundViolation(AssertionError):
    """An episode exposed more than 2L. `result` holds everything measured, violations included."""

    def __init__(self, message: str, result: Json) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    max_calls: int
    exposure_tokens: int | None
    budget_tokens: int | None
    #: budget_tokens of the first read alone (an experiment: the best passage or two, then refines).
    first_budget: int | None = None
    stop: str = "held"  # "held": stop once the evidence read covers the gold; "found": on the server's coverage
    #: Sparse reads give up once the episode's sparse characters E reach this share of L without the evidence.
    sparse_share: float = 0.25
    #: ... or after this many sparse reads (collect and refines).
    sparse_reads: int = 8
    #: What the agent does then: ask `view="full"` once and page it (SKILL.md's advice), or stop.
    fallback: bool = True
    #: A passage holding part of the evidence, which runs on past its edge, is read around (SKILL.md:
    #: `sro_read("file#L120-L130", action="refine")`) before any plain refine: a reader that sees the answer
    #: cut off asks for the text beside it.
    around: bool = False


@dataclass(slots=True, kw_only=True)
class Ledger:
    """One episode's exposure as the packs report it, and as summed here from the payloads."""

    full_view_chars: int
    reported_chars: int = 0
    summed_chars: int = 0

    @property
    def ratio(self) -> float:
        return max(self.reported_chars, self.summed_chars) / max(1, self.full_view_chars)


@dataclass(slots=True, kw_only=True)
class AgentRun:
    """What the agent received while answering one question: tokens, evidence spans, decisions, ledgers."""

    text: str
    counter: TokenCounter
    route: str = "none"
    tokens: int = 0
    calls: int = 0
    steps: dict[str, int] = field(default_factory=dict)  # tokens received per step: preview, read, verify
    trace: list[tuple[str, int]] = field(default_factory=list)  # every call's step and tokens, in order
    errors: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    verify_spans: list[tuple[int, int]] = field(default_factory=list)  # from the gold claim: not scored
    decisions: list[str] = field(default_factory=list)
    ledgers: dict[str, Ledger] = field(default_factory=dict)
    unplaced: int = 0  # items whose text is nowhere in the source (scored as nothing)
    evidence_chars: int = 0  # every evidence character delivered about the document, across episodes
    starts: list[int] = field(default_factory=list)
    asked_full: bool = False  # the agent gave up on sparse reads and asked for the full view
    held_sparse: bool = False  # the evidence was held before any full view was asked for
    episode: str = ""  # the id of the episode the latest answer went on in (said by the one that opened it)
    anchors: list[tuple[tuple[int, int], str]] = field(default_factory=list)  # sparse items: span, anchor

    def __post_init__(self) -> None:
        self.starts = [0, *(i + 1 for i, ch in enumerate(self.text) if ch == "\n")]

    def receive(self, step: str, result: CallToolResult) -> Json | None:
        blocks = [c.text for c in result.content if isinstance(c, TextContent)]
        tokens = sum(self.counter.count(block) for block in blocks)  # every block, as the model reads it
        self.tokens += tokens
        self.steps[step] = self.steps.get(step, 0) + tokens
        self.trace.append((step, tokens))
        self.calls += 1
        if result.is_error or not blocks or not blocks[0].startswith("{"):
            self.errors.append("".join(blocks)[:200])
            return None
        return record_of(blocks)  # a native preview: its frame, then the file as a block of its own

    def take_preview(self, preview: Json) -> None:
        self.route = preview["route"]
        if preview.get("content") is not None:
            self.spans.append((0, len(self.text)))
            self.evidence_chars += len(preview["content"])
        self.spans.extend(self._span(item) for item in preview.get("samples", []))

    def take_pack(self, pack: Json, *, verified: bool = False) -> None:
        if "exposure" not in pack:  # a verdict alone: nothing delivered, nothing charged
            self.decisions.append("native_fit" if "scope" not in pack else gate_decision(pack))
            return
        decision = gate_decision(pack)
        self.decisions.append(decision)
        items = pack.get("items", [])
        spans = [self._span(item) for item in items]
        (self.verify_spans if verified else self.spans).extend(spans)
        if not verified and decision not in CLOSING and "cursor" not in pack:
            self.anchors += [(span, item["pointer"].split("#", 1)[-1]) for span, item in zip(spans, items, strict=True)]
        exposure = pack["exposure"]  # the wire's compact ledger: chars, E, L, full_chars; an absent count is 0
        # The answer that opens an episode's ledger says its id and L; the ones after it (the same goal on
        # this one document) say neither.
        if "id" in pack.get("episode", {}):
            self.episode = pack["episode"]["id"]
        ledger = self.ledgers.get(self.episode)
        if ledger is None:
            ledger = self.ledgers[self.episode] = Ledger(full_view_chars=exposure["L"])
        reported = exposure.get("E", 0) + exposure.get("full_chars", 0)
        ledger.reported_chars = max(ledger.reported_chars, reported)
        ledger.summed_chars += exposure.get("chars", 0)
        self.evidence_chars += exposure.get("chars", 0)

    def take_card(self, card: Json) -> None:
        for state in card.get("episodes", []):
            ledger = self.ledgers.setdefault(state["id"], Ledger(full_view_chars=state["L"]))
            # The card says whether the full view was delivered, not how much of it: count all of L.
            full = state["L"] if state.get("full_view_delivered") else 0
            ledger.reported_chars = max(ledger.reported_chars, state.get("E", 0) + full)

    def holds(self, gold: list[tuple[int, int]]) -> bool:
        return bool(gold) and covered(self.spans, gold) >= HIT_SHARE

    def _span(self, item: Json) -> tuple[int, int]:
        """The item's character span in the source: its line range when the text there is the item's text
        (it is verbatim), else wherever its text occurs; an item found nowhere counts for nothing."""
        text, lines = item["text"], item.get("lines") or lines_of(item["pointer"])
        if lines:
            first, last = int(lines[0]), int(lines[1])
            start = self.starts[min(first, len(self.starts)) - 1]
            end = self.starts[last] - 1 if last < len(self.starts) else len(self.text)
            if self.text[start:end] == text:
                return start, end
        start = self.text.find(text) if text else -1
        if start < 0:
            self.unplaced += 1
            return 0, 0
        return start, start + len(text)


def cut_off(span: tuple[int, int], gold: list[tuple[int, int]]) -> bool:
    """Whether a received passage holds part of the evidence and the evidence runs on past its edge (what a
    reader sees: a table without its first rows, a list cut short): the text around it is worth reading."""
    return any(min(span[1], end) > max(span[0], start) and (start < span[0] or end > span[1]) for start, end in gold)


def lines_of(pointer: str) -> list[int] | None:
    """The line range a pointer's anchor states (`#L12-L18`, `#L7:C3-C9`); the wire sends no `lines` then."""
    said = anchor_lines(pointer.split("#", 1)[-1])
    return list(said) if said else None


def claim_of(question: Json) -> str:
    answer = question.get("answer", "")
    return ", ".join(str(a) for a in answer) if isinstance(answer, list) else str(answer)


async def agent(client: Client, target: str, question: Json, policy: Policy, seen: AgentRun) -> str:
    """The scripted policy; returns the verification status. The `skill` agent does what SKILL.md says for
    one question: a focus with the goal in words, refines that continue it, and a stop on `found`."""
    ask = str(question["question"])[:8000]
    skill = policy.stop in SKILL_AGENTS
    intent: Json = {"goal": ask} if skill else {"goal": ask, "slots": [{"id": "answer", "question": ask}]}
    budget = {"budget_tokens": policy.budget_tokens} if policy.budget_tokens else {}
    if skill:  # SKILL.md: with a question, read with it (a small file comes back whole)
        await read_until_held(client, target, question, policy, seen, intent, budget)
    else:
        preview = seen.receive(
            "preview", await client.call_tool("sro_preview", {"path": target, "intent": intent, **budget})
        )
        if preview is not None:
            seen.take_preview(preview)
        if preview is not None and preview["route"] != "native":
            await read_until_held(client, target, question, policy, seen, intent, budget)
    verify_args = {"target": target, "action": "verify", "intent": {"goal": claim_of(question)[:8000]}}
    verified = seen.receive("verify", await client.call_tool("sro_read", verify_args))
    if verified is None:
        return "error"
    seen.take_pack(verified, verified=True)
    return str((verified.get("verification") or {}).get("status", "none"))


async def read_until_held(
    client: Client, target: str, question: Json, policy: Policy, seen: AgentRun, intent: Json, budget: Json
) -> None:
    """Collect, then refine while sparse reads pay (SKILL.md: "if the evidence is not there, refine ... or ask
    view=full"); once they have cost `sparse_share` of one full read, or a refine brings nothing, ask the full
    view once (page 1 begins at the best match for the goal) and follow its cursor. A page of a full view the
    server chose itself (the selector's last resort, the gate's fallback) is followed the same way."""
    first = "focus" if policy.stop in SKILL_AGENTS else "collect"
    opening = {"budget_tokens": policy.first_budget} if policy.first_budget else budget
    args: Json = {"target": target, "action": first, "intent": intent, **opening}
    reads = sparse_reads = 0
    gold = gold_spans(question)
    expanded: set[str] = set()
    while reads < policy.max_calls - 1:
        step = "page" if "cursor" in args or args.get("view") == "full" else "refine" if reads else "first"
        pack = seen.receive(step, await client.call_tool("sro_read", args))
        reads += 1
        if pack is None:
            return
        seen.take_pack(pack)
        paged = "cursor" in args or args.get("view") == "full" or gate_decision(pack) in CLOSING
        if not paged:
            sparse_reads += 1
        found = bool(pack.get("coverage")) and all(c["status"] == "found" for c in pack["coverage"])
        # A reader that knows the answer when it sees it (`held`; the skill agent on a page of the full
        # view, which it reads whole), else one that trusts the server's `found`.
        judged = policy.stop in ("held", "skill-held") or (policy.stop == "skill" and paged)
        done = seen.holds(gold) if judged else found
        if not seen.asked_full and not paged:
            seen.held_sparse = done
        if done or (policy.exposure_tokens is not None and seen.tokens >= policy.exposure_tokens):
            return
        if pack.get("cursor"):
            args = {"target": target, "cursor": pack["cursor"], **budget}
            continue
        if paged:  # the full view's last page, or a file the server answered whole: nothing more to read
            return
        # SKILL.md: keep refining while E (the ledger's sparse characters) is under a quarter of L.
        episode = seen.ledgers.get(seen.episode)
        read = episode.reported_chars / episode.full_view_chars if episode and episode.full_view_chars else 0.0
        spent = read >= policy.sparse_share or sparse_reads >= policy.sparse_reads
        # A first read under a small budget may name the best passage instead of sending it: refine then.
        pointed = bool(policy.first_budget) and pack.get("view") == "pointers"
        part = next((a for span, a in seen.anchors if a not in expanded and cut_off(span, gold)), None)
        if policy.around and part is not None and not spent:
            expanded.add(part)
            args = {"target": f"{target}#{part}", "action": "refine", **budget}
        elif (pack.get("items") or pointed or args["target"] != target) and not spent:
            # (a read around a passage that brought nothing says nothing of what a plain refine would bring)
            args = {"target": target, "action": "refine", **budget}
        elif policy.fallback and not seen.asked_full:
            seen.asked_full = True
            args = {"target": target, "action": "focus", "intent": intent, "view": "full", **budget}
        else:
            return


async def run_question(
    docs: Path, question: Json, policy: Policy, mode: str, counter: TokenCounter, server_env: dict[str, str]
) -> Json:
    target = Path(question["doc_file"]).name
    text = (docs / target).read_text(encoding="utf-8")
    seen = AgentRun(text=text, counter=counter)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPARSEREAD_")} | server_env
    if mode == "sparse":
        env["SPARSEREAD_NATIVE_FIT_TOKENS"] = "0"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sparseread_mcp", "--root", str(docs)], env=env, cwd=str(REPO)
    )
    with anyio.fail_after(300):
        async with Client(params) as client:
            status = await agent(client, target, question, policy, seen)
            card = await client.call_tool("sro_card", {"trace": True})
            if card.is_error or card.structured_content is None:
                seen.errors.append(f"sro_card failed, its ledgers are not checked: {card.content}"[:200])
            else:
                seen.take_card(card.structured_content)
    gold = gold_spans(question)
    share = covered(seen.spans, gold) if gold else None
    leaky = covered(seen.spans + seen.verify_spans, gold) if gold else None
    full = counter.count(text)
    return {
        "qid": question["qid"],
        "bm25_hit": question.get("bm25_hit", False),
        "bm25_tokens": question.get("bm25_tokens", 0),
        "mode": mode,
        "stop": policy.stop,
        "route": seen.route,
        "calls": seen.calls,
        "tokens": seen.tokens,
        "steps": seen.steps,
        "trace": seen.trace,
        "full_tokens": full,
        "doc_chars": len(text),
        "ratio": seen.tokens / max(1, full),
        "gold_share": share,
        "hit": share is not None and share >= HIT_SHARE,
        "hit_with_verify": leaky is not None and leaky >= HIT_SHARE,
        "hit_sparse": (seen.route == "native" and share is not None and share >= HIT_SHARE) or seen.held_sparse,
        "asked_full": seen.asked_full,
        "verify": status,
        "decisions": seen.decisions,
        "errors": seen.errors,
        "unplaced_items": seen.unplaced,
        "episode_ratio": max((led.ratio for led in seen.ledgers.values()), default=0.0),
        "episodes": {k: asdict(v) for k, v in seen.ledgers.items()},
        "artifact_ratio": seen.evidence_chars / max(1, len(text)),
    }


#: The plainest baseline beside the agent: BM25's best passages up to this many characters, once.
BM25_CHARS = 1_500


def bm25_snippets(engine: ReadEngine, question: Json, counter: TokenCounter) -> tuple[bool, int]:
    """Whether BM25's best snippets (BM25_CHARS, one read, the question as the query) cover the gold, and
    their tokens (the passages' text alone: no frame, no pointers)."""
    parsed = engine.open(Path(question["doc_file"]).name)
    ranking = Bm25Locator().rank(parsed, build_query([str(question["question"])], []))
    spans = [(x.start, x.end) for x in plan_exposure(parsed, ranking, "snippets", BM25_CHARS)]
    text = parsed.artifact.text
    tokens = sum(counter.count(text[a:b]) for a, b in spans)
    return covered(spans, gold_spans(question)) >= HIT_SHARE, tokens


def sample(folder: Path, limit: int, seed: int) -> list[Json]:
    rows = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines() if line.strip()]
    rows = [{**r, "doc_file": doc_file(folder, r)} for r in rows]
    rows = [r for r in rows if gold_spans(r) and r["doc_file"]]
    picked = sorted(random.Random(seed).sample(range(len(rows)), min(limit, len(rows))))
    return [rows[i] for i in picked]


def summarize(name: str, mode: str, runs: list[Json]) -> Json:
    med = statistics.median
    ours, full = med(r["tokens"] for r in runs), med(r["full_tokens"] for r in runs)
    return {
        "set": name,
        "mode": mode,
        "questions": len(runs),
        "native_share": sum(r["route"] == "native" for r in runs) / len(runs),
        "median_tokens": ours,
        "median_full_tokens": full,
        "ratio_of_medians": ours / full,
        "median_ratio": med(r["ratio"] for r in runs),
        "total_ratio": sum(r["tokens"] for r in runs) / sum(r["full_tokens"] for r in runs),
        "hit_share": sum(r["hit"] for r in runs) / len(runs),
        "hit_with_verify_share": sum(r["hit_with_verify"] for r in runs) / len(runs),
        "hit_sparse_share": sum(r["hit_sparse"] for r in runs) / len(runs),
        "asked_full": sum(r["asked_full"] for r in runs),
        "median_calls": med(r["calls"] for r in runs),
        "median_steps": {k: med(r["steps"].get(k, 0) for r in runs) for k in STEPS},
        "total_steps": {k: sum(r["steps"].get(k, 0) for r in runs) for k in STEPS},
        "verify": dict(Counter(r["verify"] for r in runs)),
        "full_view": sum("full_view" in r["decisions"] for r in runs),
        "fallbacks": sum("fallback" in r["decisions"] for r in runs),
        "errors": sum(bool(r["errors"]) for r in runs),
        "unplaced_items": sum(r["unplaced_items"] for r in runs),
        "max_episode_ratio": max(r["episode_ratio"] for r in runs),
        "max_artifact_ratio": max(r["artifact_ratio"] for r in runs),
        "bm25_hit_share": sum(r.get("bm25_hit", False) for r in runs) / len(runs),
        "bm25_median_ratio": med(r.get("bm25_tokens", 0) / r["full_tokens"] for r in runs),
    }


def table(rows: list[Json], policy: Policy, schema_tokens: tuple[int, int]) -> list[str]:
    lines = [
        f"Scripted agent over stdio: preview, collect, refine until sparse reads have read {policy.sparse_share:g} "
        f"of the full view (E/L) or {policy.sparse_reads} reads, then "
        f"{'view=full, its cursor followed' if policy.fallback else 'stop'} (<= "
        f"{policy.max_calls} calls; stop when {STOPS[policy.stop]}"
        + (f" or at {policy.exposure_tokens:,} tokens received" if policy.exposure_tokens is not None else "")
        + "), verify. Tokens = tool results as the model reads them.",
        f"Tool schemas (list_tools, paid once per prompt, not counted below): {schema_tokens[0]:,} tokens "
        f"(names, descriptions, input schemas, compact JSON), {schema_tokens[1]:,} with every other field listed.",
        f"{'set':<13}{'mode':<9}{'n':>4}{'native':>8}{'ours med':>10}{'full med':>10}{'ratio':>8}"
        f"{'med q':>8}{'total':>8}{'hit>=80%':>10}{'sparse':>8}{'w/ verify':>10}{'calls':>7}{'asked':>6}"
        f"{'full':>5}{'fallbk':>7}"
        f"{'max E/L':>9}{'doc/L':>7}"
        "  verify",
    ]
    for r in rows:
        verify = " ".join(f"{k}:{v}" for k, v in sorted(r["verify"].items()))
        lines.append(
            f"{r['set']:<13}{r['mode']:<9}{r['questions']:>4}{100 * r['native_share']:>7.0f}%"
            f"{r['median_tokens']:>10,.0f}{r['median_full_tokens']:>10,.0f}{r['ratio_of_medians']:>8.3f}"
            f"{r['median_ratio']:>8.3f}{r['total_ratio']:>8.3f}{100 * r['hit_share']:>9.0f}%"
            f"{100 * r['hit_sparse_share']:>7.0f}%{100 * r['hit_with_verify_share']:>9.0f}%{r['median_calls']:>7.1f}"
            f"{r['asked_full']:>6}{r['full_view']:>5}{r['fallbacks']:>7}"
            f"{r['max_episode_ratio']:>9.3f}"
            f"{r['max_artifact_ratio']:>7.2f}  {verify}"
        )
        lines.append(
            f"{'':<13}{'bm25 1.5k':<9}{r['questions']:>4}{'':>8}{'':>10}{'':>10}{'':>8}{r['bm25_median_ratio']:>8.3f}"
            f"{'':>8}{100 * r['bm25_hit_share']:>9.0f}%"
        )
        lines.append(
            f"{'':<13}{'full read':<9}{r['questions']:>4}{'':>8}{r['median_full_tokens']:>10,.0f}"
            f"{r['median_full_tokens']:>10,.0f}{1.0:>8.3f}{1.0:>8.3f}{1.0:>8.3f}{100.0:>9.0f}%{'':>8}{100.0:>9.0f}%"
            f"{1.0:>7.1f}"
        )
    for r in rows:
        if r["errors"] or r["unplaced_items"]:
            lines.append(
                f"  ! {r['set']} {r['mode']}: {r['errors']} question(s) with tool errors, "
                f"{r['unplaced_items']} item(s) not found verbatim in the source (see --json)"
            )
    lines.append(f"Where the tokens went, median per question (share of all tokens): {' / '.join(STEPS)}:")
    for r in rows:
        total = max(1, sum(r["total_steps"].values()))
        cells = " /".join(f"{r['median_steps'][k]:>7,.0f} ({100 * r['total_steps'][k] / total:.0f}%)" for k in STEPS)
        lines.append(f"  {r['set']:<13}{r['mode']:<9}{cells}")
    lines += [
        "ratio = median ours / median full read; med q = median of per-question ratios; total = sum / sum.",
        "hit: the evidence read before verify covers >= 80% of the gold characters (a full read always does); "
        "w/ verify: counting the passages verify returned for the gold answer too (leaky: not the target); "
        "sparse: held before any full view was asked for or sent.",
        "asked: questions where sparse reads gave up and the agent asked view=full.",
        "full / fallbk: questions where a read answered with the full view (the selector's choice, or a cursor "
        "page of it) / where the gate withheld a sparse batch and fell back to it.",
        "max E/L: the largest (sparse + full-view chars) / L of any episode (bound 2); doc/L: all evidence "
        "chars delivered about the document, every episode and the preview, / L.",
    ]
    return lines


async def schema_tokens(docs: Path, counter: TokenCounter) -> tuple[int, int]:
    """Tokens of the tool list: as most clients show it to the model, and with the output schemas too."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "sparseread_mcp", "--root", str(docs)])
    async with Client(params) as client:
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in (await client.list_tools()).tools]
    shown = [{k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in tools]
    compact = {"separators": (",", ":")}  # as bench/wire_bench.py counts them: no JSON padding
    return counter.count(json.dumps(shown, **compact)), counter.count(json.dumps(tools, **compact))  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> Json:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--limit", type=int, default=10, help="questions per set (10), a seeded sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-calls",
        type=int,
        default=40,
        help="sro_read calls per question, verify and full-view pages included (40)",
    )
    parser.add_argument("--exposure-tokens", type=int, help="stop reading past this many tokens received (no cap)")
    parser.add_argument(
        "--sparse-share",
        type=float,
        default=0.25,
        help="sparse reads give up once E, the sparse characters read, reaches this share of L (0.25)",
    )
    parser.add_argument("--sparse-reads", type=int, default=8, help="... or after this many sparse reads (8)")
    parser.add_argument(
        "--no-fallback",
        action="store_true",
        help="when sparse reads give up, stop (default: ask view=full once and follow its cursor, as SKILL.md says)",
    )
    parser.add_argument(
        "--around",
        action="store_const",
        const=True,
        help="read around a received passage whose evidence runs on past its edge (refine with its pointer as "
        "target) before plain refines (default: on for the agents that follow SKILL.md, --stop skill and "
        "skill-held, which says to; off for the others)",
    )
    parser.add_argument("--no-around", dest="around", action="store_const", const=False, help="plain refines only")
    parser.add_argument("--budget-tokens", type=int, help="budget_tokens of each call (default: the server's)")
    parser.add_argument("--first-budget", type=int, help="budget_tokens of the first read only (an experiment)")
    parser.add_argument(
        "--stop",
        choices=tuple(STOPS),
        default="held",
        help="when the agent stops reading: once what it read covers the gold (held, the reader that knows the "
        "answer when it sees it) or once the server says every slot is found (found)",
    )
    parser.add_argument(
        "--semantic-model",
        help="the servers' SPARSEREAD_SEMANTIC_MODEL (all-MiniLM-L6-v2: MiniLM-L6 reranks plain prose in place of "
        "E5 where the e5 extra is installed; default: the server's, auto)",
    )
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args(argv)
    server_env = {"SPARSEREAD_SEMANTIC_MODEL": args.semantic_model} if args.semantic_model else {}
    policy = Policy(
        max_calls=args.max_calls,
        exposure_tokens=args.exposure_tokens,
        budget_tokens=args.budget_tokens,
        first_budget=args.first_budget,
        stop=args.stop,
        sparse_share=args.sparse_share,
        sparse_reads=args.sparse_reads,
        fallback=not args.no_fallback,
        around=args.stop in SKILL_AGENTS if args.around is None else args.around,
    )
    settings = Settings.from_env()
    counter = TokenCounter(settings.tokenizer, margin=settings.token_margin)
    rows: list[Json] = []
    questions: list[Json] = []
    for name in args.sets:
        folder, suffix = args.data / LAYOUTS.get(name, (name, ""))[0], LAYOUTS.get(name, (name, ""))[1]
        if name in REWORDED:
            folder = args.data / "articles"
        picked = sample(folder, args.limit, args.seed)
        if suffix:
            picked = [{**q, "doc_file": f"docs/{q['doc_id']}{suffix}"} for q in picked]
        if name in REWORDED:
            reworded = paraphrases(PARAPHRASED[REWORDED[name]])
            picked = [{**q, "question": reworded[str(q["qid"])]} for q in picked]
        baseline = ReadEngine(Settings(roots=(folder / "docs",)))
        for q in picked:
            q["bm25_hit"], q["bm25_tokens"] = bm25_snippets(baseline, q, counter)
        for mode in args.modes:
            if mode == "sparse" and rows and rows[-1]["set"] == name and not rows[-1]["native_share"]:
                continue  # nothing went native: the sparse mode would repeat the same reads
            runs = []
            for q in picked:
                try:
                    runs.append(anyio.run(run_question, folder / "docs", q, policy, mode, counter, server_env))
                except Exception as exc:  # the server died or never started: its stderr is above
                    raise RuntimeError(f"the server failed on {name} {q['qid']} ({mode}): {exc!r}") from exc
                print(f"  {name} {mode} {q['qid']}: {runs[-1]['tokens']:,} tokens", file=sys.stderr, flush=True)
            questions += [{"set": name, **r} for r in runs]
            rows.append(summarize(name, mode, runs))
    for mode in args.modes:  # long and short documents apart, over every set
        for label, keep in (("long docs", True), ("short docs", False)):
            runs = [q for q in questions if q["mode"] == mode and (q["doc_chars"] > LONG_CHARS) == keep]
            if runs:
                rows.append(summarize(label, mode, runs))
    schema = anyio.run(schema_tokens, args.data / SETS[0] / "docs", counter)
    for line in table(rows, policy, schema):
        print(line, flush=True)
    violations = [
        f"{q['set']} {q['mode']} {q['qid']} episode {ep}: {led['reported_chars']:,}/{led['summed_chars']:,} chars "
        f"> 2 x L={led['full_view_chars']:,}"
        for q in questions
        for ep, led in q["episodes"].items()
        if max(led["reported_chars"], led["summed_chars"]) > BOUND * led["full_view_chars"]
    ]
    worst = max((q["episode_ratio"] for q in questions), default=0.0)
    print(f"2L bound: max episode exposure / L = {worst:.3f} over {len(questions)} questions", flush=True)
    result: Json = {
        "policy": asdict(policy),
        "schema_tokens": {"input": schema[0], "with_output": schema[1]},
        "sets": rows,
        "questions": questions,
        "bound": {"max_episode_ratio": worst, "violations": violations},
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if violations:
        for line in violations:
            print("2L BOUND VIOLATED: " + line, flush=True)
        raise BoundViolation(f"{len(violations)} episode(s) exposed more than 2L", result)
    return result


if __name__ == "__main__":
    main()
