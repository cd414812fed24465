"""A follow-up refine favours the goal's words that nothing delivered yet contains: the agent asks again
because what it read did not answer, so the next passages should not be more of the same match."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import item_spans

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings
from sparseread_mcp.models import EvidencePack, Slot
from sparseread_mcp.protocol import actions

GOAL = "Which notice period applies to a renewal of the licence?"
FILLER = "river harvest council market winter bridge ledger festival copper quarry railway orchard".split()  # noqa: SIM905


def document() -> tuple[str, str]:
    """Ten paragraphs that name most of the goal's words, and far from them one that names only the rest:
    alone it scores a little below each of the ten."""
    rng = random.Random(11)
    paragraphs = []
    for k in range(60):
        words = " ".join(rng.choice(FILLER) for _ in range(60))
        if k % 6 == 0:
            words = f"The notice period for a renewal is in schedule {k}. " + words
        paragraphs.append(words + ".")
    answer = "The licence may be extended once, on terms the parties agree in writing."
    paragraphs[57] = answer + " " + " ".join(rng.choice(FILLER) for _ in range(50)) + "."
    return "\n\n".join(paragraphs) + "\n", answer


def collect_then_refine(tmp_path: Path, refines: int) -> tuple[str, list[EvidencePack]]:
    text, _ = document()
    (tmp_path / "terms.txt").write_text(text)
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    intent = Intent(goal=GOAL, slots=[Slot(id="answer", question=GOAL)])
    packs = [engine.read("s", ReadRequest(target="terms.txt", action="collect", intent=intent))]
    packs += [engine.read("s", ReadRequest(target="terms.txt", action="refine")) for _ in range(refines)]
    return text, packs


def reached(text: str, packs: list[EvidencePack], answer: str) -> int | None:
    """The read (0 = the collect) whose items first hold the answer, else None."""
    start = text.index(answer)
    for k, pack in enumerate(packs):
        if any(s <= start < e for s, e in item_spans(text, [pack])):
            return k
    return None


def test_a_refine_reaches_the_passage_with_the_unread_words_first(tmp_path: Path) -> None:
    text, packs = collect_then_refine(tmp_path, refines=1)
    _, answer = document()
    assert reached(text, packs, answer) == 1
    assert all(p.gate.decision == "sparse" for p in packs)


def test_without_it_the_refine_sends_more_of_the_same_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actions, "NOVELTY_WEIGHT", 0)
    text, packs = collect_then_refine(tmp_path, refines=1)
    _, answer = document()
    assert reached(text, packs, answer) is None
    assert all("notice period" in text[s:e] for s, e in item_spans(text, packs[1:]))
