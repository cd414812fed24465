"""A learned router: logistic regression on numpy over the default router's features.

Trained with class weights from labeled JSONL; its decision threshold is chosen on held-out data for
precision (compressing something still needed is the costly error), then mapped onto tau so that the
span gates work the same with either router.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError, IntentError
from .router import FEATURE_NAMES, features
from .segments import Unit, segment
from .transcript import load

TAU = 0.6


@dataclass(frozen=True, slots=True, kw_only=True)
class LearnedRouter:
    weights: tuple[float, ...]
    bias: float
    threshold: float
    precision: float  # on the validation split, at the threshold
    recall: float
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
