"""Long plain prose is cut into smaller passages than documents with structure, so a fact-sized answer shows
more places of it; a document with headings or pages, or a short one, keeps the configured size."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

from sparseread_mcp import ReadEngine, ReadRequest, Settings
from sparseread_mcp.models import Intent

WORDS = "the river town kept its mill and bridge through every flood of the long wet century".split()  # noqa: SIM905 - a word list reads best as text


def paragraphs(rng: random.Random, count: int) -> list[str]:
    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(15)).capitalize() + "."

    return [" ".join(sentence() for _ in range(rng.randint(1, 3))) for _ in range(count)]


def sizes(engine: ReadEngine, path: str) -> list[int]:
    return [p.end - p.start for p in engine.open(path).passages]


def test_a_long_article_without_headings_is_cut_finer_than_a_contract_or_a_short_note(tmp_path: Path) -> None:
    rng = random.Random(7)
    body = paragraphs(rng, 120)
    (tmp_path / "article.txt").write_text("\n\n".join(body) + "\n")  # about 25,000 characters
    # The same text as numbered clauses, each under a heading of its own (`12. Bridge`).
    clauses = [f"{n}. {WORDS[n % len(WORDS)].title()}\n\n{text}" for n, text in enumerate(body, 1)]
    (tmp_path / "contract.txt").write_text("\n\n".join(clauses) + "\n")
    (tmp_path / "note.txt").write_text("\n\n".join(body)[:7_000] + "\n")
    engine = ReadEngine(Settings(roots=(tmp_path,), passage_chars=500))
    article, contract, note = (sizes(engine, f"{name}.txt") for name in ("article", "contract", "note"))
    assert statistics.median(article) <= 400 < statistics.median(note)
    assert statistics.median(contract) > statistics.median(article)


def test_a_fact_in_a_long_article_is_found_in_a_small_passage_anyone_can_verify(tmp_path: Path) -> None:
    rng = random.Random(11)
    body = paragraphs(rng, 120)
    body[70] += " The ferryman Osric Vell charged nine copper pennies for a crossing."
    text = "\n\n".join(body) + "\n"
    (tmp_path / "article.txt").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,), location="bm25"))
    pack = engine.read(
        "s", ReadRequest(target="article.txt", intent=Intent(goal="what did the ferryman Osric Vell charge"))
    )
    found = [item for item in pack.items if "nine copper pennies" in item.text]
    assert found and len(found[0].text) <= 2 * 400
    assert sum(len(item.text) for item in pack.items) <= 1_500
