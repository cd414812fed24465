"""Tools the CI installs (a built wheel, the MCP Inspector): a local run without them skips with the reason;
under CI the same absence fails, so CI can never pass by skipping."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(reason: str) -> None:
    """Skip locally; fail under CI=true."""
    if in_ci():
        pytest.fail(f"{reason} (CI must provide it: see .ci/run)")
    pytest.skip(reason)
