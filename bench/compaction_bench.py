"""History compaction on real agent runs, closed loop, retention measured the strict way.

Not a test. Run:  python -m bench.compaction_bench [--data ../shared/data] [--every 4] [--out FILE.md]

Replay: at every assistant turn t the model is sent its history. A policy turns the history into what is
sent. Compactors run every `--every` assistant turns in a closed loop: what they returned is what the next
run starts from, with the messages recorded since appended. Masking (all but the last K tool results
replaced by a placeholder, what agent frameworks ship) and no compaction are applied to the whole history
at every turn; masking is also run in the compactors' closed loop (every N turns), which bounds what any
compactor run that often can save, since the results that arrive between two runs are sent raw.

Retention (strict): at turn t, the strings the assistant's message uses (its text and its calls' argument
values, strings and numbers: a click on element 1242 uses `1242`)
that are identifiers, paths, numbers or error names, and that first appeared in the run in a tool result
(not in the system prompt, the user's words or the agent's own earlier messages); the share of them still
present, as text, in what the model is sent at t (a compacted result's header, whose pointer is the end of
a call id, is left out first: a string only a pointer holds does not count as kept). The strings are found
by `used_strings` below, written apart from the compactor's own rules: any run of word, dot, slash, colon
and dash characters that holds an underscore, a dot, a slash, a digit, a capital inside it or is all capitals
(four characters or more), or a number of three digits or more; and each dotted or slashed part of such a
run that is one itself.
Per run: the mean over its turns that use such strings; per family: the mean over its runs and the worst
run; macro: the mean over families. Replay tokens: the sum over turns of the o200k tokens of the messages
sent (each message's text and calls, plus 4 tokens a message), and the reduction against no compaction.
Each compactor call is checked: calls and results paired, never longer.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.compaction_verdicts import (
    CLOSED_MASKS,
    CURVE,
    MASKS,
    Row,
    against_masking,
    leave_one_out,
    masking_left_out,
    one_mask_setting,
)
from sparseread_mcp.compaction import CompactionSettings, ElisionSettings, compact, elide, load_file, validate
from sparseread_mcp.compaction.elide import DEFAULT_CAUTION
from sparseread_mcp.compaction.learned import family_runs
from sparseread_mcp.compaction.segments import argument_strings
from sparseread_mcp.compaction.transcript import Message, Transcript
from sparseread_mcp.tokens import TokenCounter

REPO = Path(__file__).resolve().parent.parent
Policy = Callable[[Transcript, Transcript | None], Transcript]
_RUN = re.compile(r"[\w./:-]+")
#: A shortened result's header names its full text by the end of a call id (`full text: dQk4`): a string
#: that only a pointer holds is not one the model reads, so headers are left out before retention is counted.
_HEADER = re.compile(r"\[compacted(?: tool result)?:[^\]\n]*\]")


def used_strings(text: str) -> set[str]:
    """Identifiers, paths, numbers and error names in `text` (see the module's docstring)."""
    out: set[str] = set()
    for match in _RUN.finditer(text):
        token = match.group().strip("./:-")
        if _strict(token):
            out.add(token)
        for part in re.split(r"[./:]", token):
            if part != token and _strict(part):
                out.add(part)
    return out


def _strict(token: str) -> bool:
    if len(token) < 3:
        return False
    digits = sum(c.isdigit() for c in token)
    letters = sum(c.isalpha() for c in token)
    if not letters:
        return digits >= 3
    if len(token) < 4:
        return False
    return bool(
        digits
        or "_" in token.strip("_")
        or "." in token
        or "/" in token
        or (token.isupper() and letters >= 4)
        or (any(c.isupper() for c in token[1:]) and any(c.islower() for c in token))
    )


def sent_text(messages: list[Message]) -> str:
    """What the model reads: message texts and call arguments (raw and with their strings unescaped)."""
    parts: list[str] = []
    for m in messages:
        parts.append(m.text)
        for call in m.calls:
            parts.append(call.name)
            parts.append(call.arguments)
            parts.append(argument_strings(call.arguments))
    return "\n".join(parts)


def _own_text(message: Message) -> str:
    """The text a message adds to the run (a tool result's text, or a message's words and arguments)."""
    return sent_text([message])


def _action_text(message: Message) -> str:
    """What an assistant turn writes: its words and its calls' argument values (argument names come from the
    tools' schemas, which the model is given apart from the history)."""
    return "\n".join([message.text, *(argument_strings(c.arguments) for c in message.calls)])


def strict_uses(transcript: Transcript) -> dict[int, set[str]]:
    """Per assistant turn, the strings it uses that first appeared in an earlier tool result."""
    first: dict[str, int] = {}  # string -> message where it first appears (as text)
    texts = [_own_text(m) for m in transcript.messages]
    uses: dict[int, set[str]] = {}
    for t, message in enumerate(transcript.messages):
        if message.role != "assistant" or t == 0:
            continue
        counted = set()
        for string in used_strings(_action_text(message)):
            if string not in first:
                first[string] = next((i for i, x in enumerate(texts) if string in x), t)
            origin = first[string]
            if origin < t and transcript.messages[origin].results:
                counted.add(string)
        if counted:
            uses[t] = counted
    return uses


# --- policies ------------------------------------------------------------------------------------------------


def none(history: Transcript, _previous: Transcript | None) -> Transcript:
    return history


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
    valid: int = 0
    not_longer: int = 0


def closed_loop(every: int, checks: Checks, step: Callable[[Transcript], Transcript]) -> Policy:
    """Run `step` every `every` assistant turns on the effective history (earlier output + new messages)."""

    def apply(history: Transcript, previous: Transcript | None) -> Transcript:
        turns = sum(m.role == "assistant" for m in history.messages)
        if previous is not None:
            new = history.messages[_consumed(previous) :]
            history = Transcript(format=history.format, messages=[*previous.messages, *new])
        if turns % every:
            return history
        out = step(history)
        checks.calls += 1
        checks.valid += validate(out) is None
        checks.not_longer += len(json.dumps(out.dump())) <= len(json.dumps(history.dump()))
        return out

    return apply


def elision(settings: ElisionSettings) -> Callable[[Transcript], Transcript]:
    return lambda history: elide(history, settings)[0]


def spans(history: Transcript) -> Transcript:
    """The previous mechanism (sro_compact up to this change): spans of interactions become summaries."""
    return compact(history, settings=CompactionSettings()).transcript


def _consumed(effective: Transcript) -> int:
    positions = [int(str(m.raw["_position"])) for m in effective.messages if "_position" in m.raw]
    return max(positions) + 1 if positions else 0


# --- replay ----------------------------------------------------------------------------------------------------


@dataclass
class RunFigures:
    tokens: int = 0
    retention: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return statistics.mean(self.retention) if self.retention else 1.0


class Tokens:
    """o200k tokens of a message as the model reads it (its text, each call's name and arguments) plus 4 for
    the message's frame, cached by that text (most messages are sent many times)."""

    def __init__(self) -> None:
        self.counter = TokenCounter()
        self.cache: dict[str, int] = {}

    def of(self, messages: list[Message]) -> int:
        total = 0
        for m in messages:
            text = "\n".join([m.text, *(f"{c.name}({c.arguments})" for c in m.calls)])
            if text not in self.cache:
                self.cache[text] = self.counter.count(text) + 4
            total += self.cache[text]
        return total


def replay(path: Path, policies: dict[str, Policy], tokens: Tokens) -> dict[str, RunFigures]:
    transcript = load_file(path.read_text())
    for position, message in enumerate(transcript.messages):
        message.raw["_position"] = position
    uses = strict_uses(transcript)
    turns = [i for i, m in enumerate(transcript.messages) if m.role == "assistant" and i > 0]
    out: dict[str, RunFigures] = {}
    for name, policy in policies.items():
        figures, effective = RunFigures(), None
        for t in turns:
            effective = policy(Transcript(format=transcript.format, messages=transcript.messages[:t]), effective)
            figures.tokens += tokens.of(effective.messages)
            if t in uses:
                text = _HEADER.sub("\n", sent_text(effective.messages))
                figures.retention.append(sum(s in text for s in uses[t]) / len(uses[t]))
        out[name] = figures
    return out


# --- report ----------------------------------------------------------------------------------------------------


def summarize(families: dict[str, dict[str, list[RunFigures]]], names: list[str]) -> dict[str, dict[str, Row]]:
    """Per family and policy: tokens pooled over runs, retention mean over runs and the worst run."""
    table: dict[str, dict[str, Row]] = {}
    for family, per_policy in families.items():
        base = sum(r.tokens for r in per_policy["none"])
        table[family] = {
            name: Row(
                reduction=sum(r.tokens for r in per_policy[name]) / base - 1,
                mean=statistics.mean(r.mean for r in per_policy[name]),
                worst=min(r.mean for r in per_policy[name]),
            )
            for name in names
        }
    table["macro (mean of families)"] = {
        name: Row(
            reduction=statistics.mean(table[f][name].reduction for f in families),
            mean=statistics.mean(table[f][name].mean for f in families),
            worst=min(table[f][name].worst for f in families),
        )
        for name in names
    }
    return table


def markdown(table: dict[str, dict[str, Row]], names: list[str]) -> list[str]:
    lines = [
        "| policy | " + " | ".join(table) + " |",
        "|---|" + "---|" * len(table),
    ]
    for name in names:
        cells = [f"{r.reduction:+.1%} / {r.mean:.1%} / {r.worst:.1%}" for r in (table[f][name] for f in table)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _masked(last: int) -> Callable[[Transcript], Transcript]:
    masking = mask(last)
    return lambda history: masking(history, None)


def policies_for(every: int, checks: dict[str, Checks]) -> dict[str, Policy]:
    policies: dict[str, Policy] = {"none": none}
    for k in MASKS:
        policies[f"mask K={k}"] = mask(k)
    # Masking in the same closed loop as the compactors (every `every` turns): what any compactor run that
    # often can at most save, since the results that arrive between two runs are sent raw.
    for k in CLOSED_MASKS:
        checks.setdefault(f"mask K={k}", Checks())
        policies[f"mask K={k}, every {every} turns"] = closed_loop(every, checks[f"mask K={k}"], _masked(k))
    checks.setdefault("spans", Checks())
    policies["previous sro_compact (spans)"] = closed_loop(every, checks["spans"], spans)
    for label, caution in CURVE.items():
        name = f"elide caution={label}"
        checks.setdefault(name, Checks())
        policies[name] = closed_loop(every, checks[name], elision(ElisionSettings(caution=caution)))
    # A framework hook (LangGraph's pre_model_hook): the raw history compacted before every call, nothing kept.
    policies["elide default, hook (raw history every turn)"] = lambda history, _p: elide(history)[0]
    return policies


def measure(root: Path, every: int) -> tuple[dict[str, dict[str, Row]], list[str], dict[str, Checks], int]:
    checks: dict[str, Checks] = {}
    tokens = Tokens()
    runs = family_runs(root)
    families: dict[str, dict[str, list[RunFigures]]] = {}
    names: list[str] = []
    for family, paths in runs.items():
        per_policy: dict[str, list[RunFigures]] = {}
        for path in paths:
            policies = policies_for(every, checks)
            names = list(policies)
            for name, figures in replay(path, policies, tokens).items():
                per_policy.setdefault(name, []).append(figures)
        families[family] = per_policy
    return summarize(families, names), names, checks, sum(len(p) for p in runs.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--every", type=int, nargs="+", default=[4], help="compaction every N assistant turns (4)")
    parser.add_argument("--out", type=Path, help="also write the tables here (Markdown)")
    args = parser.parse_args()
    lines: list[str] = []
    for every in args.every:
        started = time.monotonic()
        table, names, checks, count = measure(args.data / "trajectories", every)
        families = [f for f in table if not f.startswith("macro")]
        default = f"elide caution={DEFAULT_CAUTION:g}"
        lines += [
            f"## Compaction every {every} assistant turns (closed loop)",
            "",
            f"{count} runs in {len(families)} families; wall {time.monotonic() - started:.0f} s. Each cell: "
            "replay tokens vs none / mean retention (strict) / worst run's retention. `mask K=0` (every result "
            "hidden) is the ceiling of any compactor that shortens only tool results.",
            "",
            *markdown(table, names),
            "",
            f"Default (`caution={DEFAULT_CAUTION}`) against masking at equal or higher retention:",
            "",
            *against_masking(table, default, every),
            "",
            "One setting for every run, as a user sets it: the most saving masking that meets the bar (>= 99% mean, "
            ">= 97% worst run) on every family, beside the default:",
            "",
            *one_mask_setting(table, default, every),
            "",
            "Leave one family out: the most saving point of the curve meeting the bar (>= 99% mean, >= 97% worst run) "
            "on the other families, scored on the held-out one:",
            "",
            *leave_one_out(table, families),
            "",
            "Masking calibrated the same way: K chosen on the other families, scored on the one left out:",
            "",
            *masking_left_out(table, default, every),
            "",
            *(f"- {n}: {c.calls} compactions, {c.valid} valid, {c.not_longer} never longer" for n, c in checks.items()),
            "",
        ]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
