"""Readers: one module per artifact type, behind one contract (`Reader`)."""

from ..vocabulary import ACTIONS, Action
from .base import OutlineEntry, ParsedArtifact, Passage, Reader
from .registry import ReaderRegistry, default_registry
from .text import TextReader

__all__ = [
    "ACTIONS",
    "Action",
    "OutlineEntry",
    "ParsedArtifact",
    "Passage",
    "Reader",
    "ReaderRegistry",
    "TextReader",
    "default_registry",
]
