"""Verdicts on the development claims set: the verdict matrix per set and macro-averaged, with baselines.

Run:  python -m bench.claims_bench [--data ../shared/data] [--claims bench/claims/dev_claims.jsonl] [--paraphrase]
      python -m bench.claims_bench --pointers   (pointers verified after a shift, an edit, a deletion)
(build the claims first with `python -m bench.claims_build`). `--paraphrase` checks, instead of the claims
as built, paraphrases derived from them by rule (`paraphrase`): what a model writes shares fewer words
with the source and in another order, so no mechanical verdict should decide it and the question is
whether the passage that decides it is shown.

Methods, side by side in the same run, on every set:
- `server`: `sro_read(action="verify")` through the engine (the product);
- `overlap`: the previous verifier (>= 60% of the claim's words and all of its numbers in one of the top
  three BM25 passages -> supported; the words without the numbers -> contradicted; else not_found);
- `grep`: every number of the claim (as written, separators removed) and >= 60% of its words inside one
  300-character window of the document -> supported, else not_found.
Figures: false claims called supported (target <= 1%), true claims called contradicted (<= 1%), true
claims supported (what the verdicts are worth), and the share of true/false verdicts whose items hold
the source window (>= 80% of its characters; target >= 90%), the same share among the claims left
`unverified` (the model decides those from the passages: target >= 90%), and the characters each answer
charges. Nothing here is calibrated or learned.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.locate.terms import terms
from sparseread_mcp.protocol.intents import query_for

REPO = Path(__file__).resolve().parent.parent
CLAIMS = REPO / "bench" / "claims" / "dev_claims.jsonl"
VERDICTS = ("supported", "contradicted", "unverified", "not_found")
_NUM = re.compile(r"\d[\d,]*(?:\.\d+)?")


def overlap_verdict(engine: ReadEngine, doc: str, claim: str) -> str:
    """The verifier before issue #14, kept as the baseline (word overlap and numbers)."""
    parsed = engine.open(doc)
    ranking = engine.locator.rank(parsed, query_for(Intent(goal=claim)))
    if not ranking:
        return "not_found"
    floor = ranking[0][1] * 0.5
    top = [i for i, score in ranking[:3] if score >= floor]
    claim_terms = set(terms(claim))
    numbers = {t for t in claim_terms if re.fullmatch(r"\d[\d.]*", t)}
    words = claim_terms - numbers
    verdict = "not_found"
    for index in top:
        text_terms = set(terms(parsed.text_of(parsed.passages[index])))
        share = len(words & text_terms) / len(words) if words else 1.0
        if share >= 0.6 and numbers <= text_terms:
            return "supported"
        if share >= 0.6 and numbers and verdict == "not_found":
            verdict = "contradicted"
    return verdict


def grep_verdict(text: str, claim: str) -> str:
    numbers = [n.replace(",", "") for n in _NUM.findall(claim)]
    words = set(terms(_NUM.sub(" ", claim)))
    flat = text.replace(",", "")
    anchors = [m.start() for m in re.finditer(re.escape(numbers[0]), flat)] if numbers else []
    if not numbers:
        return "not_found"
    for at in anchors[:200]:
        window = flat[max(0, at - 150) : at + 150]
        if all(n in window for n in numbers) and (not words or len(words & set(terms(window))) / len(words) >= 0.6):
            return "supported"
    return "not_found"


def holds_source(text: str, items: list[str], span: list[int] | None) -> bool:
    """Whether the items hold the claim's source window: >= 80% of its characters, or its text verbatim
    (whitespace aside) where the document repeats it (page headers, a sentence said twice)."""
    if span is None:
        return False
    start, end = span
    source = " ".join(text[start:end].split())
    if any(source in " ".join(item.split()) for item in items):
        return True
    covered = set()
    for item in items:
        at = text.find(item, max(0, start - len(item)))
        if at == -1:
            at = text.find(item)
        if at != -1:
            covered.update(range(max(start, at), min(end, at + len(item))))
    return len(covered) >= 0.8 * (end - start)


#: Words a paraphrase adds that a source seldom has, so a paraphrase's words are not a subset of the source's.
_FILLERS = ("reportedly", "per the document", "as stated", "notably", "in summary", "overall it says")
#: Generic words a restatement puts where the source had a specific one (a synonym the source lacks).
_GENERIC = ("amount", "figure", "reported", "total", "company", "value", "level", "recorded", "party", "terms")
#: Claims whose paraphrase keeps its truth: the true ones, and the false ones whose false part is a number.
_PARAPHRASED = {"reformatted": "true", "two_sentences": "true", "table_row": "true", "number": "false"}
_PARAPHRASED |= {"table_row_number": "false"}
_PLAIN_NUMBER = re.compile(r"\$?(\d{1,3}(?:,\d{3})+|\d{5,})(?:\.\d+)?")


def paraphrase(claim: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The claim as a model might restate it, by rule: half of its words (never a number) dropped or put as
    a generic word, a large number written with a scale word (`12,345` -> `12.3 thousand`), the claim's
    thirds in another order and a filler added. Same span and truth: a model decides it from the passage."""
    if claim["kind"] not in _PARAPHRASED:
        return None
    kept: list[str] = []
    for word in claim["claim"].split():
        plain = _PLAIN_NUMBER.fullmatch(word.rstrip(".,;:"))
        if plain and rng.random() < 0.5:
            value = float(plain.group(0).lstrip("$").replace(",", ""))
            kept.append(f"{value / 1000:.1f} thousand")
        elif any(ch.isdigit() for ch in word) or rng.random() >= 0.5:
            kept.append(word)
        elif rng.random() < 0.5:
            kept.append(rng.choice(_GENERIC))
    if sum(not any(ch.isdigit() for ch in w) for w in kept) < 3:
        return None
    third = max(1, len(kept) // 3)
    parts = [kept[:third], kept[third : 2 * third], kept[2 * third :]]
    rng.shuffle(parts)
    restated = [*parts[0], rng.choice(_FILLERS), *parts[1], *parts[2]]
    return {**claim, "claim": " ".join(restated), "kind": f"para_{claim['kind']}"}


def paraphrased(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rng = random.Random(30)
    return [p for c in claims if (p := paraphrase(c, rng)) is not None]


def run(data: Path, claims: list[dict[str, Any]]) -> dict[str, dict[str, Counter[str]]]:
    roots = tuple(sorted({data / c["set"] for c in claims}))
    engine = ReadEngine(Settings(roots=(data,)))
    del roots
    table: dict[str, dict[str, Counter[str]]] = {}
    texts: dict[str, str] = {}
    for n, claim in enumerate(claims):
        doc = claim["doc"]
        text = texts.setdefault(doc, (data / doc).read_text(errors="replace"))
        pack = engine.read(f"claim-{n}", ReadRequest(target=doc, action="verify", intent=Intent(goal=claim["claim"])))
        assert pack.verification is not None
        verdicts = {
            "server": pack.verification.status,
            "overlap": overlap_verdict(engine, doc, claim["claim"]),
            "grep": grep_verdict(text, claim["claim"]),
        }
        table.setdefault("server-tokens", {}).setdefault(claim["set"], Counter())[str(pack.tokens)] += 1
        table.setdefault("server-chars", {}).setdefault(claim["set"], Counter())[str(pack.exposure.payload_chars)] += 1
        kinds = table.setdefault("server-by-kind", {}).setdefault(claim["kind"], Counter())
        kinds[pack.verification.status] += 1
        for method, verdict in verdicts.items():
            counts = table.setdefault(method, {}).setdefault(claim["set"], Counter())
            counts[f"{claim['truth']}:{verdict}"] += 1
            counts[claim["truth"]] += 1
        if claim["truth"] != "absent":
            held = holds_source(text, [i.text for i in pack.items], claim["span"])
            table["server"][claim["set"]]["decided"] += 1
            table["server"][claim["set"]]["held"] += held
            if pack.verification.status == "unverified":
                table["server"][claim["set"]]["undecided"] += 1
                table["server"][claim["set"]]["undecided held"] += held
            shown = bm25_passages(engine, doc, claim["claim"])
            base = table.setdefault("bm25-baseline", {}).setdefault(claim["set"], Counter())
            base_held = holds_source(text, shown, claim["span"])
            base["decided"] += 1
            base["held"] += base_held
            base["chars"] += sum(len(t) for t in shown)
            if pack.verification.status == "unverified":
                base["undecided"] += 1
                base["undecided held"] += base_held
    return table


def bm25_passages(engine: ReadEngine, doc: str, claim: str, top: int = 3) -> list[str]:
    """The plainest way to show what decides a claim: BM25's best `top` passages for its words."""
    parsed = engine.open(doc)
    ranking = engine.locator.rank(parsed, query_for(Intent(goal=claim)))
    return [parsed.text_of(parsed.passages[i]) for i, _ in ranking[:top]]


#: What is done to a file after a pointer into it was made, and the status each should get.
EDITS = {"shifted": "moved", "shifted+edited": "changed", "deleted": "gone"}


def pointer_run(data: Path, claims: list[dict[str, Any]], per_set: int = 10, per_doc: int = 6) -> None:
    """Pointers to passages of the claims' documents verified after the file shifted by three lines (moved),
    shifted and had one word of the passage edited (changed), or lost the passage (gone): status counts per
    set and edit, each expected status's share, per set and macro."""
    import shutil
    import tempfile

    from sparseread_mcp.evidence import pointer_for
    from sparseread_mcp.files.anchors import parse_target
    from sparseread_mcp.protocol.pointers import verify_pointer

    docs: dict[str, list[str]] = {}
    for claim in claims:
        listed = docs.setdefault(claim["set"], [])
        if claim["doc"] not in listed and len(listed) < per_set:
            listed.append(claim["doc"])
    shares: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        engine = ReadEngine(Settings(roots=(root,)))
        for name, paths in sorted(docs.items()):
            counts: Counter[str] = Counter()
            for doc in paths:
                copy = root / Path(doc).name
                shutil.copyfile(data / doc, copy)
                original = copy.read_text()
                old = engine.open(copy.name)
                usable = [p for p in old.passages if p.end - p.start >= 80]
                for passage in usable[:: max(1, len(usable) // per_doc)][:per_doc]:
                    target = parse_target(pointer_for(old, passage.start, passage.end))
                    text = original[passage.start : passage.end]
                    word = next((w for w in sorted(set(re.findall(r"[A-Za-z]{5,}", text)), key=len)), None)
                    variants = {
                        "shifted": "Inserted one.\nInserted two.\nInserted three.\n" + original,
                        "shifted+edited": "Inserted one.\nInserted two.\nInserted three.\n"
                        + original[: passage.start]
                        + (text.replace(word, "EDITED", 1) if word else text + " EDITED")
                        + original[passage.end :],
                        "deleted": original[: passage.start] + original[passage.end :],
                    }
                    for edit, content in variants.items():
                        copy.write_text(content)
                        current = engine.open(copy.name)
                        status = verify_pointer(target, old, current, engine.revisions.revs_of(current.artifact)).status
                        counts[f"{edit}:{status}"] += 1
                        counts[edit] += 1
                copy.write_text(original)
            shares[name] = {edit: 100.0 * counts[f"{edit}:{want}"] / counts[edit] for edit, want in EDITS.items()}
            print(f"  {name:13} " + "  ".join(f"{k}={v}" for k, v in sorted(counts.items()) if ":" in k))
    print(f"{'set':13}" + "".join(f"{f'{e} -> {w} %':>28}" for e, w in EDITS.items()))
    for name, row in shares.items():
        print(f"{name:13}" + "".join(f"{row[e]:>28.1f}" for e in EDITS))
    print(f"{'MACRO':13}" + "".join(f"{sum(r[e] for r in shares.values()) / len(shares):>28.1f}" for e in EDITS))


def rates(c: Counter[str]) -> dict[str, float]:
    def share(part: str, whole: str) -> float:
        return 100.0 * c[part] / c[whole] if c[whole] else 0.0

    return {
        "false->supported %": share("false:supported", "false"),
        "true->contradicted %": share("true:contradicted", "true"),
        "true->supported %": share("true:supported", "true"),
        "absent->supported %": share("absent:supported", "absent"),
        "passage held %": share("held", "decided") if c["decided"] else float("nan"),
        "unverified held %": share("undecided held", "undecided") if c["undecided"] else float("nan"),
    }


def report(table: dict[str, dict[str, Counter[str]]]) -> None:
    by_kind = table.pop("server-by-kind", {})
    spent = table.pop("server-tokens", {})
    charged = table.pop("server-chars", {})
    baseline = table.pop("bm25-baseline", {})
    sets = sorted({s for per_set in table.values() for s in per_set})
    print("Verdict matrix (rows: ground truth, columns: verdict), server")
    for name in sets:
        c = table["server"][name]
        print(f"  {name}")
        print("    " + " " * 8 + "".join(f"{v:>14}" for v in VERDICTS))
        for truth in ("true", "false", "absent"):
            print(f"    {truth:8}" + "".join(f"{c[f'{truth}:{v}']:>14}" for v in VERDICTS) + f"   (n={c[truth]})")
    keys = list(rates(Counter()).keys())
    print()
    print(f"{'method':9} {'set':13}" + "".join(f"{k:>22}" for k in keys))
    for method, per_set in table.items():
        rows = {name: rates(per_set[name]) for name in sets}
        for name in sets:
            print(f"{method:9} {name:13}" + "".join(f"{rows[name][k]:>22.1f}" for k in keys))
        macro = {k: sum(rows[s][k] for s in sets) / len(sets) for k in keys}
        print(f"{method:9} {'MACRO':13}" + "".join(f"{macro[k]:>22.1f}" for k in keys))
    print()
    for name in sets:
        sizes = sorted(int(k) for k, n in spent.get(name, Counter()).items() for _ in range(n))
        if sizes:
            print(f"server response tokens, {name}: median {sizes[len(sizes) // 2]}, max {sizes[-1]}")
    for name in sets:
        chars = sorted(int(k) for k, n in charged.get(name, Counter()).items() for _ in range(n))
        if chars:
            mean = statistics.fmean(chars)
            print(f"server chars per answer, {name}: median {chars[len(chars) // 2]}, mean {mean:.0f}, max {chars[-1]}")
    print()
    print("baseline: BM25's top 3 passages of the claim (no verdict), the same claims")
    rows = {name: rates(baseline.get(name, Counter())) for name in sets}
    for name in sets:
        c = baseline.get(name, Counter())
        mean = c["chars"] / c["decided"] if c["decided"] else float("nan")
        held, undecided = rows[name]["passage held %"], rows[name]["unverified held %"]
        print(f"  {name:13} passage held {held:5.1f} %  server-unverified held {undecided:5.1f} %  chars {mean:.0f}")
    macro = {k: sum(rows[s][k] for s in sets) / len(sets) for k in ("passage held %", "unverified held %")}
    held, undecided = macro["passage held %"], macro["unverified held %"]
    print(f"  {'MACRO':13} passage held {held:5.1f} %  server-unverified held {undecided:5.1f} %")
    print()
    print("server verdicts by kind of claim (all sets)")
    for kind, c in sorted(by_kind.items()):
        print(f"  {kind:17}" + "".join(f"{v}={c[v]:<5}" for v in VERDICTS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument("--paraphrase", action="store_true", help="check rule-made paraphrases of the claims")
    parser.add_argument("--pointers", action="store_true", help="verify pointers after shifts, edits, deletions")
    args = parser.parse_args(argv)
    claims = [json.loads(line) for line in args.claims.read_text().splitlines() if line]
    if args.pointers:
        started = time.perf_counter()
        pointer_run(args.data.resolve(), claims)
        print(f"pointers verified in {time.perf_counter() - started:.0f} s")
        return 0
    if args.paraphrase:
        claims = paraphrased(claims)
    started = time.perf_counter()
    table = run(args.data.resolve(), claims)
    print(f"{len(claims)} claims in {time.perf_counter() - started:.0f} s")
    report(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
