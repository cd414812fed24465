"""History compaction on real agent runs, family by family: tokens re-sent, and what later actions still find.

Not a test. Run:  python -m bench.compaction_bench [--data ../shared/data] [--every 4] [--no-learned]

Replayed closed loop: at every assistant step t the agent re-sends its effective history. Policies, side by side
in one run: no compaction; sliding windows keeping system messages and the last K units (K = 5, 10, 20); masking
every observation but the last K (K = 5, 10, 20: what agent frameworks ship); StateComp with the default router;
and StateComp with the learned router, trained leave-one-family-out (on every family but the one it is scored
on); and, as a ceiling (not a method), StateComp replacing every unprotected interaction by a stub: what any
router and summarizer could save under the same protections. StateComp runs every `--every` assistant steps on
the effective history, new messages appended in between. Tokens re-sent = the sum over steps of the effective
history's tokens (extractive summaries cost no model tokens; their text is counted inside the history).
Retention = the share of identifiers, paths, numbers and error strings that the action at step t reuses from
earlier observations and that are still in the effective history at t. Actionability (bench/actionability.py) =
the share of the text the action at step t copies verbatim from earlier observations (lines and quoted strings
of 16 characters or more: an edit's old text, a search string, a value in a reply) that the effective history
still holds, or that a file view it still names re-reads with the file unchanged since; in brackets, the share
held verbatim. Every family is reported on its own (reduction pooled by tokens within the family, retention the
mean over its actions), then the macro average over families and the figure pooled over all runs. Each StateComp
call is checked: calls and results paired, never longer.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.actionability import Actionability
from sparseread_mcp.compaction import CompactionSettings, Router, compact, load_file, validate
from sparseread_mcp.compaction.learned import family_runs, train_on_runs
from sparseread_mcp.compaction.router import salient
from sparseread_mcp.compaction.segments import Unit, segment
from sparseread_mcp.compaction.summarize import Summarizer
from sparseread_mcp.compaction.transcript import Message, Transcript
from sparseread_mcp.errors import IntentError
from sparseread_mcp.tokens import TokenCounter

REPO = Path(__file__).resolve().parent.parent
Policy = Callable[[Transcript, Transcript | None], Transcript]


def window(k: int) -> Policy:
    def apply(history: Transcript, _previous: Transcript | None) -> Transcript:
        units = segment(history)
        keep = {i for u in units[-k:] for i in u.messages}
        keep |= {i for i, m in enumerate(history.messages) if m.role == "system"}
        return Transcript(format=history.format, messages=[m for i, m in enumerate(history.messages) if i in keep])

    return apply


def mask(last: int) -> Policy:
    def apply(history: Transcript, _previous: Transcript | None) -> Transcript:
        results = [i for i, m in enumerate(history.messages) if m.results]
        hidden = set(results[:-last]) if last else set(results)
        out = []
        for i, m in enumerate(history.messages):
            if i in hidden and m.role == "tool":
                raw = {**m.raw, "content": "[observation masked]"}
                out.append(Message(role=m.role, text="[observation masked]", raw=raw, results=m.results))
            else:
                out.append(m)
        return Transcript(format=history.format, messages=out)

    return apply


@dataclass
class Checks:
    calls: int = 0
    changed: int = 0
    valid: int = 0
    not_longer: int = 0
    shorter: int = 0


def statecomp(
    every: int,
    checks: Checks,
    router: Router | None = None,
    settings: CompactionSettings | None = None,
    summarizer: Summarizer | None = None,
) -> Policy:
    def apply(history: Transcript, previous: Transcript | None) -> Transcript:
        steps = sum(m.role == "assistant" for m in history.messages)  # assistant turns so far
        if previous is not None:  # keep earlier replacements: what was effective plus what is new
            new = history.messages[_consumed(previous) :]
            history = Transcript(format=history.format, messages=[*previous.messages, *new])
        if steps % every:
            return history
        result = compact(history, router=router, settings=settings, summarizer=summarizer)
        checks.calls += 1
        checks.changed += any(p.committed for p in result.plan)
        checks.valid += validate(result.transcript) is None
        checks.not_longer += result.tokens_after <= result.tokens_before
        checks.shorter += result.tokens_after < result.tokens_before
        return result.transcript

    return apply


class _Everything:
    """The ceiling's router: every interaction not protected is replaceable."""

    name = "everything"

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float:
        return 1.0


class _Stub:
    """The ceiling's summarizer: a span becomes a few characters, keeping nothing."""

    def summarize(self, span_id: str, units: Sequence[Unit]) -> str:
        return f"[{span_id}]"


def ceiling(every: int, settings: CompactionSettings | None = None) -> Policy:
    """Not a method: what any router and summarizer could save under the same protections and cadence (system
    and user messages, the latest interactions, pairs never split), replacing everything else by a stub."""
    checks = Checks()
    return statecomp(every, checks, _Everything(), settings, _Stub())


def _consumed(effective: Transcript) -> int:
    """How many input messages the effective history already covers (summaries carry no position)."""
    positions = [int(str(m.raw["_position"])) for m in effective.messages if "_position" in m.raw]
    return max(positions) + 1 if positions else 0


@dataclass
class Tally:
    """One policy on some runs: tokens re-sent, and per action its retention and actionability."""

    tokens: int = 0
    retention: list[float] = field(default_factory=list)
    verbatim: list[float] = field(default_factory=list)  # share of quotes held verbatim
    actionable: list[float] = field(default_factory=list)  # share held verbatim or re-readable

    def add(self, other: Tally) -> None:
        self.tokens += other.tokens
        self.retention += other.retention
        self.verbatim += other.verbatim
        self.actionable += other.actionable


Figures = dict[str, Tally]  # policy -> its tally


def run(path: Path, policies: dict[str, Policy], counter: TokenCounter) -> Figures:
    transcript = load_file(path.read_text())
    for position, message in enumerate(transcript.messages):
        message.raw["_position"] = position  # lets StateComp know which messages are new
    steps = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    acting = Actionability(transcript)
    results: Figures = {}
    for name, policy in policies.items():
        tally, effective = Tally(), None
        for t in steps:
            history = Transcript(format=transcript.format, messages=transcript.messages[:t])
            effective = policy(history, effective)
            text = json.dumps([{k: v for k, v in m.raw.items() if k != "_position"} for m in effective.messages])
            tally.tokens += counter.count(text)
            action = transcript.messages[t]
            earlier = " ".join(r for m in transcript.messages[:t] for _, r in m.results)
            used = {s for s in salient(" ".join(c.arguments for c in action.calls) + " " + action.text) if s in earlier}
            if used:
                tally.retention.append(sum(1 for s in used if s in text) / len(used))
            shares = acting.score(t, effective.messages)
            if shares is not None:
                tally.verbatim.append(shares[0])
                tally.actionable.append(shares[1])
        results[name] = tally
    return results


def _mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 1.0


def table(families: dict[str, Figures], names: list[str]) -> list[str]:
    """Per family, then macro and pooled, one column group per policy: reduction vs none, retention,
    actionability (quotes verbatim or re-readable) and, in brackets, quotes held verbatim."""
    width = 27
    head = f"{'family':<30}" + "".join(f"{name:>{width}}" for name in names)
    lines = [head, f"{'':<30}" + "".join(f"{'tokens  ret.  act. (verb.)':>{width}}" for _ in names)]
    per: dict[str, list[tuple[float, float, float, float]]] = {n: [] for n in names}
    pooled: dict[str, Tally] = {n: Tally() for n in names}

    def cells(reduction: float, tally: Tally) -> str:
        return (
            f"{reduction:>+9.1%}{_mean(tally.retention):>7.1%}{_mean(tally.actionable):>7.1%}"
            f" ({_mean(tally.verbatim):>5.1%})"
        )

    for family, figures in families.items():
        row = f"{family:<30}"
        for name in names:
            tally = figures[name]
            reduction = tally.tokens / figures["none"].tokens - 1
            per[name].append((reduction, _mean(tally.retention), _mean(tally.actionable), _mean(tally.verbatim)))
            pooled[name].add(tally)
            row += cells(reduction, tally)
        lines.append(row)
    macro = f"{'macro (mean of families)':<30}"
    whole = f"{'pooled (all runs)':<30}"
    for name in names:
        r, k, a, v = (statistics.mean(x[i] for x in per[name]) for i in range(4))
        macro += f"{r:>+9.1%}{k:>7.1%}{a:>7.1%} ({v:>5.1%})"
        whole += cells(pooled[name].tokens / pooled["none"].tokens - 1, pooled[name])
    return [*lines, macro, whole]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--every", type=int, default=4, help="StateComp runs every N assistant steps (4)")
    parser.add_argument("--no-learned", action="store_true", help="skip the leave-one-family-out learned router")
    defaults = CompactionSettings()
    parser.add_argument("--keep-last", type=int, default=defaults.keep_last, help="latest interactions kept")
    parser.add_argument("--min-interactions", type=int, default=defaults.kappa, help="a span needs more than this")
    parser.add_argument("--min-tokens", type=int, default=defaults.min_tokens, help="a span needs this many tokens")
    args = parser.parse_args()
    settings = CompactionSettings(keep_last=args.keep_last, kappa=args.min_interactions, min_tokens=args.min_tokens)
    counter = TokenCounter()
    root = args.data / "trajectories"
    runs = family_runs(root)
    checks = {"statecomp": Checks(), "learned (LOFO)": Checks()}
    families: dict[str, Figures] = {}
    trained: list[str] = []
    for family, paths in runs.items():
        policies: dict[str, Policy] = {
            "none": lambda h, _p: h,
            "window K=5": window(5),
            "window K=10": window(10),
            "window K=20": window(20),
            "mask K=5": mask(5),
            "mask K=10": mask(10),
            "mask K=20": mask(20),
            "statecomp": statecomp(args.every, checks["statecomp"], settings=settings),
        }
        if not args.no_learned:
            try:
                router: Router | None = train_on_runs(root, leave_out=[family], every=args.every)
            except IntentError as exc:  # e.g. the other families give one label only
                trained.append(f"{family}: not trained ({exc})")
                router = None
            else:
                trained.append(f"{family}: trained on {', '.join(router.families)}")
                policies["learned (LOFO)"] = statecomp(args.every, checks["learned (LOFO)"], router, settings)
        policies["ceiling (stub)"] = ceiling(args.every, settings)
        figures: Figures = {}
        for path in paths:
            for name, tally in run(path, policies, counter).items():
                figures.setdefault(name, Tally()).add(tally)
        families[family] = figures
    names = [n for n in next(iter(families.values()))]
    if any(set(f) != set(names) for f in families.values()):
        names = [n for n in names if all(n in f for f in families.values())]
    print(
        f"{sum(len(p) for p in runs.values())} runs in {len(runs)} families; StateComp every {args.every} steps, "
        f"keep_last {settings.keep_last}, spans of > {settings.kappa} interactions and >= {settings.min_tokens} tokens"
    )
    print("reduction = tokens re-sent vs none; retention = mean share of reused strings still in the history")
    for line in [*table(families, names[:5]), "", *table(families, ["none", *names[5:]])]:
        print(line)
    for name, check in checks.items():
        if check.calls:
            print(
                f"{name}: {check.calls} compactions, {check.valid} valid (calls and results paired), "
                f"{check.not_longer} never longer; {check.changed} changed the history, {check.shorter} shorter"
            )
    for line in trained:
        print("learned router, scored on " + line)


if __name__ == "__main__":
    main()
