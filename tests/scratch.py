"""A scratch folder for module-level fixtures (hypothesis tests cannot take pytest's `tmp_path`), removed
when the test process exits, so test runs leave nothing behind in the system's temporary folder."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_dir(prefix: str) -> Path:
    """A new empty folder, deleted with everything in it at exit."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
