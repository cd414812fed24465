"""The exposure ledger of one episode: sparse payload E against the full view length L."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True, kw_only=True)
class Ledger:
    """E <= L always; the full view is charged once, so the episode total stays <= 2L."""

    full_view_chars: int
    sparse_chars: int = 0
    full_chars: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.full_view_chars - self.sparse_chars)

    @property
    def total(self) -> int:
        return self.sparse_chars + self.full_chars

    def fits(self, payload_chars: int) -> bool:
        """Would a sparse batch of this many characters keep E <= L?"""
        return self.sparse_chars + payload_chars <= self.full_view_chars

    def charge_sparse(self, payload_chars: int) -> None:
        if not self.fits(payload_chars):
            raise AssertionError("sparse batch admitted past the ledger; check fits() before delivery")
        self.sparse_chars += payload_chars

    def record(self, payload_chars: int) -> None:
        """Collections (directories) record what they expose without a bound: their items come from
        many files, and no single full view would replace them."""
        self.sparse_chars += payload_chars

    def charge_full(self, page_chars: int) -> None:
        if self.full_chars + page_chars > self.full_view_chars:
            raise AssertionError("full view charged twice in one episode")
        self.full_chars += page_chars
