"""Shared fixtures: small committed artifacts, the shared evaluation data, and an independent anchor oracle."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings
from needs import missing

from sparseread_mcp import ReadEngine, Settings
from sparseread_mcp.models import EvidencePack

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent

# Readers defined by tests (tests/slow_readers.py) are sent to worker processes, which import them by
# module name: the workers' interpreter must find this folder as pytest's does.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH")) if p)

hypothesis_settings.register_profile("ci", max_examples=500, deadline=None)
hypothesis_settings.register_profile("dev", max_examples=120, deadline=None)
hypothesis_settings.register_profile(
    "stress", max_examples=int(os.environ.get("SPARSEREAD_STRESS_EXAMPLES", "5000")), deadline=None
)
hypothesis_settings.load_profile(
    "stress" if os.environ.get("SPARSEREAD_STRESS_EXAMPLES") else "ci" if os.environ.get("CI") else "dev"
)


def shared_data() -> Path | None:
    configured = os.environ.get("SPARSEREAD_SHARED_DATA")
    candidates = [Path(configured)] if configured else []
    candidates.append(REPO.parent / "shared" / "data")
    return next((p for p in candidates if (p / "financebench" / "questions.jsonl").exists()), None)


@pytest.fixture(scope="session")
def financebench() -> Path:
    data = shared_data()
    if data is None:
        pytest.skip("../shared/data is not present (set SPARSEREAD_SHARED_DATA)")
    return data / "financebench"


@pytest.fixture(scope="session")
def financebench_question(financebench: Path) -> dict[str, object]:
    """The first question whose filing text is long (a real sparse-reading case)."""
    for line in (financebench / "questions.jsonl").read_text().splitlines():
        question = json.loads(line)
        if (financebench / question["doc_file"]).stat().st_size > 200_000:
            return question
    raise AssertionError("no long FinanceBench document found")


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built wheel: the one .ci/run built (SPARSEREAD_WHEEL), else built here once per run."""
    if built := os.environ.get("SPARSEREAD_WHEEL"):
        return Path(built)
    if importlib.util.find_spec("build") is None or importlib.util.find_spec("hatchling") is None:
        missing("building the wheel needs `build` and `hatchling` (pip install -e '.[dev]')")
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [path] = out.glob("sparseread_mcp-*.whl")
    return path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def engine(tmp_path: Path) -> ReadEngine:
    return ReadEngine(Settings(roots=(tmp_path,)))


def item_spans(text: str, packs: list[EvidencePack]) -> list[tuple[int, int]]:
    """Where each item of `packs` stands in `text`, found by its text (which must occur once)."""
    spans = []
    for pack in packs:
        for item in pack.items:
            start = text.find(item.text)
            assert start >= 0 and text.find(item.text, start + 1) < 0, "item texts are unique in this document"
            spans.append((start, start + len(item.text)))
    return spans


def source_at(text: str, anchor: str) -> str:
    """An oracle independent of the package: the exact source text an anchor names."""
    lines = text.split("\n")
    if m := re.fullmatch(r"L(\d+):C(\d+)-C(\d+)", anchor):
        line, first, last = (int(g) for g in m.groups())
        return lines[line - 1][first - 1 : last]
    if m := re.fullmatch(r"L(\d+):C(\d+)-L(\d+):C(\d+)", anchor):  # from a column of one line to one of a later
        first, start, last, end = (int(g) for g in m.groups())
        picked = lines[first - 1 : last]
        picked[-1] = picked[-1][:end]
        picked[0] = picked[0][start - 1 :]
        return "\n".join(picked)
    if m := re.fullmatch(r"L(\d+)(?:-L(\d+))?", anchor):
        first = int(m.group(1))
        last = int(m.group(2) or first)
        return "\n".join(lines[first - 1 : last])
    raise AssertionError(f"unexpected anchor {anchor!r}")


@pytest.fixture(scope="session")
def swebench() -> Path:
    return shared_set("swebench")


@pytest.fixture(scope="session")
def fetaqa() -> Path:
    return shared_set("fetaqa")


@pytest.fixture(scope="session")
def tatqa() -> Path:
    return shared_set("tatqa")


@pytest.fixture(scope="session")
def trajectories() -> Path:
    return shared_set("trajectories")


def shared_set(name: str) -> Path:
    """One folder of ../shared/data, or a skip that says how to provide it."""
    data = shared_data()
    if data is None or not (data / name).is_dir():
        pytest.skip(f"../shared/data/{name} is not present (set SPARSEREAD_SHARED_DATA)")
    return data / name
