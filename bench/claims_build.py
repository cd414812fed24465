"""Build the development claims set for `verify` by rule from the gold evidence in ../shared/data.

Run:  python -m bench.claims_build [--data ../shared/data] [--per-set 40]  (writes bench/claims/dev_claims.jsonl)

For each set (tatqa, financebench, contracts) it takes sentences of the human-annotated evidence and,
from a window of words around a number (or the whole sentence), writes:
- a true claim: the window with its numbers in another format (`1,577` <-> `1577`, `five (5)` -> `5`);
- a false claim: one number changed to a value that appears nowhere in the document, else the polarity
  flipped (increase/decrease, shall/shall not, ...), else a party swapped for another name of the document;
- absent claims: true claims of another set's document, checked against this set's documents.
Each claim records the character span of its source window, so the benchmark can tell whether the
deciding passage was returned. Deterministic (seeded); the output is data and stays out of the package.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

from sparseread_mcp.locate.terms import STOPWORDS
from sparseread_mcp.protocol.claims import tokens

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "claims" / "dev_claims.jsonl"
SETS = ("tatqa", "financebench", "contracts")
_SENTENCE = re.compile(r"(?:[^.;\n]|[.;](?!\s|$)|\n(?!\s*\n))+[.;]?")
_NUMBER = re.compile(r"^\(?\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?%?[.,;:]?$")
_SPELLED = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|twelve|thirty|sixty|ninety) \((\d+)\)")
_POLARITY = [
    ("increased", "decreased"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("higher", "lower"),
    ("more", "less"),
    ("gain", "loss"),
    ("shall not", "shall"),
    ("shall", "shall not"),
    ("will", "will not"),
    ("may", "may not"),
    ("is", "is not"),
    ("was", "was not"),
]
_MONTHS = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October"}
_MONTHS |= {"November", "December", "The", "This", "In", "Our", "We", "Company", "Table", "Total"}


def spans_of(record: dict[str, Any]) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in record.get("gold_spans_merged") or []]


def doc_path(name: str, record: dict[str, Any]) -> str:
    return record.get("doc_file") or f"docs/{record['doc_id']}.txt"


def sentences(doc: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    for match in _SENTENCE.finditer(doc, start, end):
        a, b = match.span()
        text = doc[a:b]
        a += len(text) - len(text.lstrip())
        b = a + len(doc[a:b].rstrip())
        words = doc[a:b].split()
        if len(words) >= 8 and 50 <= b - a <= 600:
            out.append((a, b))
    return out


def window(doc: str, start: int, end: int) -> tuple[int, int, list[str]]:
    """Words around the first number (or the first 25 words), with their span in the document."""
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", doc[start:end])]
    at = next((i for i, w in enumerate(words) if _NUMBER.match(w[2]) and not _is_year(w[2])), None)
    lo, hi = (max(0, at - 10), min(len(words), at + 6)) if at is not None else (0, min(len(words), 25))
    chosen = words[lo:hi]
    return start + chosen[0][0], start + chosen[-1][1], [w for _, _, w in chosen]


def _is_year(word: str) -> bool:
    digits = word.strip("().,;:$%")
    return bool(re.fullmatch(r"(19|20)\d\d", digits))


def reformat(word: str) -> str:
    """The same number, written another way: thousands separators added or removed."""
    m = _NUMBER.match(word)
    if not m or _is_year(word):
        return word
    core = m.group(1)
    new = core.replace(",", "") if "," in core else (f"{int(core):,}" if len(core) > 3 else core)
    return word.replace(core, new, 1)


def true_claim(words: list[str]) -> str:
    text = " ".join(reformat(w) for w in words).rstrip(".,;:")
    return _SPELLED.sub(lambda m: m.group(2), text)


def inflected(words: list[str], rng: random.Random) -> list[str]:
    """One plural word made singular (words up to inflection), a scale converted where one follows."""
    out = list(words)
    plural = [i for i, w in enumerate(out) if re.fullmatch(r"[a-z]{4,}s", w) and not w.endswith(("ss", "us", "is"))]
    if plural:
        i = rng.choice(plural)
        out[i] = out[i][:-1]
    for i, w in enumerate(out[:-1]):
        m = re.fullmatch(r"(\$?)(\d{1,3}(?:,\d{3})+|\d{4,})", w)
        if m and out[i + 1].rstrip(".,;") == "million" and not _is_year(w):
            value = int(m.group(2).replace(",", ""))
            out[i : i + 2] = [f"{m.group(1)}{value / 1000:.3f}", "billion" + out[i + 1][len("million") :]]
            break
    return out


def two_sentences(doc: str, first: tuple[int, int], second: tuple[int, int]) -> tuple[str, list[int]] | None:
    """The end of one sentence and the start of the next, as one claim (it needs both)."""
    a = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", doc[first[0] : first[1]])][-7:]
    b = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", doc[second[0] : second[1]])][:7]
    if len(a) < 5 or len(b) < 5:
        return None
    text = " ".join(w for _, _, w in a).rstrip(".;") + " and " + " ".join(w for _, _, w in b).rstrip(".,;:")
    return text, [first[0] + a[0][0], second[0] + b[-1][1]]


def table_row(doc: str, span: tuple[int, int]) -> tuple[list[str], str] | None:
    """`<row label> in <year> was <value>` from a CSV table row and the header line that names the years."""
    row = next(csv.reader([doc[span[0] : span[1]]]), [])
    top = doc.rfind("# Table", 0, span[0])
    lines = [next(csv.reader([line]), []) for line in doc[top : span[0]].splitlines()]
    header = next((cells for cells in lines if sum(_is_year(c) for c in cells) >= 2), None)
    if top == -1 or header is None or len(row) != len(header) or not row[0].strip():
        return None
    columns = [i for i, c in enumerate(header) if _is_year(c) and _NUMBER.match(row[i].replace(" ", ""))]
    if not columns:
        return None
    i = columns[0]
    return [*row[0].split(), "in", header[i], "was", row[i].replace(" ", "")], row[i]


def change_number(words: list[str], doc_values: set[float], rng: random.Random) -> str | None:
    places = [i for i, w in enumerate(words) if _NUMBER.match(w) and not _is_year(w)]
    rng.shuffle(places)
    for i in places:
        m = _NUMBER.match(words[i])
        assert m is not None
        core = m.group(1) + (m.group(2) or "")
        value = float(core.replace(",", ""))
        decimals = len(m.group(2) or "") - 1 if m.group(2) else 0
        for factor in rng.sample([1.17, 0.83, 1.31, 0.7, 1.5, 2.0], 6):
            new = round(value * factor, max(decimals, 0))
            if new == value or new in doc_values or new == 0:
                continue
            text = f"{new:,.{decimals}f}" if "," in core else f"{new:.{decimals}f}"
            changed = [*words[:i], words[i].replace(core, text, 1), *words[i + 1 :]]
            return " ".join(changed).rstrip(".,;:")
    return None


def flip_polarity(words: list[str]) -> str | None:
    text = " " + " ".join(words) + " "
    for old, new in _POLARITY:
        if f" {old} " in text and not (old == "shall" and " shall not " in text):
            return text.replace(f" {old} ", f" {new} ", 1).strip().rstrip(".,;:")
    return None


def swap_party(words: list[str], doc: str, rng: random.Random) -> str | None:
    """One name of the claim replaced by another frequent name of the document (a name, not a stopword)."""
    names = [i for i, w in enumerate(words[1:], 1) if re.fullmatch(r"[A-Z][a-z]{3,}", w) and w not in _MONTHS]
    if not names:
        return None
    counts: dict[str, int] = {}
    for m in re.finditer(r"(?<=[a-z,] )[A-Z][a-z]{3,}\b", doc[:400_000]):
        counts[m.group()] = counts.get(m.group(), 0) + 1
    present = set(words)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    others = [w for w, _ in ranked if w not in present and w not in _MONTHS and w.casefold() not in STOPWORDS][:8]
    if not others:
        return None
    i = rng.choice(names)
    return " ".join([*words[:i], rng.choice(others), *words[i + 1 :]]).rstrip(".,;:")


def build(data: Path, per_set: int, seed: int = 14) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    claims: list[dict[str, Any]] = []
    true_by_set: dict[str, list[dict[str, Any]]] = {}
    docs_by_set: dict[str, list[str]] = {}
    for name in SETS:
        records = [json.loads(line) for line in (data / name / "questions.jsonl").read_text().splitlines() if line]
        rng.shuffle(records)
        per_doc: dict[str, int] = {}
        made = 0
        docs_by_set[name] = sorted({doc_path(name, r) for r in records})
        for record in records:
            if made >= per_set:
                break
            rel = doc_path(name, record)
            if per_doc.get(rel, 0) >= 3:
                continue
            doc = (data / name / rel).read_text(errors="replace")
            candidates = [s for a, b in spans_of(record) for s in sentences(doc, a, b)]
            if not candidates:
                continue
            start, end, words = window(doc, *rng.choice(candidates))
            if len(words) < 6:
                continue
            values = {t.number.value for t in tokens(doc) if t.number} | {
                float(m.replace(",", "")) for m in re.findall(r"\d[\d,]*(?:\.\d+)?", doc) if m.replace(",", "")
            }
            base = {"set": name, "doc": f"{name}/{rel}", "span": [start, end], "source": " ".join(words)}
            true = {**base, "claim": true_claim(words), "truth": "true", "kind": "reformatted"}
            claims.append(true)
            true_by_set.setdefault(name, []).append(true)
            if (variant := true_claim(inflected(words, rng))) != true["claim"]:
                claims.append({**base, "claim": variant, "truth": "true", "kind": "inflected"})
            pairs = [(a, b) for a, b in itertools.pairwise(candidates) if not doc[a[1] : b[0]].strip()]
            if pairs and (joined := two_sentences(doc, *rng.choice(pairs))) is not None:
                claims.append({**base, "claim": joined[0], "span": joined[1], "truth": "true", "kind": "two_sentences"})
            for row_span in record.get("gold_row_spans") or []:
                if (row := table_row(doc, (int(row_span[0]), int(row_span[1])))) is not None:
                    row_words, _ = row
                    row_base = {**base, "span": [int(row_span[0]), int(row_span[1])], "source": " ".join(row_words)}
                    claims.append({**row_base, "claim": " ".join(row_words), "truth": "true", "kind": "table_row"})
                    if (false_row := change_number(row_words, values, rng)) is not None:
                        claims.append({**row_base, "claim": false_row, "truth": "false", "kind": "table_row_number"})
                    break
            for kind, maker in (
                ("number", lambda w=words, v=values: change_number(w, v, rng)),
                ("polarity", lambda w=words: flip_polarity(w)),
                ("party", lambda w=words, d=doc: swap_party(w, d, rng)),
            ):
                false = maker()
                if false:
                    claims.append({**base, "claim": false, "truth": "false", "kind": kind})
                    break
            per_doc[rel] = per_doc.get(rel, 0) + 1
            made += 1
    for name in SETS:  # absent: another set's true claim against one of this set's documents
        pool = [c for other, cs in true_by_set.items() if other != name for c in cs]
        for claim in rng.sample(pool, min(len(pool), per_set // 2)):
            doc = rng.choice(docs_by_set[name])
            claims.append(
                {
                    "set": name,
                    "doc": f"{name}/{doc}",
                    "span": None,
                    "source": claim["source"],
                    "claim": claim["claim"],
                    "truth": "absent",
                    "kind": "absent",
                }
            )
    return claims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--per-set", type=int, default=40)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seed", type=int, default=14, help="another seed draws another sample of sentences")
    args = parser.parse_args(argv)
    claims = build(args.data, args.per_set, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in claims))
    counts: dict[tuple[str, str], int] = {}
    for c in claims:
        counts[(c["set"], c["truth"])] = counts.get((c["set"], c["truth"]), 0) + 1
    print(f"{len(claims)} claims -> {args.out}")
    for (name, truth), n in sorted(counts.items()):
        print(f"  {name:13} {truth:7} {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
