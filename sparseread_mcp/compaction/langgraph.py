"""Compaction in LangGraph's history hook: `create_react_agent(model, tools, pre_model_hook=pre_model_hook())`.

The hook runs before every model call. It hands the model the compacted history (`llm_input_messages`) and
leaves the graph's state alone: the full history stays in the state (and in a checkpointer, if any), so the
compaction is recomputed from it at each call and nothing is lost for good. Needs `langchain-core`, which
LangGraph brings; importing this module without it raises `MissingDependency` with the install line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from ..errors import MissingDependency
from .api import compact_history
from .elide import DEFAULT_CAUTION, DEFAULT_KEEP_LAST, resolve

try:
    from langchain_core.messages import BaseMessage, convert_to_openai_messages
    from langchain_core.tools import BaseTool, StructuredTool
except ImportError as exc:  # pragma: no cover - exercised only where LangGraph is not installed
    raise MissingDependency(
        "the LangGraph hook needs langchain-core: pip install langgraph (or langchain-core)"
    ) from exc

Hook = Callable[[Mapping[str, Any]], dict[str, list[BaseMessage]]]


def compact_langchain(
    messages: Sequence[BaseMessage],
    *,
    caution: float | None = DEFAULT_CAUTION,
    keep_last: int = DEFAULT_KEEP_LAST,
    archive: MutableMapping[str, str] | None = None,
) -> list[BaseMessage]:
    """LangChain messages in, LangChain messages out: the same objects, except tool messages whose text was
    shortened, which are copies with the shortened text (ids, names and tool call ids kept)."""
    as_openai = [convert_to_openai_messages(m) for m in messages]
    compacted = compact_history(as_openai, caution=caution, keep_last=keep_last, fmt="openai", archive=archive)
    out: list[BaseMessage] = []
    for message, before, after in zip(messages, as_openai, compacted, strict=True):
        changed = after.get("content") != before.get("content")
        out.append(message.model_copy(update={"content": after["content"]}) if changed else message)
    return out


def pre_model_hook(
    *,
    caution: float | None = DEFAULT_CAUTION,
    keep_last: int = DEFAULT_KEEP_LAST,
    archive: MutableMapping[str, str] | None = None,
) -> Hook:
    """A `pre_model_hook` for `langgraph.prebuilt.create_react_agent`: the model is sent the compacted
    history; the graph's state keeps every message as it was. `caution` and `keep_last` as in
    `compact_history`; `archive` receives the full text of each shortened tool result by tool call id."""

    def hook(state: Mapping[str, Any]) -> dict[str, list[BaseMessage]]:
        messages = list(state["messages"])
        return {
            "llm_input_messages": compact_langchain(messages, caution=caution, keep_last=keep_last, archive=archive)
        }

    return hook


def full_result_tool(archive: Mapping[str, str]) -> BaseTool:
    """A tool that gives the model back the full text of a shortened tool result, by the pointer its header
    names (`[compacted: k4tC]`: the tool call id, or a piece of it): pass the same dict as
    `pre_model_hook(archive=...)`, and this tool to the agent. One call dereferences any shortened result."""

    def full_result(tool_call_id: str) -> str:
        """The full text of an earlier tool result that the history shows shortened, by the pointer its header names
        (`[compacted: k4tC]` names `k4tC`: a tool call id, or a piece of one)."""
        text = resolve(archive, tool_call_id)
        if text is None:
            known = ", ".join(sorted(archive)[-5:]) or "none yet"
            return f"no shortened result has the tool call id {tool_call_id!r}; shortened ones so far: {known}"
        return text

    return StructuredTool.from_function(full_result)
