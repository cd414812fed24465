"""What directory reading needs from its host: a narrow view of the engine, so this package never
imports the engine (which imports it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..config import Settings
    from ..evidence import Hit
    from ..files.roots import Roots
    from ..locate.base import Locator
    from ..models import OpResult
    from ..readers.base import ParsedArtifact
    from ..tokens import TokenCounter
    from .collection import Inventory
    from .fileindex import FileIndex


class DirectoryContext(Protocol):
    """The parts of a reading engine a directory read uses."""

    @property
    def settings(self) -> Settings: ...

    @property
    def roots(self) -> Roots: ...

    @property
    def counter(self) -> TokenCounter: ...

    @property
    def locator(self) -> Locator:
        """The locator directories rank passages with."""
        ...

    def open(self, path: str) -> ParsedArtifact:
        """The parse of one file under the roots (cached)."""
        ...

    def file_index(self, inventory: Inventory, *, first: Sequence[str] = ()) -> FileIndex:
        """The folder's file index (cached by its fingerprint); under a call's time limit maybe partial
        (`pending` files not indexed yet), the paths holding the terms `first` read first."""
        ...

    def search_folder(self, inventory: Inventory, needles: list[str]) -> tuple[list[Hit], OpResult]:
        """Every match of the needles in the folder's text files (run in a worker: see needlesearch)."""
        ...
