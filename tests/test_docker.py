"""The Dockerfile's contract (no engine here; hadolint lints it in CI): a swappable base, the wheel,
a non-root user, /workspace as the root, HTTP by default with a health check."""

from __future__ import annotations

import shutil
import subprocess

from conftest import REPO

DOCKERFILE = (REPO / "Dockerfile").read_text()
INSTRUCTIONS = [line.strip() for line in DOCKERFILE.splitlines() if line.strip() and not line.startswith("#")]


def test_the_base_image_is_an_argument_and_the_server_comes_from_the_wheel() -> None:
    assert INSTRUCTIONS[0].startswith("ARG PYTHON_IMAGE=python:3.11-slim")
    froms = [line for line in INSTRUCTIONS if line.startswith("FROM ")]
    assert froms == ["FROM ${PYTHON_IMAGE} AS wheel", "FROM ${PYTHON_IMAGE}"]
    assert "python -m build --wheel" in DOCKERFILE and "COPY --from=wheel /dist /tmp/dist" in DOCKERFILE
    # The extras are an argument too (`--build-arg EXTRAS=pdf,e5`), the pdf extra by default.
    assert (
        "ARG EXTRAS=pdf" in runtime_instructions() and 'pip install --no-cache-dir "${wheel}[${EXTRAS}]"' in DOCKERFILE
    )
    runtime = DOCKERFILE.split("FROM ${PYTHON_IMAGE}\n", 1)[1]
    assert "COPY sparseread_mcp" not in runtime  # no sources in the image, only the installed wheel


def runtime_instructions() -> list[str]:
    """The instructions of the second stage: a stage's ARG is visible only inside it."""
    return INSTRUCTIONS[INSTRUCTIONS.index("FROM ${PYTHON_IMAGE}") :]


def test_it_runs_as_a_user_over_workspace_with_http_and_a_health_check() -> None:
    assert "USER 10001" in INSTRUCTIONS
    assert 'ENTRYPOINT ["sparseread-mcp", "--root", "/workspace"]' in INSTRUCTIONS
    assert 'CMD ["--http", "--host", "0.0.0.0", "--port", "8765"]' in INSTRUCTIONS
    assert any(line.startswith("HEALTHCHECK") for line in INSTRUCTIONS) and "/healthz" in DOCKERFILE


def test_hadolint_passes_when_installed() -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        return  # .ci/run runs hadolint itself; the dev extra installs it
    done = subprocess.run([hadolint, str(REPO / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
