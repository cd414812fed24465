"""A read of a real article in a new process, to see where its model encoded: which modules that process
loaded (a model's engine must run in the workers, never in the server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import shared_set

#: The Notre Dame article's first 23 paragraphs: plain prose, reranked in a few seconds.
ARTICLE_CHARS = 13_353


def read_in_a_new_process(root: Path, semantic_model: str, modules: tuple[str, ...]) -> dict[str, Any]:
    """One focus on the article under `root` by a new engine; its items, its configuration, and whether any of
    `modules` was loaded in that (the server's) process."""
    text = (shared_set("articles") / "docs" / "University_of_Notre_Dame.txt").read_text(encoding="utf-8")
    (root / "notre_dame.txt").write_text(text[:ARTICLE_CHARS], encoding="utf-8")
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings\n"
        f"root = Path({str(root)!r})\n"
        f"settings = Settings(roots=(root,), cache_dir=root / 'cache', semantic_model={semantic_model!r})\n"
        "goal = Intent(goal='when did the school start teaching engineering')\n"
        "pack = ReadEngine(settings).read('s', ReadRequest(target='notre_dame.txt', intent=goal))\n"
        "print(json.dumps({'items': len(pack.items), 'how': pack.selection.configuration,\n"
        f"                  'loaded here': any(m in sys.modules for m in {modules!r})}}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer
