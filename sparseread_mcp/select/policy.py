"""What this installation may choose for a read, and the live signals that adjust the selector's costs.

The selector (selector.py) chooses from its calibrated table (calibration.json, built by calibrate.py);
here it meets the method the settings may fix, what this installation can run (dense and hybrid only with
the `e5` or `semantic` extra; with either, plain prose is ranked by the hybrid) and the live cost signals: a
later call in the same episode (refine, a repeated focus, a fallback) is follow-up exposure charged to the
configuration that answered first.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..config import Settings
from ..files.artifacts import LruCache
from ..locate import LocatorSet
from ..locate.context import plain_prose
from ..models import Intent
from ..protocol.intents import query_for
from ..readers.base import ParsedArtifact
from ..vocabulary import LocationMethod
from .configuration import Configuration
from .figures import best_on_figures
from .selector import Choice, Selector, group_of, intent_type

_NO_SEMANTIC = "; dense and hybrid need the semantic extra (not installed): BM25 and lexical only"
#: Plain prose with a model installed: BM25's best passages reranked with it (bench/results/issue33_location.md,
#: sessions 27 and 28: with E5 or MiniLM-L6, higher on every development set it acts on, most on questions asked
#: in other words).
_PROSE_RERANKED = "; plain prose: BM25's best passages reranked with {model}"
#: Dense location alone is measured but never chosen: it cannot tell `City72` from `City77`, and agents'
#: goals are full of identifiers. Hybrid keeps its semantic reach with BM25's exact terms.
NOT_CHOSEN: frozenset[LocationMethod] = frozenset({"dense"})


class Policy:
    """The configuration for each live read (the calibrated choice, or the method the settings fix), and the
    follow-up exposure each episode adds to the configuration that answered it first."""

    def __init__(self, settings: Settings, locators: LocatorSet, selector: Selector | None = None) -> None:
        self.settings = settings
        self.locators = locators
        self.selector = selector if selector is not None else Selector.load()
        self._answered: LruCache[str, Choice] = LruCache(4096)  # episode id -> its first choice

    def choose(self, parsed: ParsedArtifact, intent: Intent, *, multi_file: bool = False) -> Choice:
        kind = intent_type(query=bool(intent.query), verbatim=intent.want == "verbatim", multi_file=multi_file)
        group = group_of(parsed.type, len(parsed.artifact.text), kind)
        fixed = self.settings.location
        if fixed != "auto":
            return Choice(Configuration.named(fixed, "snippets"), f"location fixed to {fixed} by the settings", group)
        methods = [m for m in self.locators.available if m not in NOT_CHOSEN]
        figures = parsed.prose_pages and best_on_figures(
            parsed, self.locators.get("bm25").rank(parsed, query_for(intent))
        )
        choice = self.selector.choose(group, parsed.type, methods, on_figures=figures)
        if not self.locators.semantic:
            choice = replace(choice, reason=choice.reason + _NO_SEMANTIC)
        elif choice.configuration.method == "bm25" and plain_prose(parsed):
            hybrid = Configuration.named("hybrid", choice.configuration.form)
            model = Path(self.locators.semantic_model).name  # a local model's folder name, not its whole path
            reason = choice.reason + _PROSE_RERANKED.format(model=model)
            choice = replace(choice, configuration=hybrid, reason=reason)
        return choice

    def answered(self, episode_id: str, choice: Choice, exposed_chars: int) -> None:
        """A sparse answer from `choice`: the episode's first names its configuration; a later one (a
        repeated focus) is that configuration's follow-up."""
        if self._answered.get(episode_id) is None:
            self._answered.put(episode_id, choice)
        else:
            self.follow_up(episode_id, exposed_chars)

    def follow_up(self, episode_id: str, exposed_chars: int) -> None:
        choice = self._answered.get(episode_id)
        if choice is not None and choice.group:
            self.selector.observe_follow_up(choice.group, choice.configuration, exposed_chars)
