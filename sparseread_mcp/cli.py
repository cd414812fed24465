"""The command line: serve MCP (stdio by default, --http for streamable HTTP), or read without a client."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from . import __version__
from .commands.offline import bench_command, compact_command, human, trace_command
from .config import LOCATION_CHOICES, Settings, store_setting
from .errors import SparsereadError
from .serve.flags import add_session_options, session_changes
from .serve.logs import configure as configure_logs

logger = logging.getLogger("sparseread_mcp")


def build_parser() -> argparse.ArgumentParser:
    from .serve.environment import help_text

    parser = argparse.ArgumentParser(
        prog="sparseread-mcp",
        description="A reading controller for AI agents. With no command it serves MCP over stdio "
        "(--http: streamable HTTP); it says so on stderr, and Ctrl-C stops it.",
        epilog=help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sparseread-mcp {__version__}")
    _common(parser)
    _serving_options(parser)
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", help="instead of serving: one of these (each takes --help)"
    )
    _reading_commands(commands)
    _operating_commands(commands)
    return parser


def _serving_options(parser: argparse.ArgumentParser) -> None:
    """How the server runs with no command: transport, store, cache, and the HTTP guards."""
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--host", help="HTTP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (default 8765)")
    parser.add_argument(
        "--store",
        help="keep sessions in this SQLite file across restarts, or in redis://host:port/db shared by replicas "
        "(or SPARSEREAD_STORE)",
    )
    parser.add_argument(
        "--cache-dir", help="derived files and parsed indexes; replicas may share one (or SPARSEREAD_CACHE_DIR)"
    )
    parser.add_argument(
        "--projection-quota-mb",
        type=int,
        help="disk the table projections share under the cache directory, least recently written removed first "
        "(default 512, or SPARSEREAD_PROJECTION_QUOTA_MB)",
    )
    parser.add_argument("--token", help="require `Authorization: Bearer TOKEN` on HTTP (or SPARSEREAD_TOKEN)")
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        default=None,
        help="DANGEROUS: serve HTTP on a non-loopback host without a token, so anyone who reaches the port reads "
        "every file under the roots (or SPARSEREAD_ALLOW_UNAUTHENTICATED=1); only behind your own authentication",
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        help="close HTTP connections that send no complete request (head and body) within this many seconds "
        "(default 10, or SPARSEREAD_HEADER_TIMEOUT)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        help="open HTTP connections at most (default 512, or SPARSEREAD_MAX_CONNECTIONS)",
    )
    parser.add_argument(
        "--max-memory-mb",
        type=int,
        help="memory ceiling of the server process in MiB; a call that would pass it gets an error "
        "(default 0: none, or SPARSEREAD_MAX_MEMORY_MB)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="worker processes that parse, hash and diff files (default 0: one per core, 2 to 8, or "
        "SPARSEREAD_WORKERS)",
    )
    parser.add_argument(
        "--worker-memory-mb",
        type=int,
        help="what one worker process may allocate in MiB; a file that needs more is refused "
        "(default 1024, 0: no limit, or SPARSEREAD_WORKER_MEMORY_MB)",
    )
    add_session_options(parser)
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="HTTP: also accept this Host header, HOST (any port) or HOST:PORT (repeatable; or "
        "SPARSEREAD_ALLOWED_HOSTS)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        help="HTTP: also accept this Origin, e.g. http://HOST (any port) or http://HOST:PORT (repeatable; or "
        "SPARSEREAD_ALLOWED_ORIGINS)",
    )


#: The subcommand registry argparse hands out (its type is private to argparse).
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _reading_commands(commands: Commands) -> None:
    """The tools from the shell: preview, read, verify."""
    preview = commands.add_parser("preview", help="print the bounded preview of a file")
    preview.add_argument("path", help="a file or folder under a root")
    _common(preview)
    read = commands.add_parser("read", help="read evidence from a file for a goal")
    read.add_argument("target", help="path, path#anchor or pointer path@rev#anchor")
    read.add_argument("--goal", help="what you need, in words")
    read.add_argument("--needle", action="append", default=[], help="exact string to find (repeatable)")
    read.add_argument(
        "--action",
        default="focus",
        choices=["scout", "focus", "collect", "refine", "verify", "check"],
        help="focus (default): passages for the goal; scout: the preview; refine: more; verify: a pointer or "
        "claim; check: counts and places of the needles and goal words, no text",
    )
    read.add_argument(
        "--view", choices=["snippets", "outline", "lines", "section", "full"], help="the level of detail (snippets)"
    )
    read.add_argument("--budget-tokens", type=int, help="answer at most this many tokens (default about 8000)")
    _common(read)
    verify = commands.add_parser("verify", help="check an evidence pointer against the file")
    verify.add_argument("pointer", help="an evidence pointer, path@rev#anchor")
    _common(verify)


def _operating_commands(commands: Commands) -> None:
    """Calibration, diagnosis, benchmarks on your files, traces of past sessions, and compaction."""
    calibrate = commands.add_parser("calibrate", help="rebuild the configuration calibration table from dev data")
    calibrate.add_argument("--data", required=True, help="a folder of sets, each with questions.jsonl and gold spans")
    calibrate.add_argument("--out", help="where to write the table (default: the one shipped with the package)")
    _common(calibrate)
    doctor = commands.add_parser("doctor", help="what works here: dependencies, extras, tokenizer, roots, git")
    _common(doctor)
    bench = commands.add_parser("bench", help="time previews and reads on your own files; tokens saved vs full reads")
    bench.add_argument("path", help="a file, or a directory (its largest readable files)")
    bench.add_argument("--goal", action="append", default=[], help="what to read for (repeatable; default: outline)")
    bench.add_argument("--repeat", type=int, default=3, help="warm runs per measurement; medians are reported (3)")
    bench.add_argument("--max-files", type=int, default=12, help="files of a directory to bench, largest first (12)")
    _common(bench)
    trace = commands.add_parser("trace", help="what a past server's sessions read, and what it saved (--store)")
    trace.add_argument("--session", help="only this session: its key, or the name a server was given with --session")
    trace.add_argument("--store", default=argparse.SUPPRESS, help="the session store the server ran with")
    trace.add_argument("--calls", type=int, default=12, help="latest calls to list per session (12)")
    _common(trace)
    compact = commands.add_parser(
        "compact", help="compact an agent transcript (OpenAI or Anthropic JSON); `compact train DATA` trains a router"
    )
    compact.add_argument(
        "file", nargs="+", help="a transcript (JSON array or JSON Lines), or: train LABELED.jsonl, or: train --runs DIR"
    )
    compact.add_argument("--runs", help="with `train`: a folder of run families (one subfolder of runs per family)")
    compact.add_argument(
        "--leave-out", action="append", default=[], help="with `train --runs`: a family to hold out (repeatable)"
    )
    compact.add_argument("--router", help="a router trained with `compact train` (default: the built-in router)")
    compact.add_argument("--format", choices=["openai", "anthropic"], help="detected when omitted")
    compact.add_argument("--out", help="write the compacted messages here (JSON)")
    compact.add_argument("--audit", help="append the replaced originals here (JSON Lines, keyed by span)")
    compact.add_argument("--keep-last", type=int, default=1, help="latest interactions never compacted (1)")
    _common(compact)


def _common(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS keeps a subcommand's unset flag from hiding the same flag given before the subcommand.
    parser.add_argument("--root", action="append", default=argparse.SUPPRESS, help="readable folder (repeatable)")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output")
    parser.add_argument("--log-level", default=argparse.SUPPRESS, help="DEBUG, INFO, WARNING (default) or ERROR")
    parser.add_argument(
        "--log-format", choices=["text", "json"], default=argparse.SUPPRESS, help="stderr log lines: text or json"
    )
    parser.add_argument(
        "--tokenizer", default=argparse.SUPPRESS, help="o200k_base (default), cl100k_base, or chars (an estimate)"
    )
    parser.add_argument(
        "--token-margin", type=float, default=argparse.SUPPRESS, help="add this share to every count (0.15 = +15%%)"
    )
    parser.add_argument(
        "--location",
        choices=LOCATION_CHOICES,
        default=argparse.SUPPRESS,
        help="auto (the calibrated selector, default) or one fixed method; dense and hybrid need [semantic]",
    )


def settings_from(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    changes: dict[str, object] = {}
    if getattr(args, "root", None):
        changes["roots"] = tuple(Path(r) for r in args.root)
    if getattr(args, "tokenizer", None):
        changes["tokenizer"] = args.tokenizer
    if getattr(args, "location", None):
        changes["location"] = args.location
    if getattr(args, "token_margin", None) is not None:
        changes["token_margin"] = args.token_margin
    if getattr(args, "host", None):
        changes["host"] = args.host
    if getattr(args, "port", None):
        changes["port"] = args.port
    if getattr(args, "token", None):
        changes["token"] = args.token
    if getattr(args, "store", None):
        changes["store"] = store_setting("--store", args.store)
    if getattr(args, "cache_dir", None):
        changes["cache_dir"] = Path(args.cache_dir)
    for name in (
        "allow_unauthenticated",
        "max_connections",
        "max_memory_mb",
        "workers",
        "worker_memory_mb",
        "projection_quota_mb",
    ):
        if getattr(args, name, None) is not None:
            changes[name] = getattr(args, name)
    changes.update(session_changes(args))
    if getattr(args, "header_timeout", None) is not None:
        changes["header_timeout_seconds"] = args.header_timeout
    if getattr(args, "allow_host", None):
        changes["allowed_hosts"] = tuple(args.allow_host)
    if getattr(args, "allow_origin", None):
        changes["allowed_origins"] = tuple(args.allow_origin)
    return settings.with_overrides(**changes) if changes else settings


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logs(getattr(args, "log_level", "WARNING"), getattr(args, "log_format", "text"))
    try:
        settings = settings_from(args)
        if args.command is None:
            return _serve(settings, http=args.http, json_logs=getattr(args, "log_format", "text") == "json")
        return _run_command(args, settings)
    except SparsereadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): what it did not read is not an error. Point stdout at devnull
        # so the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # the CLI's top level: one line, no traceback
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def _serve(settings: Settings, *, http: bool, json_logs: bool = False) -> int:
    from .ceiling import apply_memory_ceiling
    from .isolation import prestart_workers
    from .serve.server import create_server
    from .serve.terminal import announce, start_line, stop_on_signals

    if http:
        from .serve.http_app import check_exposure

        check_exposure(settings)  # before anything is built: a refused server fails at once
    # At server start, not on import: a library user's process keeps its own limits.
    apply_memory_ceiling(settings.max_memory_mb)
    stop_on_signals()  # before the workers start: Ctrl-C from here on stops them too
    server = create_server(settings)
    prestart_workers(settings)  # the worker factory starts while the client connects, not on its first call
    # stderr, at every log level: a person who started a server needs to know it runs and how to stop it.
    if not http:
        announce(start_line(settings), as_json=json_logs)
        server.run()
        return 0
    from .serve.http_app import serve_http

    announce(http_banner(settings), as_json=json_logs)
    serve_http(server, settings)
    return 0


def http_banner(settings: Settings) -> str:
    """An HTTP server's start line: where it listens, what answers its health check, whether it wants a token."""
    from .serve.http_app import HEALTH_PATH
    from .serve.terminal import start_line

    # A wildcard bind is not an address to connect to: show loopback, and say what was bound.
    wildcard = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1", "[::]": "::1"}.get(settings.host)
    host = wildcard or settings.host
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    base = f"http://{host}:{settings.port}"
    bound = f" (bound to {settings.host or '*'}: every address of this machine)" if wildcard else ""
    auth = "; requests need Authorization: Bearer <token>" if settings.token else ""
    return start_line(settings, http_base=base, detail=f", health at {base}{HEALTH_PATH}{bound}{auth}")


def _run_command(args: argparse.Namespace, settings: Settings) -> int:
    from .engine import ReadEngine, ReadRequest
    from .models import EvidencePack, Intent, Preview
    from .serve.identity import own_session_key

    if args.command == "compact":
        return compact_command(args, settings)
    if args.command == "calibrate":
        from .locate import LocatorSet
        from .select.calibrate import calibrate
        from .select.policy import NOT_CHOSEN
        from .select.selector import TABLE

        locators = LocatorSet(semantic_model=settings.semantic_model, cache_dir=settings.cache_dir)
        selector = calibrate(Path(args.data), passage_chars=settings.passage_chars, locators=locators)
        out = Path(args.out) if args.out else TABLE
        selector.save(out)
        live = [m for m in locators.available if m not in NOT_CHOSEN]
        for group, configs in sorted(selector.groups.items()):
            choice = selector.choose(group, group.split("|")[0], live)
            print(f"{group}: {sum(1 for _ in configs)} configurations -> {choice.configuration} ({choice.reason})")
        for name, why in sorted(selector.withheld.items()):
            print(f"withheld {name}: {why}")
        print(f"table written to {out}")
        return 0
    if args.command in ("bench", "trace"):
        return bench_command(args, settings) if args.command == "bench" else trace_command(args, settings)
    if args.command == "doctor":
        from .commands.doctor import diagnose

        checks = diagnose(settings)
        for check in checks:
            print(f"{'ok ' if check.ok else 'NO '} {check.name}: {check.detail}")
        return 0 if all(c.ok or c.optional for c in checks) else 1
    engine = ReadEngine(settings)
    as_json = getattr(args, "json", False)
    result: Preview | EvidencePack
    key = own_session_key(settings)  # as a stdio server's: its own, or (with a store) the one --session names
    if args.command == "preview":
        result = engine.preview(key, args.path)
    elif args.command == "verify":
        result = engine.read(key, ReadRequest(target=args.pointer, action="verify"))
    else:
        intent = Intent(goal=args.goal, needles=args.needle or None) if (args.goal or args.needle) else None
        request = ReadRequest(
            target=args.target, action=args.action, intent=intent, view=args.view, budget_tokens=args.budget_tokens
        )
        result = engine.read(key, request)
    while True:
        print(result.model_dump_json(indent=2, exclude_none=True) if as_json else human(result))
        # One process is one session, so a cursor cannot outlive it: follow it here.
        if not isinstance(result, EvidencePack) or not result.cursor:
            return 0
        result = engine.read(key, ReadRequest(target=result.episode.artifact.path, cursor=result.cursor))
