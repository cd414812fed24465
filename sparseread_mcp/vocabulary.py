"""The words every layer shares, defined once: what an agent may ask (actions, views, wants), how evidence
is exposed, and what the gate and verification decide. Plain literals, so the core needs no MCP names."""

from __future__ import annotations

from typing import Literal

#: What a read does: an overview, passages for a goal, per-slot evidence, more of it, or a check.
Action = Literal["scout", "focus", "collect", "refine", "verify", "check"]
ACTIONS: tuple[Action, ...] = ("scout", "focus", "collect", "refine", "verify")
#: The shape of an answer's evidence.
View = Literal["snippets", "card", "outline", "section", "lines", "full", "summary", "compact", "projection"]
#: How located passages become delivered text.
ExposureForm = Literal["snippets", "windows", "context", "pages"]
#: How passages are ranked for a goal: the methods `locate.LocatorSet` builds.
LocationMethod = Literal["lexical", "bm25", "dense", "hybrid"]
#: The answer shape an intent wants.
Want = Literal["fact", "list", "count", "table", "verbatim", "summary"]
CoverageMode = Literal["selective", "exhaustive"]
SlotStatus = Literal["found", "partial", "missing"]
#: What the Budgeted Read Gate decided for one answer.
GateDecision = Literal["native_fit", "sparse", "full_view", "fallback"]
VerifyStatus = Literal["supported", "contradicted", "unverified", "not_found", "ok", "moved", "changed", "gone"]

#: The tools' names on the MCP surface, defined once: the server registers them, messages name them.
PREVIEW_TOOL = "sro_preview"
READ_TOOL = "sro_read"
CARD_TOOL = "sro_card"
COMPACT_TOOL = "sro_compact"
TOOL_PREFIX = "sro_"

#: The gate's reason for an answer whose every match this session already received in another episode
#: (a verify of what a collect sent): the wire then sends the verdict and pointers alone.
HELD_IN_SESSION = "nothing new to deliver: this session already received every match"
