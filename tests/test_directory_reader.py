"""Directories: inventory with .gitignore and collapsed folders, cross-file focus, search with a cursor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import source_at

from sparseread_mcp import Intent, IntentError, ReadEngine, ReadRequest, Settings, Slot


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "shop").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "build").mkdir()
    (root / ".gitignore").write_text("*.secret\nlogs/\n")
    (root / "src" / ".gitignore").write_text("generated_*.py\n")
    (root / "src" / "shop" / "cart.py").write_text(
        "class Cart:\n    def add_item(self, sku: str, qty: int) -> None:\n        '''Add qty of sku.'''\n"
        "        self.items[sku] = self.items.get(sku, 0) + qty\n\n"
        "    def checkout_total(self) -> float:\n        '''Sum prices with the VAT rate (REPO-MARK-VAT).'''\n"
        "        return sum(self.price(s) * q for s, q in self.items.items()) * 1.2\n"
    )
    (root / "src" / "shop" / "payments.py").write_text(
        "def refund(order_id: str) -> None:\n    '''Refund an order to its original card.'''\n"
        "    gateway.refund(order_id)  # TODO-MARK\n\n\ndef charge(card: str, amount: float) -> str:\n"
        "    return gateway.charge(card, amount)  # TODO-MARK\n"
    )
    for i in range(30):
        (root / "src" / "shop" / f"module_{i}.py").write_text(f"def helper_{i}():\n    return {i}  # TODO-MARK\n")
    (root / "src" / "generated_models.py").write_text("IGNORED-GENERATED\n")
    (root / "docs" / "checkout.md").write_text("# Checkout\n\nThe total includes VAT at 20 percent.\n")
    (root / "keys.secret").write_text("IGNORED-SECRET\n")
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 'VENDORED'\n")
    (root / "build" / "out.txt").write_text("BUILD-OUTPUT\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    (tmp_path / "outside.txt").write_text("OUTSIDE-SECRET\n")
    os.symlink(tmp_path / "outside.txt", root / "docs" / "leak.txt")
    return root


def test_inventory_respects_gitignore_and_collapses_vendored_folders(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    preview = engine.preview("s", ".", budget_tokens=8000)
    assert preview.artifact.type == "directory"
    listing = "\n".join(o.title for o in preview.outline)
    assert "src/shop/cart.py python" in listing and "docs/checkout.md markdown" in listing
    for hidden in ("generated_models.py", "keys.secret", "left-pad", "out.txt", "leak.txt"):
        assert hidden not in listing
    assert "node_modules/ (collapsed" in listing and ".git/ (collapsed" in listing
    assert "logo.png binary" in listing


def test_focus_ranks_files_and_each_reader_locates_passages(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    pack = engine.read("s", ReadRequest(target=".", intent=Intent(goal="how is the checkout total with VAT computed")))
    paths = [i.pointer.split("@")[0] for i in pack.items]
    assert {"src/shop/cart.py", "docs/checkout.md"} <= set(paths[:3])
    for item in pack.items:
        path = item.pointer.split("@")[0]
        assert source_at((repo / path).read_text(), item.anchor) == item.text
    assert any("REPO-MARK-VAT" in i.text for i in pack.items[:3])
    assert all("OUTSIDE-SECRET" not in i.text and "IGNORED" not in i.text for i in pack.items)


def test_collect_across_files_reports_coverage_per_slot(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    slots = [
        Slot(id="refund", question="how are orders refunded", aliases=["refund"]),
        Slot(id="vat", question="VAT rate applied at checkout", aliases=["VAT"]),
    ]
    pack = engine.read("s", ReadRequest(target="src", action="collect", intent=Intent(slots=slots)))
    status = {c.slot: c.status for c in pack.coverage}
    assert status == {"refund": "found", "vat": "found"}
    assert {i.pointer.split("@")[0] for i in pack.items} >= {"src/shop/payments.py", "src/shop/cart.py"}


def test_search_counts_every_match_and_pages_with_a_cursor(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    first = engine.read("s", ReadRequest(target=".", intent=Intent(needles=["TODO-MARK"]), budget_tokens=1500))
    assert first.result is not None and first.result.value == 32
    seen = [i.pointer for i in first.items]
    cursor = first.cursor
    while cursor:
        page = engine.read("s", ReadRequest(target=".", cursor=cursor, budget_tokens=1500))
        seen += [i.pointer for i in page.items]
        cursor = page.cursor
    assert len(seen) == len(set(seen)) == 32  # one window per match here: none are adjacent
    assert sum(len(i.text) for i in first.items) < 3000, "search returns snippets, never whole files"


def test_the_file_index_is_built_once_per_directory_fingerprint(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    index = engine.file_index(engine.inventory("."))
    engine.read("s", ReadRequest(target=".", intent=Intent(goal="refund")))
    assert engine.file_index(engine.inventory(".")) is index
    (repo / "src" / "shop" / "new.py").write_text("def added(): pass\n")
    assert engine.file_index(engine.inventory(".")) is not index


def test_a_directory_needs_an_intent(repo: Path) -> None:
    engine = ReadEngine(Settings(roots=(repo,)))
    with pytest.raises(IntentError, match="is a directory"):
        engine.read("s", ReadRequest(target="src"))
