"""sparseread-mcp: a reading controller for AI agents, served over MCP.

Library use::

    from sparseread_mcp import ReadEngine, ReadRequest, Settings, Intent
    engine = ReadEngine(Settings(roots=(Path("docs"),)))
    pack = engine.read("my-session", ReadRequest(target="report.md", intent=Intent(goal="renewal terms")))
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("sparseread-mcp")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0"

from .compaction import compact_history
from .config import Settings
from .engine import ReadEngine, ReadRequest
from .errors import (
    AnchorError,
    BinaryArtifact,
    BudgetTooSmall,
    ConfigError,
    IntentError,
    MissingDependency,
    OutsideRoots,
    SparsereadError,
    StaleArtifact,
    UnsupportedArtifact,
)
from .models import Card, EvidenceItem, EvidencePack, Intent, Preview, Slot
from .readers import Reader, default_registry

__all__ = [
    "AnchorError",
    "BinaryArtifact",
    "BudgetTooSmall",
    "Card",
    "ConfigError",
    "EvidenceItem",
    "EvidencePack",
    "Intent",
    "IntentError",
    "MissingDependency",
    "OutsideRoots",
    "Preview",
    "ReadEngine",
    "ReadRequest",
    "Reader",
    "Settings",
    "Slot",
    "SparsereadError",
    "StaleArtifact",
    "UnsupportedArtifact",
    "__version__",
    "compact_history",
    "default_registry",
]
