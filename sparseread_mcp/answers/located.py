"""Located evidence for focus and collect: the selector's configuration, then passages within the gate."""

from __future__ import annotations

from dataclasses import replace

from ..gate.delivery import Extras
from ..gate.page_place import likeliest_region
from ..gate.sparse import deliver_sparse
from ..locate import LocatorSet
from ..locate.base import Locator, build_query
from ..locate.patterns import MAX_COUNT, count_matches
from ..models import EvidencePack, Intent, OpResult, Selection
from ..protocol import actions
from ..protocol.intents import query_for
from ..readers.base import ParsedArtifact
from ..select.configuration import FULL_VIEW
from ..select.policy import Policy
from ..select.selector import TAU
from ..vocabulary import PREVIEW_TOOL
from .read import FileRead
from .views import full_or_degraded


def located_pack(read: FileRead, *, selection: Policy, locators: LocatorSet, passage_chars: int) -> EvidencePack:
    """The configuration the selector chooses for this file and intent, then focus or collect with it;
    the full view, page 1 at the best match, when no configuration is reliable enough."""
    parsed, intent, d, extras = read.parsed, read.intent, read.delivery, read.extras
    assert intent is not None
    episode, bm25 = d.episode, locators.get("bm25")
    if intent.want == "count" and intent.needles:
        extras = replace(extras, result=count_of(parsed, intent))
    choice = selection.choose(parsed, intent)
    configuration = choice.configuration.qualified(parsed.type)
    if choice.configuration == FULL_VIEW:
        origin = likeliest_region(parsed, bm25, intent, episode, d.budget_tokens)
        reason = choice.reason
        if origin:
            page = parsed.lines.page_of(origin)
            where = f"L{parsed.lines.line_of(origin)}" + (f" (p{page})" if page else "")
            reason += f"; page 1 begins at {where} and holds the best match, the next where the unread matches are"
        extras = replace(extras, selection=Selection(configuration=configuration, reason=reason))
        return full_or_degraded(d, read.route, d.counter, extras, decision="full_view", reason=reason, start=origin)
    hint = ""
    chosen = Selection(configuration=configuration, reason=choice.reason, reliability=choice.reliability)
    extras = replace(extras, selection=chosen)
    if choice.robust:
        low = choice.reliability is None or choice.reliability < TAU
        measured = "" if choice.reliability is None else f" {choice.reliability:.2f}"
        why = f"low reliability{measured}" if low else f"reliability{measured} from other files"
        hint = f"{why}: else refine or view='full'"
        extras = extras.hinted(hint)
    locator = locators.get(choice.configuration.location)
    form = choice.configuration.exposure
    max_chars = actions.exposure_chars(intent, passage_chars)
    if read.action == "collect":
        slot_count = len(actions.slots_of(intent))
        limit = max(actions.max_items(intent), 2 * slot_count)
        max_chars = max(max_chars, 2 * slot_count * passage_chars)
        cands = actions.collect(parsed, intent, locator, episode, form=form, max_chars=max_chars)
    else:
        cands, ranking = actions.focus(parsed, intent, locator, episode, form=form, max_chars=max_chars)
        episode.ranking = ranking[: actions.RANKING_KEPT]  # refine needs the head of it, not every passage
        limit = actions.max_items(intent)
    if not cands:
        extras = why_empty(parsed, intent, extras, bm25)
    if not parsed.focus_context:
        # The exposure plan is already bounded in characters, as calibrated: small passages (table rows)
        # may be many; an item cap would show less than what was measured.
        limit = max(limit, len(cands))
    pack = deliver_sparse(d, cands, extras, max_items=limit)
    selection.answered(episode.id, choice, pack.exposure.payload_chars)
    if choice.robust and pack.coverage and all(c.status == "found" for c in pack.coverage):
        # Coverage says `found` (what it sent held the answer 89-100%, above any robust default's): the hint's
        # "else refine" is SKILL.md's rule for `partial`, and repeating it on every found answer costs tokens.
        pack = d.finish(pack.model_copy(update={"next": [h for h in pack.next if h != hint]}))
    return pack


def why_empty(parsed: ParsedArtifact, intent: Intent, extras: Extras, bm25: Locator) -> Extras:
    """A focus or collect that proposes nothing says whether nothing matched or all was sent already."""
    if any(score > 0 for _, score in bm25.rank(parsed, query_for(intent))):
        return replace(
            extras, empty_reason="nothing new to deliver: every match was delivered already in this episode"
        ).hinted("refine for neighbours, or state a new goal")
    extras = replace(extras, empty_reason="nothing delivered: no passage matches the goal")
    if parsed.queries is not None:
        message = (
            f"no row or value of this {parsed.type} matches the goal's words; to compute over it, pass "
            "intent.query (one read-only SELECT over the table `data`) using the schema"
        )
        return replace(extras, message=message).hinted(
            f"{PREVIEW_TOOL} shows the schema (column names and types) to write intent.query"
        )
    return extras.hinted(f"try other words, needles (exact strings) or {PREVIEW_TOOL} for the outline")


def count_of(parsed: ParsedArtifact, intent: Intent) -> OpResult:
    """How often the needles occur in the whole text, case-insensitively (a `/pattern/` needle counts its
    non-empty matches, bounded as every pattern is): an exact result, not evidence."""
    text = parsed.artifact.text
    needles = [n for n in intent.needles or [] if n.strip()]
    patterns = build_query([], needles).patterns
    written = {p.needle for p in patterns}
    literal = [n for n in needles if n not in written]
    folded = text.casefold()
    total = sum(folded.count(n.casefold()) for n in literal)
    provenance = [f"case-insensitive occurrences of {', '.join(map(repr, literal))}"] if literal else []
    for pattern, matches in zip(patterns, count_matches(patterns, [text])[0], strict=True):
        total += matches
        bound = f" (counting stops at {MAX_COUNT:,})" if matches >= MAX_COUNT else ""
        provenance.append(f"non-overlapping matches of {pattern.needle}{bound}")
    return OpResult(value=total, scanned=f"all {len(text)} characters", provenance=provenance)
