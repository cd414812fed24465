"""A learned router: logistic regression on numpy over the default router's features.

Trained with class weights from labeled JSONL, or from recorded agent runs grouped in families (one folder
per agent or domain); its decision threshold is chosen on held-out data for precision (compressing
something still needed is the costly error), then mapped onto tau so that the span gates work the same with
either router. A router remembers the families it was trained on, so that it is scored only on the others.

From runs, the features of an interaction are taken as the agent would have them at a compaction point
(only the history up to that point), and the label comes from the whole run: 1 (replaceable) when every
string of its result that any later action reuses survives in its summary, and no later action quotes a
whole line of it (an edit's old text copied from a file view needs the raw text, not a summary).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..deadline import checkpoint
from ..errors import ConfigError, IntentError
from .compactor import CompactionSettings
from .marks import salient
from .router import FEATURE_NAMES, History, features
from .segments import Unit, segment
from .summarize import unit_lines
from .transcript import MAX_CHARS, Transcript, load, load_file

TAU = 0.6


@dataclass(frozen=True, slots=True, kw_only=True)
class LearnedRouter:
    weights: tuple[float, ...]
    bias: float
    threshold: float
    precision: float  # on the validation split, at the threshold
    recall: float
    families: tuple[str, ...] = ()  # what it was trained on, when trained from runs
    name: str = "learned"

    def probability(self, vector: Sequence[float]) -> float:
        z = float(np.dot(self.weights, vector)) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def score(self, unit: Unit, state: Sequence[Unit], *, latest_turns: str = "") -> float:
        p = self.probability(features(unit, state, latest_turns=latest_turns).vector())
        # Map the chosen threshold onto tau: p >= threshold  <=>  score >= tau.
        if p < self.threshold:
            return TAU * p / self.threshold if self.threshold else 0.0
        return TAU + (1 - TAU) * (p - self.threshold) / max(1e-9, 1 - self.threshold)

    def save(self, path: Path) -> None:
        path.write_text(
            json.dumps(
                {
                    "features": list(FEATURE_NAMES),
                    "weights": list(self.weights),
                    "bias": self.bias,
                    "threshold": self.threshold,
                    "precision": self.precision,
                    "recall": self.recall,
                    "families": list(self.families),
                },
                indent=1,
            )
        )

    @classmethod
    def load(cls, path: Path) -> LearnedRouter:
        try:
            data = json.loads(path.read_text())
            if tuple(data["features"]) != FEATURE_NAMES:
                raise ConfigError(
                    f"{path} was trained on other features ({str(data['features'])[:120]}); train it again"
                )
            return cls(
                weights=tuple(data["weights"]),
                bias=float(data["bias"]),
                threshold=float(data["threshold"]),
                precision=float(data["precision"]),
                recall=float(data["recall"]),
                families=tuple(str(f) for f in data.get("families", [])),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"cannot load the router from {path} ({str(exc)[:120]}); train it again with `compact train`"
            ) from exc


def examples_from_jsonl(text: str) -> list[tuple[list[float], int]]:
    """Lines of `{"features": {...}, "label": 0|1}` or `{"messages": [...], "unit": k, "label": 0|1}`."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise IntentError(f"line {number} is not a JSON object ({type(exc).__name__}); send one per line") from exc
        if not isinstance(row, dict) or row.get("label") not in (0, 1):
            raise IntentError(f"line {number}: 'label' must be 0 (keep) or 1 (replaceable)")
        out.append((_vector(number, row), int(row["label"])))
    return out


def _vector(number: int, row: dict[str, object]) -> list[float]:
    if "features" in row:
        named = row["features"]
        try:
            return [float(named[name]) for name in FEATURE_NAMES]  # type: ignore[index]
        except (KeyError, TypeError, ValueError) as exc:
            raise IntentError(
                f"line {number}: 'features' must map each of {', '.join(FEATURE_NAMES)} to a number"
            ) from exc
    try:
        units = segment(load(row.get("messages")))
    except IntentError as exc:
        raise IntentError(f"line {number}: {exc}") from exc
    position = row.get("unit")
    if not isinstance(position, int) or not 0 <= position < len(units):
        raise IntentError(f"line {number}: 'unit' must be the index of one of its {len(units)} units")
    return features(units[position], units).vector()


#: A quoted line is at least this long once its line-number prefix and indentation are gone.
_MIN_QUOTE = 24
_LINE_NUMBER = re.compile(r"\s*\d+(?::|\t|\s{2,}|\|)")
_MAX_QUOTED_ARGS = 65_536
_MAX_LINES = 4_096

#: Runs read per family and files per run folder: what one training call may look at.
MAX_RUNS = 500
#: The latest interactions a compaction point protects (the default of CompactionSettings.keep_last).
_KEEP_LAST = CompactionSettings().keep_last


def family_runs(root: Path, *, leave_out: Sequence[str] = ()) -> dict[str, list[Path]]:
    """The run files (`*.jsonl`, `*.json` but manifests) in each subfolder of `root`, by family name."""
    if not root.is_dir():
        raise IntentError(f"{root} is not a folder of run families (one subfolder of runs per family)")
    families: dict[str, list[Path]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        if folder.name in leave_out:
            continue
        runs = sorted(
            p
            for p in folder.iterdir()
            if p.is_file() and not p.is_symlink() and p.suffix in (".jsonl", ".json") and p.name != "manifest.json"
        )[:MAX_RUNS]
        if runs:
            families[folder.name] = runs
    missing = sorted(set(leave_out) - {p.name for p in root.iterdir() if p.is_dir()})
    if missing:
        raise IntentError(f"no family named {', '.join(missing)[:200]} under {root}")
    if not families:
        raise IntentError(f"no runs under {root}: put each family's runs (JSON Lines) in its own subfolder")
    return families


def examples_from_runs(transcripts: Sequence[Transcript], *, every: int = 4) -> list[tuple[list[float], int]]:
    """Examples from recorded runs: at every `every`-th assistant turn, each interaction before the latest
    few, with the features the history up to that turn gives it and the label the whole run gives it."""
    out: list[tuple[list[float], int]] = []
    for transcript in transcripts:
        messages = transcript.messages
        steps = [i for i, m in enumerate(messages) if m.role == "assistant"][every::every]
        units = segment(transcript)
        # Everything an action at or after message i says: the suffix of one string, built once.
        actions = [
            " ".join(c.arguments for c in m.calls) + " " + m.text if m.role == "assistant" else "" for m in messages
        ]
        starts, offset = [], 0
        for action in actions:
            starts.append(offset)
            offset += len(action) + 1
        later = " ".join(actions)
        quoted: dict[str, int] = {}  # a line an action quotes -> the last message that quotes it
        for i, message in enumerate(messages):
            if message.role == "assistant":
                for line in _action_lines(message.text, [c.arguments for c in message.calls]):
                    quoted[line] = i
        labels: dict[int, int] = {}
        for unit in units:
            checkpoint()
            if unit.kind != "interaction":
                continue
            after = starts[unit.messages[-1] + 1] if unit.messages[-1] + 1 < len(messages) else len(later)
            used = [m for m in salient(unit.observation) if later.find(m, after) >= 0]
            summary = "\n".join(unit_lines(unit))
            end = unit.messages[-1]
            requoted = any(quoted.get(line, -1) > end and line not in summary for line in _lines(unit.observation))
            labels[unit.index] = int(all(m in summary for m in used) and not requoted)
        for t in steps:
            prefix = [u for u in units if u.messages[-1] < t]
            interactions = [u for u in prefix if u.kind == "interaction"]
            history = History(prefix)
            for unit in interactions[:-_KEEP_LAST] if _KEEP_LAST else interactions:
                out.append((features(unit, history).vector(), labels[unit.index]))
    return out


def _lines(text: str) -> set[str]:
    """Lines long enough to be quoted, without a leading line number or indentation."""
    out = set()
    for number, line in enumerate(text.split("\n")):
        if number >= _MAX_LINES:
            break
        match = _LINE_NUMBER.match(line)
        line = (line[match.end() :] if match else line).strip()
        if len(line) >= _MIN_QUOTE:
            out.add(line)
    return out


def _action_lines(text: str, arguments: Sequence[str]) -> set[str]:
    """The lines an action writes: in its text and in the string values of its (JSON) arguments."""
    out = _lines(text)
    for raw in arguments:
        values: list[object] = [raw]
        if len(raw) <= _MAX_QUOTED_ARGS:
            try:
                values = [json.loads(raw)]
            except (json.JSONDecodeError, RecursionError):
                values = [raw]
        for _ in range(8):  # nested arguments, a few levels deep
            nested: list[object] = []
            for value in values:
                if isinstance(value, str):
                    out |= _lines(value)
                elif isinstance(value, dict):
                    nested.extend(value.values())
                elif isinstance(value, list):
                    nested.extend(value)
            values = nested
    return out


def train_on_runs(
    root: Path, *, leave_out: Sequence[str] = (), every: int = 4, min_precision: float = 0.9
) -> LearnedRouter:
    """A router trained on every family under `root` but those left out; it records which it saw."""
    families = family_runs(root, leave_out=leave_out)
    transcripts = []
    for runs in families.values():
        for path in runs:
            if path.stat().st_size > 2 * MAX_CHARS:
                raise IntentError(f"{path} is over {2 * MAX_CHARS:,} characters; leave it out of training")
            transcripts.append(load_file(path.read_text(encoding="utf-8")))
    router = train(examples_from_runs(transcripts, every=every), min_precision=min_precision)
    return LearnedRouter(
        weights=router.weights,
        bias=router.bias,
        threshold=router.threshold,
        precision=router.precision,
        recall=router.recall,
        families=tuple(families),
    )


def train(
    examples: Sequence[tuple[Sequence[float], int]],
    *,
    min_precision: float = 0.9,
    validation: float = 0.25,
    epochs: int = 3000,
    rate: float = 0.5,
    seed: int = 7,
) -> LearnedRouter:
    """Class-weighted logistic regression; the threshold is the lowest one that keeps validation precision."""
    if len({label for _, label in examples}) < 2:
        raise IntentError("training needs examples of both labels (0 = keep, 1 = replaceable)")
    shuffled = list(examples)
    random.Random(seed).shuffle(shuffled)
    cut = max(1, int(len(shuffled) * (1 - validation)))
    fit, held = shuffled[:cut], shuffled[cut:] or shuffled[:cut]
    x = np.array([v for v, _ in fit], dtype=np.float64)
    y = np.array([label for _, label in fit], dtype=np.float64)
    positive = max(1.0, y.sum())
    weight = np.where(y == 1, len(y) / (2 * positive), len(y) / (2 * max(1.0, len(y) - positive)))
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(epochs):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        gradient = weight * (p - y)
        w -= rate * (x.T @ gradient) / len(y)
        b -= rate * float(gradient.mean())
    router = LearnedRouter(weights=tuple(float(v) for v in w), bias=b, threshold=0.5, precision=0.0, recall=0.0)
    probabilities = [(router.probability(v), label) for v, label in held]
    best = (0.99, 0.0, 0.0)
    for threshold in sorted({round(p, 4) for p, _ in probabilities}):
        chosen = [label for p, label in probabilities if p >= threshold]
        if not chosen:
            continue
        precision = sum(chosen) / len(chosen)
        recall = sum(chosen) / max(1, sum(label for _, label in probabilities))
        if precision >= min_precision and recall > best[2]:
            best = (threshold, precision, recall)
    return LearnedRouter(weights=router.weights, bias=b, threshold=best[0], precision=best[1], recall=best[2])
