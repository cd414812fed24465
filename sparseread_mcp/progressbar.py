"""A progress bar for long CLI work: on stderr, only when stderr is a terminal, never with --json.

stdout stays clean for the result (a pipe, a file, `--json`); a bar drawn into a log file or CI output
would only be noise, so it is off unless a person is watching.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

_CELLS = " ▏▎▍▌▋▊▉█"


class ProgressBar:
    """`with ProgressBar(total, "bench") as bar: ... bar.advance("file.md")`; redraws at most 20 times a
    second and erases itself when done."""

    def __init__(
        self, total: int, label: str, *, stream: TextIO | None = None, enabled: bool | None = None, width: int = 24
    ) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self.done = 0
        self._drawn = 0.0

    def __enter__(self) -> ProgressBar:
        self._draw("", force=True)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def advance(self, note: str = "", steps: int = 1) -> None:
        self.done = min(self.total, self.done + steps)
        self._draw(note, force=self.done == self.total)

    def line(self, note: str) -> str:
        """The bar as drawn, without the carriage return."""
        eighths = round(self.done / self.total * self.width * 8)
        full, part = divmod(eighths, 8)
        cells = ("█" * full + (_CELLS[part] if part else "")).ljust(self.width)
        return f"{self.label} [{cells}] {self.done}/{self.total} {note}".rstrip()

    def _draw(self, note: str, *, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self._drawn < 0.05):
            return
        self._drawn = now
        self.stream.write("\r\033[K" + self.line(note[-60:]))
        self.stream.flush()
