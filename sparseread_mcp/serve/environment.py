"""The environment variables the server reads, as `--help` lists them (flags win over them; each flag's
own help names its variable too). `tests/test_docs.py` checks this list against the package's source."""

from __future__ import annotations

#: (variable, what it sets): every SPARSEREAD_* variable a user may set.
VARIABLES: tuple[tuple[str, str], ...] = (
    ("SPARSEREAD_ROOTS", "readable folders, separated like PATH (--root)"),
    ("SPARSEREAD_HOST", "HTTP host (--host; default 127.0.0.1)"),
    ("SPARSEREAD_PORT", "HTTP port (--port; default 8765)"),
    ("SPARSEREAD_TOKEN", "bearer token every HTTP request must carry (--token)"),
    ("SPARSEREAD_ALLOW_UNAUTHENTICATED", "1: serve a non-loopback host without a token (dangerous)"),
    ("SPARSEREAD_ALLOWED_HOSTS", "extra Host headers, comma-separated (--allow-host)"),
    ("SPARSEREAD_ALLOWED_ORIGINS", "extra Origins, comma-separated (--allow-origin)"),
    ("SPARSEREAD_HEADER_TIMEOUT", "seconds an HTTP request may take to arrive (10)"),
    ("SPARSEREAD_MAX_CONNECTIONS", "open HTTP connections at most (512)"),
    ("SPARSEREAD_STORE", "session store: a SQLite file or redis://host:port/db (--store)"),
    ("SPARSEREAD_SESSION", "stdio: the session name a store resumes (--session)"),
    ("SPARSEREAD_CACHE_DIR", "derived files and parsed indexes (--cache-dir)"),
    ("SPARSEREAD_CACHE_MB", "memory for parsed files and indexes kept between calls (512)"),
    ("SPARSEREAD_REPO_INDEX", "0: keep no directory index on disk"),
    ("SPARSEREAD_PROJECTION_QUOTA_MB", "disk for table projections (512)"),
    ("SPARSEREAD_TOKENIZER", "o200k_base (default), cl100k_base or chars (--tokenizer)"),
    ("SPARSEREAD_TOKEN_MARGIN", "share added to every token count (--token-margin)"),
    ("SPARSEREAD_LOCATION", "auto or one location method (--location)"),
    ("SPARSEREAD_SEMANTIC_MODEL", "the dense model: a package name or a local folder"),
    ("SPARSEREAD_BUDGET_TOKENS", "default answer budget in tokens (8000)"),
    ("SPARSEREAD_NATIVE_FIT_TOKENS", "files up to this many tokens come back whole (2000)"),
    ("SPARSEREAD_PASSAGE_CHARS", "passage size in characters (500)"),
    ("SPARSEREAD_CALL_TIMEOUT", "seconds a call may run (60)"),
    ("SPARSEREAD_MAX_PARSE_BYTES", "larger files get a card and line ranges only (64 MiB)"),
    ("SPARSEREAD_SEARCH_MAX_FILE_BYTES", "folder search skips larger files (2 MiB)"),
    ("SPARSEREAD_INVENTORY_MAX_FILES", "files one folder walk lists at most (20,000)"),
    ("SPARSEREAD_XLSX_MAX_UNZIPPED_MB", "workbooks declaring more are refused (256)"),
    ("SPARSEREAD_XLSX_MAX_RATIO", "workbook parts inflating more are refused (200)"),
    ("SPARSEREAD_XLSX_MAX_CELLS", "sheets with more cells are refused (1,000,000)"),
    ("SPARSEREAD_MAX_MEMORY_MB", "the server's memory ceiling in MiB (--max-memory-mb)"),
    ("SPARSEREAD_WORKERS", "worker processes (--workers)"),
    ("SPARSEREAD_WORKER_MEMORY_MB", "memory of one worker in MiB (--worker-memory-mb)"),
    ("SPARSEREAD_MAX_CALLS", "calls at once, server-wide (--max-calls)"),
    ("SPARSEREAD_MAX_CALLS_PER_SESSION", "calls of one session at once (--max-calls-per-session)"),
    ("SPARSEREAD_MAX_HTTP_SESSIONS", "stateful HTTP sessions at most (--max-http-sessions)"),
    ("SPARSEREAD_MAX_HTTP_SESSIONS_PER_CLIENT", "of one client (--max-http-sessions-per-client)"),
    ("SPARSEREAD_SESSION_IDLE_TIMEOUT", "seconds before an idle HTTP session ends (--session-idle-timeout)"),
    ("SPARSEREAD_MAX_STREAMS", "open GET event streams at most (--max-streams)"),
    ("SPARSEREAD_MAX_STREAMS_PER_CLIENT", "of one client (--max-streams-per-client)"),
)


def help_text() -> str:
    """The variables as `--help` prints them, after the options."""
    width = max(len(name) for name, _ in VARIABLES)
    lines = ["environment variables (flags win over them):"]
    lines += [f"  {name:<{width}}  {what}" for name, what in VARIABLES]
    return "\n".join(lines)
