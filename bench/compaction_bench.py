"""History compaction on real agent runs, family by family: tokens re-sent, and what later actions still find.

Not a test. Run:  python -m bench.compaction_bench [--data ../shared/data] [--every 4] [--no-learned]

Replayed closed loop: at every assistant step t the agent re-sends its effective history. Policies, side by
side in one run: no compaction; sliding windows keeping system messages and the last K units (K = 5, 10,
20); masking every observation but the last K (K = 5, 10, 20: what agent frameworks ship); StateComp with
the default router; and StateComp with the learned router, trained leave-one-family-out (on every family
but the one it is scored on). StateComp runs every `--every` assistant steps on the effective history, new
messages appended in between. Tokens re-sent = the sum over steps of the effective history's tokens
(extractive summaries cost no model tokens; their text is counted inside the history). Retention = the share
of identifiers, paths, numbers and error strings that the action at step t reuses from earlier observations
and that are still in the effective history at t. Every family is reported on its own (reduction pooled by
tokens within the family, retention the mean over its actions), then the macro average over families and
the figure pooled over all runs. Each StateComp call is checked: calls and results paired, never longer.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sparseread_mcp.compaction import CompactionSettings, Router, compact, load_file, validate
from sparseread_mcp.compaction.learned import family_runs, train_on_runs
from sparseread_mcp.compaction.router import salient
from sparseread_mcp.compaction.segments import segment
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
    every: int, checks: Checks, router: Router | None = None, settings: CompactionSettings | None = None
) -> Policy:
    def apply(history: Transcript, previous: Transcript | None) -> Transcript:
        steps = sum(m.role == "assistant" for m in history.messages)  # assistant turns so far
        if previous is not None:  # keep earlier replacements: what was effective plus what is new
            new = history.messages[_consumed(previous) :]
            history = Transcript(format=history.format, messages=[*previous.messages, *new])
        if steps % every:
            return history
        result = compact(history, router=router, settings=settings)
        checks.calls += 1
        checks.changed += any(p.committed for p in result.plan)
        checks.valid += validate(result.transcript) is None
        checks.not_longer += result.tokens_after <= result.tokens_before
        checks.shorter += result.tokens_after < result.tokens_before
        return result.transcript

    return apply


def _consumed(effective: Transcript) -> int:
    """How many input messages the effective history already covers (summaries carry no position)."""
    positions = [int(str(m.raw["_position"])) for m in effective.messages if "_position" in m.raw]
    return max(positions) + 1 if positions else 0


def run(path: Path, policies: dict[str, Policy], counter: TokenCounter) -> dict[str, tuple[int, list[float]]]:
    transcript = load_file(path.read_text())
    for position, message in enumerate(transcript.messages):
        message.raw["_position"] = position  # lets StateComp know which messages are new
    steps = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    results: dict[str, tuple[int, list[float]]] = {}
    for name, policy in policies.items():
        total, retention, effective = 0, [], None
        for t in steps:
            history = Transcript(format=transcript.format, messages=transcript.messages[:t])
            effective = policy(history, effective)
            text = json.dumps([{k: v for k, v in m.raw.items() if k != "_position"} for m in effective.messages])
            total += counter.count(text)
            action = transcript.messages[t]
            earlier = " ".join(r for m in transcript.messages[:t] for _, r in m.results)
            used = {s for s in salient(" ".join(c.arguments for c in action.calls) + " " + action.text) if s in earlier}
            if used:
                retention.append(sum(1 for s in used if s in text) / len(used))
        results[name] = (total, retention)
    return results


Figures = dict[str, tuple[int, list[float]]]  # policy -> (tokens re-sent, retention per action)


def table(families: dict[str, Figures], names: list[str]) -> list[str]:
    """Per family, then macro and pooled: reduction vs none and retention, one column pair per policy."""
    head = f"{'family':<32}" + "".join(f"{name:>22}" for name in names)
    lines = [head, f"{'':<32}" + "".join(f"{'tokens  retention':>22}" for _ in names)]
    reductions: dict[str, list[float]] = {n: [] for n in names}
    retentions: dict[str, list[float]] = {n: [] for n in names}
    pooled: dict[str, tuple[int, list[float]]] = {n: (0, []) for n in names}
    for family, figures in families.items():
        row = f"{family:<32}"
        for name in names:
            total, kept = figures[name]
            reduction = total / figures["none"][0] - 1
            share = statistics.mean(kept) if kept else 1.0
            reductions[name].append(reduction)
            retentions[name].append(share)
            pooled[name] = (pooled[name][0] + total, pooled[name][1] + kept)
            row += f"{reduction:>+13.1%}{share:>9.1%}"
        lines.append(row)
    macro = f"{'macro (mean of families)':<32}"
    whole = f"{'pooled (all runs)':<32}"
    for name in names:
        macro += f"{statistics.mean(reductions[name]):>+13.1%}{statistics.mean(retentions[name]):>9.1%}"
        total, kept = pooled[name]
        whole += f"{total / pooled['none'][0] - 1:>+13.1%}{statistics.mean(kept) if kept else 1.0:>9.1%}"
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
        figures: Figures = {}
        for path in paths:
            for name, (total, retention) in run(path, policies, counter).items():
                before = figures.get(name, (0, []))
                figures[name] = (before[0] + total, before[1] + retention)
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
