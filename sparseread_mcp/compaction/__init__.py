"""History compaction: old tool results shortened to the lines the next steps may use, verbatim.

    from sparseread_mcp.compaction import compact_history
    messages = compact_history(messages)  # OpenAI chat or Anthropic messages; a new list, same shape

Framework hooks: `sparseread_mcp.compaction.langgraph.pre_model_hook` (LangGraph's create_react_agent).
"""

from .api import compact_history, compact_messages
from .compactor import Compaction, CompactionSettings, SpanPlan, compact
from .elide import DEFAULT_CAUTION, Elided, ElisionSettings, elide
from .learned import LearnedRouter, train
from .router import DefaultRouter, Router, features
from .summarize import ExtractiveSummarizer, Summarizer
from .transcript import Transcript, load, load_file, validate

__all__ = [
    "DEFAULT_CAUTION",
    "Compaction",
    "CompactionSettings",
    "DefaultRouter",
    "Elided",
    "ElisionSettings",
    "ExtractiveSummarizer",
    "LearnedRouter",
    "Router",
    "SpanPlan",
    "Summarizer",
    "Transcript",
    "compact",
    "compact_history",
    "compact_messages",
    "elide",
    "features",
    "load",
    "load_file",
    "train",
    "validate",
]
