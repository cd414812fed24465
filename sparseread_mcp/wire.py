"""What goes on the wire: the one serialization every answer is sent and counted in, so a budget measured
here is the budget the agent pays.

An answer says only what carries information (protocol 8):

- no `null`, empty or default-valued field: an absent list is empty, an absent flag is its default
  (`generated`, `truncated`, `closed`, `stale` false; `outline_complete` true), an absent number is 0;
- nothing twice: an item's `anchor` is the part of its `pointer` after `#`, and its `lines` (like an
  outline entry's) are sent only where that anchor does not already say them (`L12-L18`, `p3:L7:C2-L9:C4`), its `page`
  only where that anchor does not name it (a PDF's `p17:L3-L9` does); an outline
  entry's `level` is sent when it is not 1; a list of pointers names each once; a slot's `pointers` leave
  out the items of the same answer that name that slot (in a one-slot answer, every item) and, in a
  one-slot answer whose every
  `already_delivered` match the slot lists, those matches, and the passages inside an item of the answer no
  longer than a window (`WINDOW_CHARS`: the item shows them); in a one-slot answer whose every item names
  that slot, the items do not (its coverage entry says it once); `unresolved` is sent only where it is not
  simply the slots whose coverage is not `found`; an answer about one slot says no `coverage` when that
  slot is `missing` (nor `unresolved`); fingerprints are sent as their first 12 hex digits, as
  pointers carry them;
- no `view` when it is `snippets`, no `action` (the agent's own request); no `gate` and no `scope` for an
  ordinary sparse batch (an absent gate is the decision `sparse` for its routine reason; `gate_decision`
  reads it back); no item `score` where the items come best first (their order says it); no `selection`:
  `scope`, when said, names the reader and the method, the view the exposure form, and when the robust
  default answered, its `next` hint says how reliable it was measured to be (`low reliability 0.29: ...`);
- an evidence pack's `episode` is its `id`, said by the answer that opens the episode's ledger (an episode
  is a goal on a file: later answers for that goal continue it and do not say it again, see the ledger
  below), with its `artifact` (path, type, fingerprint) only where its items' pointers (with no items, its
  `already_delivered` ones) do not already name the file and version; its `objective` is the agent's own
  goal, not repeated (`sro_card` lists each episode's);
- a Preview (the first answer about any file) states `protocol`: 4; one whose route is `native` carries
  the whole file as `content` with a minimal frame: its `artifact` is the `fingerprint` alone (the path is
  the agent's own), and no `reason`, `outline`, `L` or `L_tokens` (the file says them; `tokens` its cost).
  It is sent as two text blocks (`wire_blocks`): the frame `{"protocol", "fingerprint", "tokens"}` (the
  route is said by the second block, the fingerprint stands for its `artifact`), then the file verbatim,
  so a small file costs what one read of it costs, not its JSON-escaped text; `record_of` reads the
  record back from the blocks;
- an item whose text spans lines (a page of a full view, a table, code) is sent the same way: the frame
  lists it without `text`, and its text follows as a text block of its own, verbatim, in the items' order
  (JSON escapes each line break and quote: 26-32% more tokens on a page of a 10-K's figures, about 11% on
  code); such an answer, like a native Preview, has no structured copy;
- short names for the exposure ledger, a compact record: `{"chars", "E", "L", "L_tokens", "full_chars"}`
  (this payload's charged characters, the episode's sparse characters so far, the full view's length in
  characters and tokens, full-view characters delivered; a count left out is 0); what is left before the
  full view is `L - E`. A Preview and a card episode name the full view's length `L` (and `L_tokens`) and
  a card episode its sparse characters so far `E`, the same way. `L`, `L_tokens` and the episode's `id`
  are the same for every answer of an episode: the answer that opens its ledger says them, later ones do
  not (an answer whose `E + full_chars` goes beyond its own `chars` follows one that said them);
- a verify answer about one claim: its `verification` (status, reason, pointer) without the claim's
  `coverage`, and `already_delivered` without the verdict's own pointer (nor, when it is `supported`, the
  held passage that pointer lies in: the pointer says where in it);
- a verify answer that shows no passage and charged nothing (`not_found`) is its `verification`, the
  `scope` searched and any `already_delivered` (`wire_verdict.py`);
- a `check` answer is its `result` alone (with `message` or `invalidated` when said): the counts and
  places are the answer, and nothing was delivered or charged;
- a verify answer about a file the agent holds whole (`native_fit`, no items) is the verdict alone:
  `{"verification": {"status", "pointer"}, "tokens"}`. The pointer is the citation and the agent judges
  with the whole file before it, so no reason, episode, gate, ledger (nothing was charged), coverage or
  `already_delivered`.

The text content and the structured copy of an answer are the same JSON: clients pass one or the other to
the model (Claude Code, OpenCode and Codex the structured copy), so neither may carry more. A native
Preview has no structured copy: it would carry the file a second time, escaped, and clients that prefer it
would lose the raw block; every client passes text blocks on.

Protocol 8 (from 7): the episode's id once per episode, like `L`; no `action` echoed; a one-slot answer's
`missing` coverage left out. 7 (from 6): `L` and `L_tokens` once per episode; a verdict that shows nothing,
alone. 6 (from 5):
the pointers of the file and version an answer names twice or more are said once, as its `source`, and each
as `#anchor` (`wire_source`). 5 (from 4): no `selection`; an item whose text spans lines is a text block of
its own after the frame. 4 (from 3): an ordinary sparse batch has no `gate`; an item whose pointer names its
page (`#p17:L3-L9`) has no `page`. 3 (from 2): a native Preview is two text blocks with no structured copy;
a verdict about a file held whole is its status and pointer alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from .models import CompactResult, EvidencePack, Preview
from .wire_source import absolute, relative_to_source
from .wire_verdict import ZERO_BY_DEFAULT, verdict_alone, verdict_said_once

#: The protocol these names and omissions define; stated in every Preview (`protocol`).
PROTOCOL = 8
#: Hex digits of a fingerprint on the wire: the prefix a `sha256:` pointer revision carries.
FINGERPRINT_DIGITS = 12
#: Anchors that state a line range, on a PDF page or not (`L12-L18`, `L7:C3-C9`, `p26:L85:C60-L86:C103`);
#: an item with one of them needs no separate `lines`.
_LINE_ANCHOR = re.compile(r"(?:p\d+:)?L(\d+)(?:-L(\d+)|:C\d+-C\d+|:C\d+-L(\d+):C\d+)?")
#: The view an answer shows unless it says another.
DEFAULT_VIEW = "snippets"
#: The gate decision an answer with no `gate` was made under: an ordinary sparse batch.
DEFAULT_DECISION = "sparse"
#: The gate's reason for an ordinary sparse batch says no more than its decision and its items do.
_ROUTINE_GATE = re.compile(r"sparse read: \d+ passage\(s\) within E <= L")
#: Anchors of whole lines, on a page or not (`L12-L18`, `p3:L4-L9`).
_WHOLE_LINES = re.compile(r"(?:p\d+:)?L(\d+)(?:-L(\d+))?")
#: An item at most this long shows the passages inside it: a slot's pointers into it are left out.
WINDOW_CHARS = 4_000
#: Ledger fields the wire derives or drops: remaining = L - E; the payload's tokens are within `tokens`.
_DERIVED_EXPOSURE = ("remaining_chars", "payload_tokens")
#: What a native Preview leaves out: its content is the whole file, which says all of these.
_SAID_BY_WHOLE_CONTENT = ("reason", "outline", "outline_complete", "L", "L_tokens")
#: What a native Preview's frame leaves to its second block: the whole file is there, so the route is native.
_SAID_BY_FILE_BLOCK = ("content", "route")


def wire_json(model: BaseModel) -> str:
    """The compact JSON text of `model`'s whole record (a native Preview's file inside it, escaped)."""
    return _compact(wire_dict(model))


def wire_blocks(model: BaseModel) -> list[str]:
    """The text blocks a tool answer is sent as: its record as compact JSON; a native Preview's frame, then
    the whole file verbatim as a block of its own (no JSON escaping: the agent pays what one read costs);
    an answer with items that span lines, its frame (those items without `text`), then each such item's
    text verbatim as a block of its own, in the items' order (JSON escapes every line break and quote: a
    page of figures costs 30-40% more tokens escaped, code about 11%)."""
    return record_blocks(wire_dict(model))


def spans_lines(item: dict[str, Any]) -> bool:
    """Whether an item's text is sent as a block of its own: it holds a line break."""
    text = item.get("text")
    return isinstance(text, str) and "\n" in text


def record_blocks(record: dict[str, Any]) -> list[str]:
    """`record` (a `wire_dict`) as the text blocks it is sent as (see `wire_blocks`)."""
    items = record.get("items")
    if isinstance(items, list) and any(spans_lines(item) for item in items):
        texts = [item["text"] for item in items if spans_lines(item)]
        framed = [{k: v for k, v in item.items() if k != "text"} if spans_lines(item) else item for item in items]
        return [_compact({**record, "items": framed}), *texts]
    if record.get("route") == "native" and isinstance(record.get("content"), str):
        frame: dict[str, Any] = {}
        for key, value in record.items():
            if key == "artifact" and set(value) == {"fingerprint"}:
                frame["fingerprint"] = value["fingerprint"]  # the version: all a pointer needs beside the path
            elif key not in _SAID_BY_FILE_BLOCK:
                frame[key] = value
        return [_compact(frame), record["content"]]
    return [_compact(record)]


def record_of(blocks: list[str]) -> dict[str, Any]:
    """The record a tool answer's text blocks carry (`wire_dict`), its pointers whole (`wire_source`): the
    JSON frame; the blocks after it are the texts of its items that have none in the frame, in order, or the
    whole file of a native Preview, its `content`."""
    record: dict[str, Any] = json.loads(blocks[0])
    items = record.get("items")
    if isinstance(items, list) and len(blocks) > 1:
        texts = iter(blocks[1:])
        for item in items:
            if "text" not in item:
                item["text"] = next(texts)
        return absolute(record)
    if len(blocks) == 2:
        record.update(route="native", content=blocks[1])
        if "fingerprint" in record:
            record["artifact"] = {"fingerprint": record.pop("fingerprint")}
    return absolute(record)


def gate_decision(record: dict[str, Any]) -> str:
    """The gate decision an answer's record (`wire_dict`, `record_of`) states: an ordinary sparse batch
    states none."""
    gate = record.get("gate")
    return str(gate["decision"]) if isinstance(gate, dict) and "decision" in gate else DEFAULT_DECISION


def _compact(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def wire_dict(model: BaseModel) -> dict[str, Any]:
    """`model` as the lean record a tool answer carries (its text is this, as JSON)."""
    data = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
    history = data.pop("messages", None) if isinstance(model, CompactResult) else None  # returned as given
    lean: dict[str, Any] = _lean(data)
    if isinstance(model, EvidencePack):
        lean.setdefault("items", [])
        _pack(lean)
        if not lean["items"]:
            del lean["items"]
    if history is not None:
        lean["messages"] = history
    if isinstance(model, Preview):
        if lean.get("route") == "native" and "content" in lean:
            # The whole file is here: its own headings outline it, `L_tokens` is its size.
            for key in _SAID_BY_WHOLE_CONTENT:
                lean.pop(key, None)
            artifact = lean.get("artifact", {})
            for key in ("path", "type", "size_bytes"):  # the agent's own path; the file says the rest
                artifact.pop(key, None)
        lean = {"protocol": PROTOCOL, **lean}
    if isinstance(model, EvidencePack | Preview):
        lean = relative_to_source(lean)
    return lean


def _lean(value: Any) -> Any:
    """`value` without empty members, with every evidence item and ledger in its short form."""
    if isinstance(value, list):
        if value and all(isinstance(v, str) and "@" in v and "#" in v for v in value):
            return list(dict.fromkeys(value))  # a list of pointers names each once
        return [_lean(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: lean for k, v in value.items() if not _empty(lean := _lean(v))}
    if isinstance(out.get("pointer"), str) and "text" in out:
        _item(out)
    elif isinstance(out.get("anchor"), str) and "title" in out and _says_lines(out["anchor"], out.get("lines")):
        del out["lines"]  # an outline entry whose anchor is its line range
    if "fingerprint" in out and isinstance(out["fingerprint"], str):
        out["fingerprint"] = out["fingerprint"][:FINGERPRINT_DIGITS]
    if "E" in out and "L" in out:
        for key in _DERIVED_EXPOSURE:
            out.pop(key, None)
        for key in ZERO_BY_DEFAULT:
            if out.get(key) == 0:
                del out[key]
    return out


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | dict | str) and not value)


def _item(item: dict[str, Any]) -> None:
    """An evidence item without what its pointer already says."""
    anchor = item.get("anchor")
    if isinstance(anchor, str) and item["pointer"].endswith("#" + anchor):
        del item["anchor"]
        if _says_lines(anchor, item.get("lines")):
            del item["lines"]
    if _says_page(item["pointer"], item.get("page")):
        del item["page"]
    score = item.get("score")
    if isinstance(score, float):
        if score:
            item["score"] = round(score, 2)
        else:
            del item["score"]


def _says_page(pointer: str, page: object) -> bool:
    """Whether `pointer`'s anchor names the page `page` (`#p17`, `#p17:L3-L9`: a PDF's anchors do)."""
    anchor = pointer.rsplit("#", 1)[-1]
    return isinstance(page, int) and (anchor == f"p{page}" or anchor.startswith(f"p{page}:"))


def anchor_lines(anchor: str) -> tuple[int, int] | None:
    """The line range `anchor` states (`L12-L18`, `p3:L7:C3-L9:C4`), or None where it states none; the wire
    sends an item's `lines` only where this is None."""
    found = _LINE_ANCHOR.fullmatch(anchor)
    if found is None:
        return None
    return int(found[1]), int(found[2] or found[3] or found[1])


def _says_lines(anchor: str, lines: object) -> bool:
    """Whether `anchor` states exactly the line range `lines` (`L12-L18` for [12, 18])."""
    said = anchor_lines(anchor)
    return said is not None and lines == list(said)


def _pack(pack: dict[str, Any]) -> None:
    """An evidence pack without repeats: what its items, its verdict, its defaults and its pointers say."""
    if pack.get("action") == "check":
        verdict_alone(pack)  # counts and places: the result is the answer, nothing was delivered
        pack.pop("view", None)
        return
    _coverage_said_once(pack)
    verdict_said_once(pack)
    _defaults_and_routine_left_out(pack)
    _episode_named_by_pointers(pack)
    _said_by_the_opening_answer(pack)


def _said_by_the_opening_answer(pack: dict[str, Any]) -> None:
    """The episode's id, `L` and `L_tokens` are the same for every answer of an episode: the answer that
    opens its ledger (the first to deliver anything) says them, later ones do not (an episode is its goal on
    its file: a later answer continues the one its goal opened). The wire is stateless, so the ledger itself
    tells which answer that is: one whose episode had delivered characters before it (`E + full_chars` beyond
    its own `chars`) follows an answer that said them."""
    exposure = pack.get("exposure")
    if not isinstance(exposure, dict):
        return
    before = exposure.get("E", 0) + exposure.get("full_chars", 0) - exposure.get("chars", 0)
    if before <= 0:
        return
    exposure.pop("L", None)
    exposure.pop("L_tokens", None)
    episode = pack.get("episode")
    if isinstance(episode, dict):
        episode.pop("id", None)
        if not episode:
            del pack["episode"]


def _coverage_said_once(pack: dict[str, Any]) -> None:
    """A slot's pointers without the items of this answer that name it (in a one-slot answer, every item)
    or the matches `already_delivered` names for the one slot there is."""
    items: list[dict[str, Any]] = pack["items"]
    coverage = pack.get("coverage", [])
    named = {i["pointer"]: i.get("slots", []) for i in items}
    delivered = set(pack.get("already_delivered", []))
    for entry in coverage:
        listed = entry.get("pointers", [])
        implied = delivered if len(coverage) == 1 and delivered <= set(listed) else set()
        rest = [p for p in listed if entry["slot"] not in named.get(p, []) and p not in implied]
        if len(coverage) == 1:
            windows = _windows(items)
            rest = [p for p in rest if p not in named and not _inside(p, windows)]
        if rest:
            entry["pointers"] = rest
        else:
            entry.pop("pointers", None)


def _windows(items: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(file@rev, first line, last line) of the items no longer than a window: they show the passages
    inside them. A longer item (a page of a full view) is not one: a pointer into it says where to look."""
    found = []
    for item in items:
        lines = _pointer_lines(item["pointer"])
        if lines and len(item.get("text", "")) <= WINDOW_CHARS:
            found.append((item["pointer"].rsplit("#", 1)[0], *lines))
    return found


def _inside(pointer: str, windows: list[tuple[str, int, int]]) -> bool:
    """Whether `pointer` names lines inside one of `windows` of the same file and version."""
    lines = _pointer_lines(pointer)
    file = pointer.rsplit("#", 1)[0]
    return lines is not None and any(f == file and a <= lines[0] and lines[1] <= b for f, a, b in windows)


def _pointer_lines(pointer: str) -> tuple[int, int] | None:
    """The first and last line a pointer's anchor names (`#L12-L18`, `#p3:L4`), or None (also for an
    anchor with columns, which may begin or end outside an item that holds its lines)."""
    found = _WHOLE_LINES.fullmatch(pointer.rsplit("#", 1)[-1]) if "#" in pointer else None
    return None if found is None else (int(found[1]), int(found[2] or found[1]))


def _defaults_and_routine_left_out(pack: dict[str, Any]) -> None:
    """No derivable `unresolved`, default view or action, routine reason and scope, or scores where the
    items come best first."""
    items: list[dict[str, Any]] = pack["items"]
    derived = [c["slot"] for c in pack.get("coverage", []) if c.get("status") != "found"]
    if pack.get("unresolved", []) == derived:
        pack.pop("unresolved", None)
    if pack.get("view") == DEFAULT_VIEW:
        del pack["view"]
    pack.pop("action", None)  # the agent's own request: never echoed
    gate = pack.get("gate")
    if isinstance(gate, dict) and _ROUTINE_GATE.fullmatch(str(gate.get("reason", ""))):
        del gate["reason"]
    # Reader and method are in `scope` (or the server's business in an ordinary batch), the exposure form
    # is the view, and the robust default's reliability is in its `next` hint, in words and figure.
    pack.pop("selection", None)
    ordinary = isinstance(gate, dict) and gate.get("decision") == DEFAULT_DECISION and "reason" not in gate
    if ordinary and items:
        pack.pop("scope", None)  # an ordinary batch: its items and coverage are the answer
    if ordinary:
        del pack["gate"]  # its decision is the default and its reason routine
    _one_slot_said_once(pack)
    _one_slot_missing_left_out(pack)
    scores = [i.get("score", 0.0) for i in items]
    if scores == sorted(scores, reverse=True):  # best first: the order says what the scores would
        for item in items:
            item.pop("score", None)


def _one_slot_said_once(pack: dict[str, Any]) -> None:
    """In a one-slot answer whose every item names that slot, the items do not say it again."""
    items: list[dict[str, Any]] = pack["items"]
    coverage = pack.get("coverage", [])
    if len(coverage) == 1 and items and all(i.get("slots") == [coverage[0]["slot"]] for i in items):
        for item in items:
            del item["slots"]


def _one_slot_missing_left_out(pack: dict[str, Any]) -> None:
    """In an answer about one slot, `missing` is its coverage's default: no `coverage` says it (its
    `unresolved`, that slot, is already left out as derived). A refine that finds nothing for a goal said so
    on every answer."""
    coverage = pack.get("coverage", [])
    if len(coverage) == 1 and coverage[0].get("status") == "missing" and not coverage[0].get("pointers"):
        del pack["coverage"]


def _episode_named_by_pointers(pack: dict[str, Any]) -> None:
    """The episode's id; its objective is the agent's own, its file and version where no pointer names them."""
    episode = pack.get("episode")
    if episode is None:
        return  # a verdict about a file held whole
    episode.pop("objective", None)
    artifact = episode.get("artifact", {})
    prefix = f"{artifact.get('path')}@sha256:{artifact.get('fingerprint')}#"
    verdict = pack.get("verification")
    verdict_pointer = [verdict["pointer"]] if isinstance(verdict, dict) and "pointer" in verdict else []
    named_here = [i["pointer"] for i in pack["items"]] or [*pack.get("already_delivered", []), *verdict_pointer]
    if named_here and all(p.startswith(prefix) for p in named_here):
        del episode["artifact"]
