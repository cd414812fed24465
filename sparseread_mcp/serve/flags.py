"""The command line's flags for sessions and their fair shares (`--session`, the call, session and stream
limits): each sets the Settings field of the same name (`config.py` documents them)."""

from __future__ import annotations

import argparse

#: Flags of the serving limits: (flag, type, help); each sets the Settings field of the same name.
_LIMITS: tuple[tuple[str, type, str], ...] = (
    ("--max-calls", int, "calls running at once, server-wide (default 32, or SPARSEREAD_MAX_CALLS)"),
    (
        "--max-calls-per-session",
        int,
        "calls of one session running at once; its others wait (default 4, or SPARSEREAD_MAX_CALLS_PER_SESSION)",
    ),
    (
        "--max-http-sessions",
        int,
        "stateful HTTP sessions at most; past it the least recently used idle one is ended (default 1024, or "
        "SPARSEREAD_MAX_HTTP_SESSIONS)",
    ),
    (
        "--max-http-sessions-per-client",
        int,
        "stateful HTTP sessions of one client (credential and address) at most (default 256, or "
        "SPARSEREAD_MAX_HTTP_SESSIONS_PER_CLIENT)",
    ),
    (
        "--session-idle-timeout",
        float,
        "end a stateful HTTP session after this many seconds without a request (default 900, or "
        "SPARSEREAD_SESSION_IDLE_TIMEOUT)",
    ),
    ("--max-streams", int, "open GET event streams at most (default 128, or SPARSEREAD_MAX_STREAMS)"),
    (
        "--max-streams-per-client",
        int,
        "open GET event streams of one client at most (default 32, or SPARSEREAD_MAX_STREAMS_PER_CLIENT)",
    ),
)
#: Flags whose Settings field has another name than the flag.
_FIELD_OF = {"session_idle_timeout": "session_idle_seconds"}


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """Whose session a stdio server serves, and how calls, HTTP sessions and event streams are shared."""
    parser.add_argument(
        "--session",
        dest="session_name",
        metavar="NAME",
        help="stdio: this client's session name; with --store, a later server given the same name resumes it "
        "(default: a new session for every server; or SPARSEREAD_SESSION)",
    )
    for flag, kind, text in _LIMITS:
        parser.add_argument(flag, type=kind, help=text)


def session_changes(args: argparse.Namespace) -> dict[str, object]:
    """The Settings fields these flags set (those given)."""
    changes: dict[str, object] = {}
    for flag, _, _ in _LIMITS:
        name = flag.removeprefix("--").replace("-", "_")
        if getattr(args, name, None) is not None:
            changes[_FIELD_OF.get(name, name)] = getattr(args, name)
    if getattr(args, "session_name", None):
        changes["session"] = args.session_name
    return changes
