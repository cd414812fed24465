"""Every error sparseread-mcp raises on purpose.

```
SparsereadError
├─ OutsideRoots         a path (or a git repository's object store) reaches outside every root
├─ UnsupportedArtifact  no reader accepts the path (directory without intent, missing, damaged)
│  ├─ BinaryArtifact    binary content no reader can show as text
│  │  └─ OverLimit      over a safety limit (zip bomb, huge sheet, a worker's memory): refused, its card given
│  └─ ReaderCrashed     a reader's worker process died or failed on the file (the server goes on)
├─ MissingDependency    the reader exists; its extra is not installed (message has the pip command)
├─ AnchorError          malformed or out-of-range anchor (message shows the valid range)
├─ BudgetTooSmall       nothing useful fits (message says the minimum and how to narrow)
├─ StaleArtifact        the file changed under an episode or pointer
├─ IntentError          an intent or action that cannot be carried out as given
│  ├─ PatternTooSlow    a regex needle used up its matching time (catastrophic backtracking)
│  └─ OverQuota         a projection that alone would pass the projections' disk quota: refused, not written
├─ ConfigError          a bad setting (names the flag or variable and the bad value)
├─ OutOfMemory          a call ran past the server's memory ceiling (the server goes on serving)
├─ StoreUnavailable     the session store cannot be written: sessions go on in memory only
└─ ServerBusy           a call found no place to run before its time limit (its session's share, or all)
```

Messages are written for the model that has to act on them: what failed, the offending value,
and the next step.
"""

from __future__ import annotations


class SparsereadError(Exception):
    """Base class: a user-facing failure with an actionable message."""


class OutsideRoots(SparsereadError):
    """The path resolves outside every configured root."""


class UnsupportedArtifact(SparsereadError):
    """No reader accepts the path."""


class BinaryArtifact(UnsupportedArtifact):
    """Binary content that no reader can show as text."""


class OverLimit(BinaryArtifact):
    """A file over a safety limit (a zip bomb, a huge sheet): refused before parsing; its card is still given."""


class ReaderCrashed(UnsupportedArtifact):
    """A reader's worker process crashed or failed on a file; the server goes on and the file can be read by lines."""


class MissingDependency(SparsereadError):
    """A reader needs an optional extra that is not installed."""


class AnchorError(SparsereadError):
    """An anchor or pointer is malformed or out of range."""


class BudgetTooSmall(SparsereadError):
    """Nothing useful fits in the requested budget."""


class StaleArtifact(SparsereadError):
    """The artifact changed under an episode or a pointer."""


class IntentError(SparsereadError):
    """An intent, action or cursor that cannot be carried out as given."""


class ConfigError(SparsereadError):
    """A bad setting."""


class OutOfMemory(SparsereadError):
    """A call allocated past the server's memory ceiling; the call fails, the server goes on."""


class StoreUnavailable(SparsereadError):
    """The persistent session store failed; sessions are kept in memory only until it works again."""


class PatternTooSlow(IntentError):
    """A regex needle used up its matching time in a call: the message names it and suggests a plain needle."""


class OverQuota(IntentError):
    """A derived file (a table projection) that alone would pass the disk quota its kind shares: refused,
    nothing of it written; the message gives its size and the limit."""


class ServerBusy(SparsereadError):
    """A call could not start within its time limit: its session's share of calls, or every place, was taken."""
