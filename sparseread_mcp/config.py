"""Settings: defaults < SPARSEREAD_* environment variables < command-line flags."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import ConfigError

#: Responses never exceed this many tokens (90% of the common 25k client cap).
HARD_RESPONSE_CAP_TOKENS = 22_500
#: `auto` (the calibrated selector) or one fixed location method.
LOCATION_CHOICES = ("auto", "lexical", "bm25", "dense", "hybrid")
#: The smallest budget an answer is fitted to: below what a passage needs, it degrades (fewer items, then
#: pointers only, then the card; see gate/respond.py) instead of failing.
MIN_BUDGET_TOKENS = 200
#: What `--session` (SPARSEREAD_SESSION) accepts.
SESSION_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Server and engine settings. Build with `Settings.from_env` or directly in tests."""

    roots: tuple[Path, ...] = field(default_factory=lambda: (Path.cwd(),))
    #: An artifact whose full view is at most this many tokens is delivered whole (no protocol tax).
    native_fit_tokens: int = 2_000
    #: Response budget when a call names none.
    default_budget_tokens: int = 8_000
    #: Target size of one passage, in characters; structure wins over this size.
    passage_chars: int = 500
    #: How evidence is located: `auto` lets the calibrated selector choose per artifact type, size and
    #: intent; `lexical`, `bm25`, `dense` or `hybrid` fixes the method (the last two need `[semantic]`).
    location: str = "auto"
    #: Embedding model for dense and hybrid location: `auto` (E5 with the `e5` extra, else MiniLM-L6 with the
    #: `semantic` extra), `multilingual-e5-small`, or a BERT model's sentence-transformers folder (or its name in
    #: the Hugging Face cache: nothing is downloaded).
    semantic_model: str = "auto"
    #: Token encoding used for every count (bundled, offline).
    tokenizer: str = "o200k_base"
    #: Extra share added to every token count, for clients whose tokenizer counts more (0.15 = +15%).
    token_margin: float = 0.0
    #: When set, sessions and episodes are kept in this SQLite file and survive a restart, or, given a
    #: `redis://host:port/db` URL, in Redis, shared by every replica that names it (see `store_setting`).
    store: Path | str | None = None
    #: The stdio client's session: None gives every server process a new one; a name resumes the session
    #: of that name from a persistent `store` (the only way a new process reads an earlier one's state).
    session: str | None = None
    #: Each tool call stops cooperatively after this many seconds (and at once when the client cancels).
    call_timeout_seconds: float = 60.0
    #: Calls that run at once, server-wide, and of those at most this many from one session: the rest
    #: wait, the sessions with the fewest calls running served first; a call that cannot start before its
    #: time limit gets an error saying so.
    max_calls: int = 32
    max_calls_per_session: int = 4
    #: Files larger than this get their card and streamed line ranges only, never a full parse.
    max_parse_bytes: int = 64 * 1024 * 1024
    #: A directory's walk lists at most this many files (the answer says what the cap cut).
    inventory_max_files: int = 20_000
    #: A directory needle search skips files larger than this (named in its answer): read those one by one.
    search_max_file_bytes: int = 2 * 1024 * 1024
    #: Workbooks are refused (their card still given) past these, checked before any XML is parsed: the
    #: uncompressed size the zip declares, one part's compression ratio, and the cells of all sheets.
    xlsx_max_unzipped_mb: int = 256
    xlsx_max_ratio: float = 200.0
    xlsx_max_cells: int = 1_000_000
    #: Approximate memory for parsed files and indexes kept between calls (least recently used first out).
    cache_mb: int = 512
    #: A server-wide memory ceiling in MiB (0: none). The server process cannot allocate past it, and
    #: every memory budget inside (DuckDB, caches) is fitted under it.
    max_memory_mb: int = 0
    #: Worker processes that parse, hash, diff and walk files (0: as many as the machine has cores, 2 to 8).
    #: Each runs one task at a time under `worker_memory_mb` and the call's deadline, and is killed and
    #: replaced when it overruns or crashes; a reading session holds at most half of them at once.
    workers: int = 0
    #: What one worker may allocate beyond the libraries it starts with, in MiB (0: no limit).
    worker_memory_mb: int = 1024
    #: Where derived files (table projections) are written; never inside a root.
    cache_dir: Path = field(
        default_factory=lambda: Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sparseread-mcp"
    )
    #: Table projections (view='projection') share this much disk under `cache_dir/projections`: the least
    #: recently written are removed to make room, and one that alone would pass it is refused.
    projection_quota_mb: int = 512
    #: Keep each directory's file index under `cache_dir/repoindex` (never inside a root), so a new
    #: session on an unchanged repository starts warm and a changed one re-reads only its changed files.
    repo_index: bool = True
    host: str = "127.0.0.1"
    port: int = 8765
    #: When set, every HTTP request must carry `Authorization: Bearer <token>`.
    token: str | None = None
    #: Serve HTTP on a non-loopback address without a token (dangerous: anyone who reaches the port reads
    #: every file under the roots). Without it such a server refuses to start.
    allow_unauthenticated: bool = False
    #: An HTTP connection that has not sent a complete request (head and body) within this many seconds
    #: is closed (uvicorn has no such timeout: half-sent requests would otherwise hold sockets for ever).
    header_timeout_seconds: float = 10.0
    #: Open HTTP connections at most; past it the oldest one still waiting for its request is closed
    #: (or, when every connection is busy, the new one), so the process never runs out of descriptors.
    max_connections: int = 512
    #: Stateful HTTP sessions (those opened with `initialize`) at most, in total and per client (a client is
    #: its bearer credential and address). Past a limit the least recently used idle session is ended to make
    #: room (its client's own first); only when none is idle is the new session refused (429 or 503).
    max_http_sessions: int = 1_024
    max_http_sessions_per_client: int = 256
    #: A stateful HTTP session with no request for this many seconds is ended, and its reading state dropped.
    session_idle_seconds: float = 900.0
    #: Open GET event streams at most, in total and per client; more are refused (503 or 429). Fitted under
    #: half of `max_connections` when set higher, so streams held open leave connections for calls and
    #: the health check.
    max_streams: int = 128
    max_streams_per_client: int = 32
    #: Host and Origin values allowed besides the loopback names (DNS-rebinding protection).
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.roots:
            raise ConfigError("no roots configured: pass --root DIR (or SPARSEREAD_ROOTS) at least once")
        if not MIN_BUDGET_TOKENS <= self.default_budget_tokens <= HARD_RESPONSE_CAP_TOKENS:
            raise ConfigError(
                f"default budget {self.default_budget_tokens} tokens is out of range: "
                f"use {MIN_BUDGET_TOKENS}..{HARD_RESPONSE_CAP_TOKENS}"
            )
        if self.native_fit_tokens < 0:
            raise ConfigError(f"native fit threshold {self.native_fit_tokens} must be >= 0")
        if self.location not in LOCATION_CHOICES:
            raise ConfigError(f"location {self.location!r} is not known: choose one of {', '.join(LOCATION_CHOICES)}")
        if self.passage_chars < 200:
            raise ConfigError(f"passage size {self.passage_chars} chars is too small: use at least 200")
        for key, value in (
            ("SPARSEREAD_XLSX_MAX_UNZIPPED_MB", self.xlsx_max_unzipped_mb),
            ("SPARSEREAD_XLSX_MAX_RATIO", self.xlsx_max_ratio),
            ("SPARSEREAD_XLSX_MAX_CELLS", self.xlsx_max_cells),
            ("SPARSEREAD_CACHE_MB", self.cache_mb),
            ("SPARSEREAD_SEARCH_MAX_FILE_BYTES", self.search_max_file_bytes),
            ("SPARSEREAD_INVENTORY_MAX_FILES", self.inventory_max_files),
            ("SPARSEREAD_PROJECTION_QUOTA_MB", self.projection_quota_mb),
        ):
            if value <= 0:
                raise ConfigError(f"{key}={value} must be positive")
        if self.max_memory_mb < 0 or 0 < self.max_memory_mb < 256:
            raise ConfigError(f"SPARSEREAD_MAX_MEMORY_MB={self.max_memory_mb} is too small: use 0 (none) or >= 256")
        if self.max_memory_mb and self.cache_mb > self.max_memory_mb // 4:
            # The cache is fitted under the ceiling (a quarter of it), not refused: a ceiling set alone
            # must not make the default cache size an error. Frozen, hence object.__setattr__.
            object.__setattr__(self, "cache_mb", self.max_memory_mb // 4)
        if self.max_memory_mb and (not self.worker_memory_mb or self.worker_memory_mb > self.max_memory_mb // 2):
            # Likewise each worker, whose parse would otherwise be allowed more than the whole server.
            object.__setattr__(self, "worker_memory_mb", max(64, self.max_memory_mb // 2))
        if not 0 < self.header_timeout_seconds <= 3600:
            raise ConfigError(
                f"SPARSEREAD_HEADER_TIMEOUT={self.header_timeout_seconds} is out of range: use 0 < seconds <= 3600"
            )
        if self.max_connections < 1:
            raise ConfigError(f"SPARSEREAD_MAX_CONNECTIONS={self.max_connections} must be at least 1")
        if not 0 <= self.workers <= 64:
            raise ConfigError(f"SPARSEREAD_WORKERS={self.workers} is out of range: use 0 (one per core) to 64")
        if self.worker_memory_mb < 0 or 0 < self.worker_memory_mb < 64:
            raise ConfigError(
                f"SPARSEREAD_WORKER_MEMORY_MB={self.worker_memory_mb} is too small: use 0 (no limit) or >= 64"
            )
        self._check_serving_limits()

    def _check_serving_limits(self) -> None:
        if self.max_streams >= self.max_connections > 1:
            # Fitted under the connection cap (half of it), not refused, as the cache under the memory ceiling:
            # streams held open must leave connections for calls and /healthz. Frozen, hence object.__setattr__.
            object.__setattr__(self, "max_streams", self.max_connections // 2)
            object.__setattr__(self, "max_streams_per_client", min(self.max_streams_per_client, self.max_streams))
        if self.session is not None and not SESSION_NAME.match(self.session):
            raise ConfigError(
                f"SPARSEREAD_SESSION={self.session[:80]!r} is not a session name: use 1-64 letters, digits, '.', '_' "
                "or '-'"
            )
        for (total_key, total), (part_key, part) in (
            (
                ("SPARSEREAD_MAX_CALLS", self.max_calls),
                ("SPARSEREAD_MAX_CALLS_PER_SESSION", self.max_calls_per_session),
            ),
            (
                ("SPARSEREAD_MAX_HTTP_SESSIONS", self.max_http_sessions),
                ("SPARSEREAD_MAX_HTTP_SESSIONS_PER_CLIENT", self.max_http_sessions_per_client),
            ),
            (
                ("SPARSEREAD_MAX_STREAMS", self.max_streams),
                ("SPARSEREAD_MAX_STREAMS_PER_CLIENT", self.max_streams_per_client),
            ),
        ):
            if part < 1 or total < 1:
                raise ConfigError(f"{total_key}={total} and {part_key}={part} must be at least 1")
            if part > total:
                raise ConfigError(f"{part_key}={part} is more than {total_key}={total}: use at most {total}")
        if not 0 < self.session_idle_seconds <= 7 * 24 * 3600:
            raise ConfigError(
                f"SPARSEREAD_SESSION_IDLE_TIMEOUT={self.session_idle_seconds} is out of range: "
                "use 0 < seconds <= 604800"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read `SPARSEREAD_*` variables from `environ` (default: the process environment)."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        if roots := env.get("SPARSEREAD_ROOTS"):
            values["roots"] = tuple(Path(p) for p in roots.split(os.pathsep) if p)
        for name, key in (
            ("native_fit_tokens", "SPARSEREAD_NATIVE_FIT_TOKENS"),
            ("default_budget_tokens", "SPARSEREAD_BUDGET_TOKENS"),
            ("passage_chars", "SPARSEREAD_PASSAGE_CHARS"),
            ("port", "SPARSEREAD_PORT"),
            ("max_parse_bytes", "SPARSEREAD_MAX_PARSE_BYTES"),
            ("search_max_file_bytes", "SPARSEREAD_SEARCH_MAX_FILE_BYTES"),
            ("xlsx_max_unzipped_mb", "SPARSEREAD_XLSX_MAX_UNZIPPED_MB"),
            ("xlsx_max_cells", "SPARSEREAD_XLSX_MAX_CELLS"),
            ("cache_mb", "SPARSEREAD_CACHE_MB"),
            ("max_memory_mb", "SPARSEREAD_MAX_MEMORY_MB"),
            ("max_connections", "SPARSEREAD_MAX_CONNECTIONS"),
            ("inventory_max_files", "SPARSEREAD_INVENTORY_MAX_FILES"),
            ("workers", "SPARSEREAD_WORKERS"),
            ("worker_memory_mb", "SPARSEREAD_WORKER_MEMORY_MB"),
            ("projection_quota_mb", "SPARSEREAD_PROJECTION_QUOTA_MB"),
            ("max_calls", "SPARSEREAD_MAX_CALLS"),
            ("max_calls_per_session", "SPARSEREAD_MAX_CALLS_PER_SESSION"),
            ("max_http_sessions", "SPARSEREAD_MAX_HTTP_SESSIONS"),
            ("max_http_sessions_per_client", "SPARSEREAD_MAX_HTTP_SESSIONS_PER_CLIENT"),
            ("max_streams", "SPARSEREAD_MAX_STREAMS"),
            ("max_streams_per_client", "SPARSEREAD_MAX_STREAMS_PER_CLIENT"),
        ):
            if key in env:
                values[name] = _int_setting(key, env[key])
        if env.get("SPARSEREAD_STORE"):
            values["store"] = store_setting("SPARSEREAD_STORE", env["SPARSEREAD_STORE"])
        for name, key in (
            ("call_timeout_seconds", "SPARSEREAD_CALL_TIMEOUT"),
            ("token_margin", "SPARSEREAD_TOKEN_MARGIN"),
            ("xlsx_max_ratio", "SPARSEREAD_XLSX_MAX_RATIO"),
            ("header_timeout_seconds", "SPARSEREAD_HEADER_TIMEOUT"),
            ("session_idle_seconds", "SPARSEREAD_SESSION_IDLE_TIMEOUT"),
        ):
            if key in env:
                values[name] = _float_setting(key, env[key])
        if "SPARSEREAD_ALLOW_UNAUTHENTICATED" in env:
            values["allow_unauthenticated"] = _bool_setting(
                "SPARSEREAD_ALLOW_UNAUTHENTICATED", env["SPARSEREAD_ALLOW_UNAUTHENTICATED"]
            )
        if "SPARSEREAD_REPO_INDEX" in env:
            values["repo_index"] = _bool_setting("SPARSEREAD_REPO_INDEX", env["SPARSEREAD_REPO_INDEX"])
        if "SPARSEREAD_CACHE_DIR" in env:
            values["cache_dir"] = Path(env["SPARSEREAD_CACHE_DIR"])
        if env.get("SPARSEREAD_SESSION"):
            values["session"] = env["SPARSEREAD_SESSION"]
        if env.get("SPARSEREAD_TOKEN"):
            values["token"] = env["SPARSEREAD_TOKEN"]
        for name, key in (
            ("allowed_hosts", "SPARSEREAD_ALLOWED_HOSTS"),
            ("allowed_origins", "SPARSEREAD_ALLOWED_ORIGINS"),
        ):
            if env.get(key):
                values[name] = tuple(v.strip() for v in env[key].split(",") if v.strip())
        if "SPARSEREAD_HOST" in env:
            values["host"] = env["SPARSEREAD_HOST"]
        if "SPARSEREAD_LOCATION" in env:
            values["location"] = env["SPARSEREAD_LOCATION"]
        if env.get("SPARSEREAD_SEMANTIC_MODEL"):
            values["semantic_model"] = env["SPARSEREAD_SEMANTIC_MODEL"]
        if "SPARSEREAD_TOKENIZER" in env:
            values["tokenizer"] = env["SPARSEREAD_TOKENIZER"]
        return cls(**values)  # type: ignore[arg-type]

    @property
    def worker_count(self) -> int:
        """The pool's size: `workers`, or one per core between 2 and 8."""
        return self.workers or max(2, min(8, os.cpu_count() or 2))

    def with_overrides(self, **changes: object) -> Settings:
        """A copy with the given fields replaced (the CLI's flags)."""
        return replace(self, **changes)  # type: ignore[arg-type]


#: URL schemes of the shared session store (Redis); anything else without `://` is a SQLite file.
STORE_SCHEMES = ("redis", "rediss", "unix")


def store_setting(key: str, raw: str) -> Path | str:
    """A SQLite file path, or a Redis URL kept as text (a Path would fold its `//`)."""
    if "://" not in raw:
        return Path(raw)
    scheme = raw.split("://", 1)[0].lower()
    if scheme not in STORE_SCHEMES:
        raise ConfigError(
            f"{key}: {scheme}:// is not a session store: use a SQLite file path or redis://host:port/db "
            f"(schemes: {', '.join(STORE_SCHEMES)})"
        )
    return raw


def _float_setting(key: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not a number") from None


def _bool_setting(key: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("", "0", "false", "no", "off"):
        return False
    raise ConfigError(f"{key}={raw[:40]!r} is not a yes/no value: use 1 or 0")


def _int_setting(key: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not an integer") from None
