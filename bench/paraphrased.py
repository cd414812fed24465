"""The long articles asked in other words: questions written without the text in view (issue #33).

SQuAD's annotators wrote each question looking at its paragraph, so the development articles' questions
reuse the gold sentence's words (a median question shares half its terms with it); a user's question, and
the held-out articles', need not. Two rewrites of all 300 questions, each written blind (the writer saw only
the questions: never the article, its gold or an answer), meaning, proper names and numbers kept:
- `data/articles_reworded.jsonl`: reworded as a user would ask it (a light rewording: the words that have
  no natural alternative stay);
- `data/articles_other_words.jsonl`: every common content word replaced by another or written around.
The gold spans stay the original question's. Not a test. Run:  python -m bench.paraphrased [--data DIR]
prints how many question terms each set's gold holds (median share, share of questions with none).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from sparseread_mcp.locate.terms import terms
from sparseread_mcp.select.calibrate import doc_file, gold_spans

REPO = Path(__file__).resolve().parent.parent
#: Column name -> the rewrite of the articles' questions it asks.
PARAPHRASED = {
    "articles reworded": REPO / "bench" / "data" / "articles_reworded.jsonl",
    "articles other words": REPO / "bench" / "data" / "articles_other_words.jsonl",
}


def paraphrases(path: Path) -> dict[str, str]:
    """qid -> the question in other words."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            out[str(raw["qid"])] = str(raw["paraphrase"])
    return out


def term_overlap(question: str, gold: str) -> float:
    """The share of the question's distinct terms (stemmed, stopwords out) that the gold text holds."""
    asked = set(terms(question))
    return len(asked & set(terms(gold))) / len(asked) if asked else 0.0


def _gold_text(folder: Path, raw: dict[str, Any]) -> str:
    """The gold evidence as text: the document's characters under the row's gold spans."""
    doc = doc_file(folder, raw)
    spans = gold_spans(raw)
    if not doc or not spans or not (folder / doc).exists():
        return ""
    text = (folder / doc).read_text(encoding="utf-8", errors="replace")
    return " ".join(text[s:e] for s, e in spans)


def overlaps(data: Path) -> dict[str, list[float]]:
    """Per set, each question's term overlap with its gold text."""
    rewrites = {name: paraphrases(path) for name, path in PARAPHRASED.items() if path.exists()}
    out: dict[str, list[float]] = {}
    for folder in ("articles", "contracts", "financebench", "tatqa", "fetaqa"):
        path = data / folder / "questions.jsonl"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            gold = _gold_text(data / folder, raw)
            if not gold:
                continue
            out.setdefault(folder, []).append(term_overlap(str(raw["question"]), gold))
            for name, reworded in rewrites.items():
                if folder == "articles" and str(raw["qid"]) in reworded:
                    out.setdefault(name, []).append(term_overlap(reworded[str(raw["qid"])], gold))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args(argv)
    print("| set | questions | median share of question terms in the gold | questions with none |")
    print("|---|---|---|---|")
    for name, shares in overlaps(args.data).items():
        none = sum(1 for s in shares if s == 0) / len(shares)
        print(f"| {name} | {len(shares)} | {statistics.median(shares):.0%} | {none:.0%} |")


if __name__ == "__main__":
    main()
