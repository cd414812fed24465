"""History compaction (StateComp): replace what the current state no longer needs, safely."""

from .api import compact_messages
from .compactor import Compaction, CompactionSettings, SpanPlan, compact
from .learned import LearnedRouter, train
from .router import DefaultRouter, Router, features
from .summarize import ExtractiveSummarizer, Summarizer
from .transcript import Transcript, load, load_file, validate

__all__ = [
    "Compaction",
    "CompactionSettings",
    "DefaultRouter",
    "ExtractiveSummarizer",
    "LearnedRouter",
    "Router",
    "SpanPlan",
    "Summarizer",
    "Transcript",
    "compact",
    "compact_messages",
    "features",
    "load",
    "load_file",
    "train",
    "validate",
]
