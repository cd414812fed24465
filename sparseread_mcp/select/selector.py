"""The selector: its calibrated table (calibration.json) and the rule that chooses from it, the cheapest
configuration whose calibrated reliability clears tau.

Reliability is the lower end of a 95% Wilson interval over calibration requests, per group of artifact
type x size band of the full view x intent type. The threshold is never relaxed, but a group's table is
only trusted as far as its evidence goes:
- a group with fewer than MIN_REQUESTS requests is thin: it answers with the robust sparse default;
- when no configuration clears tau, the full view answers only if that verdict comes from at least
  MIN_SETS development sets and sparse reading fails there: even the cheapest configuration, each miss
  charged the full view it escalates to, costs more in expectation than the full view; otherwise that
  cheapest configuration answers, its reliability reported. A verdict from one set is about that set's
  documents, unlike the request at hand, so the robust default answers.
The robust default is the lexical sparse configuration (BM25 or lexical; dense and hybrid only where
calibration shows them winning) that falls least short of the best one on any development set (scored
as it is served: in windows where the best hit is on a page of figures, `in_windows`), ties to
the best macro-averaged hit rate: over the long-document sets for a long request (when at least MIN_SETS
have long documents), over every set otherwise when calibration measured that artifact type at all (at
least MIN_SETS sets; else the type's default, else plain BM25 snippets); its measured reliability
travels with the choice. Reliability is calibrated once; only costs adapt online (exposed characters
plus a per-call overhead plus the mean follow-up exposure observed after this configuration answered).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..vocabulary import LocationMethod
from .configuration import FULL_VIEW, Configuration

TAU = 0.6
MIN_REQUESTS = 20
#: Development sets a "sparse reading fails here" verdict, or a robust default, must rest on.
MIN_SETS = 2
CALL_OVERHEAD_CHARS = 400
Z95 = 1.959964
#: A type with too few calibration requests reads with this.
FALLBACK_CONFIGURATION = Configuration("bm25", "snippets")
#: The robust default is chosen among these methods only: dense and hybrid are offered only in groups whose
#: calibration shows them winning, never on files unlike every calibration set.
ROBUST_METHODS: frozenset[LocationMethod] = frozenset({"bm25", "lexical"})
SIZE_BANDS = ((8_000, "<=8k"), (32_000, "8k-32k"))
#: Above this many characters a document is long (the last size band).
LONG_CHARS = SIZE_BANDS[-1][0]
TABLE = Path(__file__).with_name("calibration.json")


def wilson_lower(successes: int, trials: int, z: float = Z95) -> float:
    """Lower end of the Wilson score interval for a success rate; 0 with no trials."""
    if trials <= 0:
        return 0.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, (centre - spread) / denominator)


def size_band(full_view_chars: int) -> str:
    return next((name for limit, name in SIZE_BANDS if full_view_chars <= limit), ">32k")


def intent_type(*, query: bool, verbatim: bool, multi_file: bool) -> str:
    if query:
        return "exact computation"
    if multi_file:
        return "cross-file evidence"
    return "verbatim text" if verbatim else "selective fact"


def group_of(artifact_type: str, full_view_chars: int, kind: str) -> str:
    return f"{artifact_type}|{size_band(full_view_chars)}|{kind}"


@dataclass(slots=True)
class Stats:
    trials: int = 0
    successes: int = 0
    exposed_chars: float = 0.0  # mean characters exposed per request
    follow_up_chars: float = 0.0  # mean exposure of the calls that followed (escalations, re-reads)
    follow_ups: int = 0

    @property
    def reliability(self) -> float:
        return wilson_lower(self.successes, self.trials)

    @property
    def cost(self) -> float:
        return self.exposed_chars + CALL_OVERHEAD_CHARS + self.follow_up_chars


def served_on_figures(name: Configuration) -> Configuration:
    """What a robust `name` reads where the best hit is on a page of figures: snippets and context in
    windows (`Selector.in_windows`), anything else as it is."""
    if name == FULL_VIEW or name.form not in ("snippets", "context"):
        return name
    return Configuration.named(name.location, "windows")


@dataclass(slots=True)
class RobustStats:
    """A configuration over long-document requests: pooled counts, and the hit rate macro-averaged over
    the `sets` development sets they came from."""

    trials: int = 0
    successes: int = 0
    exposed_chars: float = 0.0
    sets: int = 0
    macro: float = 0.0
    #: The most it falls short of the best configuration on any one of those sets (hit-rate points / 100).
    regret: float = 0.0

    @property
    def reliability(self) -> float:
        return wilson_lower(self.successes, self.trials)


@dataclass(frozen=True, slots=True)
class Choice:
    configuration: Configuration
    reason: str
    group: str = ""
    #: The measured reliability of the robust default when it answered (None for a calibrated choice).
    reliability: float | None = None
    robust: bool = False


@dataclass(slots=True)
class Selector:
    """Calibrated statistics per group and configuration, and the type defaults. Configurations may be
    given as their text (`bm25 x windows`): they are read as Configurations."""

    groups: dict[str, dict[Configuration, Stats]] = field(default_factory=dict)
    defaults: dict[str, Configuration] = field(default_factory=dict)
    #: How many development sets calibrated each group (absent in older tables: then trusted as before).
    sets: dict[str, int] = field(default_factory=dict)
    #: Every sparse configuration over long-document requests, for the robust default.
    robust: dict[Configuration, RobustStats] = field(default_factory=dict)
    #: The same over every request, for when too few sets have long documents.
    robust_all: dict[Configuration, RobustStats] = field(default_factory=dict)
    #: Configurations left out of the table, and why (semantic ones that did not beat BM25 held out).
    withheld: dict[Configuration, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        parse = Configuration.parse
        self.groups = {g: {parse(c): s for c, s in cs.items()} for g, cs in self.groups.items()}
        self.defaults = {t: parse(c) for t, c in self.defaults.items()}
        self.robust = {parse(c): r for c, r in self.robust.items()}
        self.robust_all = {parse(c): r for c, r in self.robust_all.items()}
        self.withheld = {parse(c): why for c, why in self.withheld.items()}

    def choose(
        self, group: str, artifact_type: str, methods: Collection[str] | None = None, *, on_figures: bool = False
    ) -> Choice:
        """The cheapest configuration whose reliability clears tau, among those whose method is in
        `methods` (what this installation can run; all when None). When the best hit lies `on_figures`, a
        page of figures of a paged document (`select.figures`), a robust choice reads in windows: see
        `in_windows`."""
        choice = self._choose(group, artifact_type, methods)
        return self.in_windows(choice) if on_figures else choice

    def in_windows(self, choice: Choice) -> Choice:
        """A robust choice (not one calibration trusts) when the best hit is on a page of figures: the same
        method with the `windows` form, one contiguous stretch of the page grown from the best hit (and
        from each passage tied with it). Evidence there (a statement under its title) is a stretch of the
        page, not scattered passages; a calibrated choice stays, and so does the full view."""
        name = choice.configuration
        windows = served_on_figures(name)
        if not choice.robust or windows == name:
            return choice
        with self._lock:
            stats = self.groups.get(choice.group, {}).get(windows)
        reliability = round(stats.reliability, 3) if stats is not None and stats.trials else choice.reliability
        reason = f"{choice.reason}; the best hit is on a page of figures: {windows}, a stretch of that page"
        return replace(choice, configuration=windows, reason=reason, reliability=reliability)

    def _choose(self, group: str, artifact_type: str, methods: Collection[str] | None) -> Choice:
        def runnable(name: Configuration) -> bool:
            return methods is None or name == FULL_VIEW or name.method in methods

        with self._lock:
            stats = {name: s for name, s in self.groups.get(group, {}).items() if runnable(name)}
            costs = {name: s.cost for name, s in stats.items()}
        requests = max((s.trials for s in stats.values()), default=0)
        if requests < MIN_REQUESTS:
            return self.robust_default(
                group, artifact_type, runnable, f"{requests} calibration requests for {group} (< {MIN_REQUESTS})"
            )
        qualified = [(costs[name], name) for name, s in stats.items() if s.reliability >= TAU and name != FULL_VIEW]
        if not qualified:
            best = max(((s.reliability, n) for n, s in stats.items() if n != FULL_VIEW), default=None)
            detail = f" (best: {best[1]} at {best[0]:.2f})" if best else ""
            sets = self.sets.get(group, 0) if self.sets else MIN_SETS  # older tables: trusted as before
            over = f"over {sets} development sets" if self.sets else "(development sets not recorded)"
            if sets < MIN_SETS:
                return self.robust_default(
                    group,
                    artifact_type,
                    runnable,
                    f"no configuration reaches reliability {TAU} in {group}{detail}, but that rests on {sets} "
                    f"development set(s) (< {MIN_SETS}), unlike enough from this request not to send the full view",
                )
            # Sparse reading fails for this group when even its cheapest configuration, each miss charged
            # the full view it escalates to, costs more in expectation than the full view itself. A table
            # without follow-up exposure cannot say what a miss costs: the full view, as before.
            tries = [(costs[n], n) for n, st in stats.items() if n != FULL_VIEW and st.follow_ups]
            full_cost = costs.get(FULL_VIEW)
            if tries and full_cost is not None and min(tries)[0] < full_cost:
                cost, name = min(tries)
                return Choice(
                    name,
                    f"no configuration reaches reliability {TAU} in {group}{detail}, but reading sparsely first "
                    f"is cheaper in expectation than the full view {over} (misses escalate "
                    f"to it): est. {cost:.0f} against {full_cost:.0f} chars",
                    group,
                    reliability=round(stats[name].reliability, 3),
                    robust=True,
                )
            return Choice(
                FULL_VIEW,
                f"no configuration reaches reliability {TAU} in {group}{detail} {over}, "
                "and none is cheaper in expectation than the full view: the full view",
                group,
            )
        cost, name = min(qualified)
        return Choice(
            name,
            f"cheapest with Wilson lower bound >= {TAU} in {group} "
            f"({stats[name].reliability:.2f} over {stats[name].trials} requests, est. {cost:.0f} chars)",
            group,
        )

    def robust_default(
        self, group: str, artifact_type: str, runnable: Callable[[Configuration], bool], why: str
    ) -> Choice:
        """The sparse configuration with the least worst-case shortfall over the long-document sets for a
        long request, else over every set (when fewer than MIN_SETS sets measured it: the type's default,
        else plain BM25 snippets), with its measured reliability."""

        def offered(name: Configuration) -> bool:
            return runnable(name) and name.method in ROBUST_METHODS

        with self._lock:
            measured = {n: r for n, r in self.robust.items() if offered(n)}
            # Types no development set measured (code, logs, ...) keep their own default.
            typed = any(g.startswith(artifact_type + "|") for g in self.groups)
            everywhere = {n: r for n, r in self.robust_all.items() if offered(n)} if typed else {}

        def best(table: dict[Configuration, RobustStats]) -> tuple[Configuration, RobustStats] | None:
            # Robust: the smallest worst-case shortfall on any set, then the best macro, then the cheapest.
            ranked = sorted(
                table.items(), key=lambda item: (item[1].regret, -item[1].macro, item[1].exposed_chars, item[0])
            )
            return ranked[0] if ranked and ranked[0][1].sets >= MIN_SETS else None

        long_request = group.split("|")[1:2] == [size_band(LONG_CHARS + 1)]
        if long_request and (found := best(measured)) is not None:
            name, stats = found
            basis = f"the least worst-case shortfall over {stats.sets} long-document sets"
        elif (found := best(everywhere)) is not None:
            name, stats = found
            basis = f"the least worst-case shortfall over {stats.sets} development sets"
        else:
            name = self.defaults.get(artifact_type, FALLBACK_CONFIGURATION)
            name = name if runnable(name) else FALLBACK_CONFIGURATION
            stats = measured.get(name, RobustStats())
            basis = (
                f"the {artifact_type} default" if name != FALLBACK_CONFIGURATION else "plain BM25 snippets"
            ) + f" (fewer than {MIN_SETS} long-document sets to choose another by)"
        measured_as = (
            f": {100 * stats.macro:.0f}% hit macro-averaged, reliability {stats.reliability:.2f} over "
            f"{stats.trials} requests at {stats.exposed_chars:.0f} chars"
            if stats.trials
            else ": not measured on long documents"
        )
        return Choice(
            name,
            f"{why}: the robust default, {basis}{measured_as}",
            group,
            reliability=round(stats.reliability, 3) if stats.trials else None,
            robust=True,
        )

    def observe_follow_up(self, group: str, configuration: str, exposed_chars: int) -> None:
        """A later call in the same episode (refine, re-read, fallback): it adds to this choice's cost."""
        with self._lock:
            stats = self.groups.setdefault(group, {}).setdefault(Configuration.parse(configuration), Stats())
            stats.follow_ups += 1
            stats.follow_up_chars += (exposed_chars - stats.follow_up_chars) / stats.follow_ups

    def record(self, group: str, configuration: str, *, success: bool, exposed_chars: int) -> None:
        """One calibration request (used by `calibrate`, never online: reliability is fixed once)."""
        stats = self.groups.setdefault(group, {}).setdefault(Configuration.parse(configuration), Stats())
        stats.trials += 1
        stats.successes += int(success)
        stats.exposed_chars += (exposed_chars - stats.exposed_chars) / stats.trials

    def save(self, path: Path) -> None:
        data = {
            "tau": TAU,
            "defaults": self.defaults,
            "sets": dict(sorted(self.sets.items())),
            "robust": _robust_rows(self.robust),
            "robust_all": _robust_rows(self.robust_all),
            "withheld": dict(sorted(self.withheld.items())),
            "groups": {
                g: {
                    c: [s.trials, s.successes, round(s.exposed_chars, 1), round(s.follow_up_chars, 1), s.follow_ups]
                    for c, s in cs.items()
                }
                for g, cs in sorted(self.groups.items())
            },
        }
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path = TABLE) -> Selector:
        if not path.exists():
            return cls()
        data = json.loads(path.read_text())
        groups = {
            g: {Configuration.parse(c): _stats(values) for c, values in cs.items()}
            for g, cs in data.get("groups", {}).items()
        }
        sets = {g: int(n) for g, n in data.get("sets", {}).items()}
        return cls(
            groups=groups,
            defaults={t: Configuration.parse(c) for t, c in data.get("defaults", {}).items()},
            sets=sets,
            robust=_robust_stats(data.get("robust", {})),
            robust_all=_robust_stats(data.get("robust_all", {})),
            withheld={Configuration.parse(c): str(why) for c, why in data.get("withheld", {}).items()},
        )


def _robust_rows(table: dict[Configuration, RobustStats]) -> dict[str, list[float]]:
    return {
        c: [r.trials, r.successes, round(r.exposed_chars, 1), r.sets, round(r.macro, 4), round(r.regret, 4)]
        for c, r in sorted(table.items())
    }


def _robust_stats(rows: dict[str, list[float]]) -> dict[Configuration, RobustStats]:
    return {
        Configuration.parse(c): RobustStats(
            trials=int(v[0]),
            successes=int(v[1]),
            exposed_chars=float(v[2]),
            sets=int(v[3]),
            macro=float(v[4]),
            regret=float(v[5]) if len(v) > 5 else 0.0,
        )
        for c, v in rows.items()
    }


def _stats(values: list[float]) -> Stats:
    """[trials, successes, mean exposure] and, in newer tables, [mean follow-up exposure, follow-ups]."""
    trials, successes, exposed = int(values[0]), int(values[1]), float(values[2])
    follow_up, follow_ups = (float(values[3]), int(values[4])) if len(values) >= 5 else (0.0, 0)
    return Stats(
        trials=trials, successes=successes, exposed_chars=exposed, follow_up_chars=follow_up, follow_ups=follow_ups
    )
