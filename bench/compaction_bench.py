"""History compaction on real agent runs: tokens re-sent over the run, and what later actions still find.

Not a test. Run:  python -m bench.compaction_bench [--data ../shared/data]

At every assistant step t the agent re-sends its effective history. Policies, side by side:
no compaction; sliding windows keeping system messages and the last K units (K = 5, 10, 20); masking all
observations but the last 10; and StateComp (ours), re-run on the effective history at each step.
Total tokens = the sum over steps of the effective history's tokens (extractive summaries cost no model
tokens; their text is counted inside the history). Retention = the share of identifiers, paths, numbers
and error strings that the action at step t reuses from earlier observations and that are still in the
effective history at t.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from sparseread_mcp.compaction import compact, load_file
from sparseread_mcp.compaction.router import salient
from sparseread_mcp.compaction.segments import segment
from sparseread_mcp.compaction.transcript import Message, Transcript
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


def statecomp(history: Transcript, previous: Transcript | None) -> Transcript:
    if previous is not None:  # keep earlier replacements: compact what was effective plus what is new
        new = history.messages[_consumed(previous) :]
        history = Transcript(format=history.format, messages=[*previous.messages, *new])
    return compact(history).transcript


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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    counter = TokenCounter()
    policies: dict[str, Policy] = {
        "none": lambda h, _p: h,
        "window K=5": window(5),
        "window K=10": window(10),
        "window K=20": window(20),
        "mask all but 10": mask(10),
        "statecomp": statecomp,
    }
    files = sorted(p for p in (args.data / "trajectories").glob("*/*.jsonl"))
    totals = {name: 0 for name in policies}
    retentions: dict[str, list[float]] = {name: [] for name in policies}
    for path in files:
        for name, (total, retention) in run(path, policies, counter).items():
            totals[name] += total
            retentions[name].extend(retention)
    print(f"{len(files)} runs from {', '.join(sorted({p.parent.name for p in files}))}")
    print(
        f"{'policy':<18}{'tokens re-sent':>16}{'vs none':>10}{'retention':>11}  (mean over {len(retentions['none'])} "
        "actions that reuse earlier strings)"
    )
    for name in policies:
        share = statistics.mean(retentions[name]) if retentions[name] else 1.0
        print(f"{name:<18}{totals[name]:>16,}{totals[name] / totals['none'] - 1:>+10.1%}{share:>10.1%}")


if __name__ == "__main__":
    main()
