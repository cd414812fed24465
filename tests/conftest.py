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


#: The end-to-end groups, marked `slow` here in one place: `python -m pytest` (the README's command) leaves
#: them out and `python -m pytest -m slow` runs them; CI runs both. A group belongs here when its time goes to
#: starting real server processes (stdio, HTTP, under a terminal), real clients or installs, or a campaign;
#: what it checks is the same either way. Whole files, then single tests (`file::test`, any parameters).
SLOW_FILES = frozenset(
    {
        "test_clients.py",  # real clients from npm
        "test_fair_serving.py",  # an HTTP server under floods
        "test_fuzz_campaign.py",
        "test_hostile_patterns.py",  # every pattern of the package on 200,000-character strings
        "test_http_deploy.py",
        "test_http_security.py",
        "test_inspector.py",  # the MCP Inspector from npm
        "test_integrations.py",  # every shipped configuration through uvx
        "test_isolation.py",  # attacks on a real HTTP server while it is probed
        "test_logs.py",
        "test_mcp_readers.py",
        "test_mcp_transports.py",
        "test_memory_ceiling.py",
        "test_packaging.py",  # the built wheel, installed
        "test_persistence.py",  # servers killed and restarted
        "test_redis_replicas.py",
        "test_reliability_http.py",
        "test_savings.py",  # `trace` and `bench` from the shell, over a server's store
        "test_session_isolation.py",
    }
)
SLOW_TESTS = frozenset(
    {
        "test_compaction.py::test_a_learned_router_trains_for_precision_and_compacts_validly",
        "test_e5.py::test_a_question_in_other_words_reaches_its_passage_over_stdio",
        "test_dense.py::test_minilm_reranks_a_real_article_asked_in_other_words",
        "test_hostile_cpu.py::test_another_session_is_answered_while_a_regex_needle_runs",
        "test_hostile_cpu.py::test_http_sessions_and_healthz_are_answered_while_a_regex_needle_runs",
        "test_preview_samples.py::test_over_stdio_a_sample_states_the_row_and_its_pointer_verifies",
        "test_progress.py::test_notifications_cross_the_stdio_wire",
        "test_terminal.py::test_healthz_gives_the_version_and_allow_host_takes_a_host_with_or_without_a_port",
        # At a terminal: Ctrl-C over stdio (the case that hung) stays in the fast suite, the others are here.
        "test_terminal.py::test_the_server_says_what_it_serves_and_stops_at_ctrl_c_or_sigterm[sigterm-stdio]",
        "test_terminal.py::test_the_server_says_what_it_serves_and_stops_at_ctrl_c_or_sigterm[ctrl-c-http]",
        "test_terminal.py::test_the_server_says_what_it_serves_and_stops_at_ctrl_c_or_sigterm[sigterm-http]",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        file = item.path.name
        test = f"{file}::{item.name}"
        if file in SLOW_FILES or test in SLOW_TESTS or test.split("[", 1)[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def engine(tmp_path: Path) -> ReadEngine:
    return ReadEngine(Settings(roots=(tmp_path,)))


def item_spans(text: str, packs: list[EvidencePack]) -> list[tuple[int, int]]:
    """Where each item of `packs` stands in `text`: where its anchor says (`span_at`), which must hold its text
    (a short piece such as "granary. " may occur many times: its text alone cannot place it)."""
    spans = []
    for pack in packs:
        for item in pack.items:
            start, end = span_at(text, item.pointer.rsplit("#", 1)[1])
            assert text[start:end] == item.text, f"{item.pointer} holds its text"
            spans.append((start, end))
    return spans


def source_at(text: str, anchor: str) -> str:
    """An oracle independent of the package: the exact source text an anchor names."""
    start, end = span_at(text, anchor)
    return text[start:end]


def span_at(text: str, anchor: str) -> tuple[int, int]:
    """An oracle independent of the package: the character offsets of what an anchor names."""
    starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]

    def line_end(line: int) -> int:
        return starts[line] - 1 if line < len(starts) else len(text)

    if m := re.fullmatch(r"L(\d+):C(\d+)-C(\d+)", anchor):
        line, first, last = (int(g) for g in m.groups())
        return starts[line - 1] + first - 1, min(starts[line - 1] + last, line_end(line))
    if m := re.fullmatch(r"L(\d+):C(\d+)-L(\d+):C(\d+)", anchor):  # from a column of one line to one of a later
        first, start, last, end = (int(g) for g in m.groups())
        return starts[first - 1] + start - 1, min(starts[last - 1] + end, line_end(last))
    if m := re.fullmatch(r"L(\d+)(?:-L(\d+))?", anchor):
        first = int(m.group(1))
        return starts[first - 1], line_end(int(m.group(2) or first))
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
