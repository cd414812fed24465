"""MiniLM-L6 on torch (sentence-transformers, in the calling process): the `semantic` extra's encoder until
session 29, kept here as the baseline of its numpy replacement (locate/bert.py), side by side in one run.

Not a test. Run:  python -m bench.torch_minilm [--data ../shared/data] [--repeats 5]
(needs sentence-transformers and torch, which the product no longer imports)

Printed per engine, each in a new process: the time to import and load the model, the median time to encode
16 and 64 passages of 500 characters of a real article (and one question), the process's peak memory, and
how far its vectors are from the other engine's.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sparseread_mcp.locate import dense

REPO = Path(__file__).resolve().parent.parent
ARTICLE = "articles/docs/University_of_Notre_Dame.txt"


class TorchEmbedder:
    """The `TextEncoder` interface over sentence-transformers, in this process (session 28's product code)."""

    _models: ClassVar[dict[str, Any]] = {}

    def __init__(self, model: str = dense.DEFAULT_MODEL) -> None:
        self.model_name = model
        self.source = str(dense.resolve_model(model))
        self.model_id = "torch-" + hashlib.sha256(self.source.encode()).hexdigest()[:12]

    def _model(self) -> Any:
        if self.source not in self._models:
            from sentence_transformers import SentenceTransformer  # heavy: torch

            self._models[self.source] = SentenceTransformer(self.source, device="cpu")
        return self._models[self.source]

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        cut = [text[: dense.MAX_TEXT_CHARS] for text in texts]
        vectors = self._model().encode(cut, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.encode([text])[0]
        return vector


def child(engine: str, data: Path, repeats: int) -> None:
    text = (data / ARTICLE).read_text(encoding="utf-8")
    passages = [text[i : i + 500] for i in range(0, 64 * 500, 500)]
    started = time.perf_counter()
    if engine == "torch":
        embedder: Any = TorchEmbedder()
        embedder._model()
        encode = embedder.encode
    else:
        from sparseread_mcp.locate.bert import bert_encoder

        model = bert_encoder(dense.resolve_model(dense.DEFAULT_MODEL))
        encode = model.encode
    loaded = time.perf_counter() - started
    timings: dict[str, float] = {"load": loaded}
    for label, texts in (
        ("1 question", ["when did the school start teaching engineering?"]),
        ("16 passages", passages[:16]),
        ("64 passages", passages),
    ):
        seconds = []
        for _ in range(repeats):
            started = time.perf_counter()
            vectors = encode(texts)
            seconds.append(time.perf_counter() - started)
        timings[label] = statistics.median(seconds)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"timings": timings, "peak_mb": peak, "vectors": np.asarray(vectors).tolist()}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.data, args.repeats)
        return
    if importlib.util.find_spec("sentence_transformers") is None:
        raise SystemExit("the baseline needs sentence-transformers and torch: pip install sentence-transformers")
    results = {}
    for engine in ("numpy", "torch"):
        command = [sys.executable, "-m", "bench.torch_minilm", "--data", str(args.data)]
        command += ["--repeats", str(args.repeats), "--child", engine]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True)
        results[engine] = json.loads(done.stdout.strip().splitlines()[-1])
    gap = np.abs(np.asarray(results["numpy"]["vectors"]) - np.asarray(results["torch"]["vectors"])).max()
    labels = list(results["numpy"]["timings"])
    print("| engine | " + " | ".join(f"{label} (s)" for label in labels) + " | peak MB |")
    print("|---" * (len(labels) + 2) + "|")
    for engine, result in results.items():
        cells = " | ".join(f"{result['timings'][label]:.3f}" for label in labels)
        print(f"| {engine} | {cells} | {result['peak_mb']:.0f} |")
    ratios = " / ".join(
        f"{label} {results['numpy']['timings'][label] / results['torch']['timings'][label]:.2f}" for label in labels
    )
    print(f"\nnumpy / torch: {ratios}; largest difference in a vector component: {gap:.1e}")


if __name__ == "__main__":
    main()
