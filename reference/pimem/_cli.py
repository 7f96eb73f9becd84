"""`pimem`: the user's command line, and `pimem serve`, the adapter protocol on stdin/stdout.

Defaults follow Pi: the agent dir is $PI_CODING_AGENT_DIR or ~/.pi/agent; a flat session dir
comes from $PI_CODING_AGENT_SESSION_DIR or `sessionDir` in settings.json (the project's
.pi/settings.json overrides the agent dir's); the index lives in <agentDir>/memory/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import orjson

from ._extract import KINDS
from ._maintenance import describe, forget, gc_confirm, gc_preview, index_all, rebuild, status
from ._memory import Config, Memory
from ._query import ToolError
from ._scope import SCOPES
from ._serve import ProtocolServer, manifest
from ._tool import render, run_tool
from ._view import run_viewer

__all__ = ["main", "serve_stdio"]

_EXAMPLE = 'pimem search "retry backoff" --since 2026-11-01'


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, what was wrong and an example; no usage dump, no traceback."""
        self.exit(2, f"pimem: {message} (example: {_EXAMPLE})\n")


def _expand(path: str) -> str:
    return os.path.abspath(os.path.expanduser(path))


def _setting(path: Path, key: str) -> Any:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value.get(key) if isinstance(value, dict) else None


def default_agent_dir() -> str:
    return _expand(os.environ.get("PI_CODING_AGENT_DIR") or "~/.pi/agent")


def default_session_dirs(agent_dir: str, cwd: str) -> list[str]:
    """Pi's flat session dir, if the user configured one (env first, then project and global settings)."""
    configured = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    for settings in (Path(cwd) / ".pi" / "settings.json", Path(agent_dir) / "settings.json"):
        configured = configured or _setting(settings, "sessionDir")
    return [_expand(configured)] if isinstance(configured, str) and configured else []


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pimem", description="Search and read Pi session journals through a disposable index."
    )
    parser.add_argument("--agent-dir", help="Pi agent dir (default: $PI_CODING_AGENT_DIR or ~/.pi/agent)")
    parser.add_argument("--sessions-dir", action="append", default=None, help="flat session dir (repeatable)")
    parser.add_argument("--index", help="index file (default: <agent-dir>/memory/index.sqlite)")
    parser.add_argument(
        "--cwd", help="project folder that decides the default scope (default: the current dir)"
    )
    parser.add_argument("--session", help="current session journal (read prefers it; scope session uses it)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("status", help="journals, entries, summaries, indexing progress")
    commands.add_parser("index", help="index new and changed journals").add_argument(
        "--verify", action="store_true"
    )
    commands.add_parser("rebuild", help="drop the index and build it again")
    search = commands.add_parser("search", help="search entries (literal words)")
    search.add_argument("query", nargs="?")
    search.add_argument("--scope", choices=SCOPES, default="project")
    search.add_argument("--kind", choices=KINDS)
    search.add_argument("--since")
    search.add_argument("--until")
    search.add_argument("--limit", type=int, default=10)
    read = commands.add_parser("read", help="print one entry's text")
    read.add_argument("entry_id")
    read.add_argument("--offset", type=int, default=0)
    commands.add_parser("summaries", help="compaction and branch summaries, newest first")
    commands.add_parser("gc", help="list junk journals; --confirm deletes exactly that list").add_argument(
        "--confirm", action="store_true"
    )
    commands.add_parser("forget", help="hide an entry or session for good").add_argument("id")
    commands.add_parser("serve", help="speak the adapter protocol on stdin/stdout")
    commands.add_parser("manifest", help="print what the Pi integration registers, as JSON")
    view = commands.add_parser("view", help="browse the memory in a local, read-only, token-gated page")
    view.add_argument("--open", action="store_true", help="also open the URL in a browser (with a display)")
    view.add_argument("--parent", type=int, help="stop when the process with this id exits (Pi)")
    view.add_argument(
        "--exact-dirs",
        action="store_true",
        help="only --sessions-dir (none when not given): never a session dir from env or settings",
    )
    return parser


def _memory(options: argparse.Namespace) -> Memory:
    agent_dir = _expand(options.agent_dir) if options.agent_dir else default_agent_dir()
    cwd = _expand(options.cwd) if options.cwd else os.getcwd()
    if options.sessions_dir is not None:
        session_dirs = [_expand(path) for path in options.sessions_dir]
    else:
        session_dirs = default_session_dirs(agent_dir, cwd)
    index_path = _expand(options.index) if options.index else None
    state_dir = os.path.dirname(index_path) if index_path else os.path.join(agent_dir, "memory")
    config = Config(
        state_dir=state_dir,
        agent_dir=agent_dir,
        session_dirs=session_dirs,
        home=str(Path.home()),
        cwd=cwd,
        session_file=_expand(options.session) if options.session else None,
        allow_global=True,  # on the command line the user is the one choosing the scope
        tz=os.environ.get("TZ") or "UTC",
        index_path=index_path,
    )
    return Memory(config)


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{' ' * (width - filled)}] {done}/{total} journals")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _tool_arguments(options: argparse.Namespace) -> dict[str, Any]:
    if options.command == "search":
        arguments = {
            "action": "search",
            "query": options.query,
            "scope": options.scope,
            "kind": options.kind,
            "since": options.since,
            "until": options.until,
            "limit": options.limit,
        }
    elif options.command == "read":
        arguments = {"action": "read", "entryId": options.entry_id, "offset": options.offset}
    else:
        arguments = {"action": "summaries", "scope": "project"}
    return {key: value for key, value in arguments.items() if value is not None}


def _run(options: argparse.Namespace) -> tuple[str, Any]:
    memory = _memory(options)
    if options.command in ("search", "read", "summaries"):
        answer = run_tool(memory, _tool_arguments(options))
        if "error" in answer:
            raise ToolError(answer["error"]["code"], answer["error"]["message"])
        return render(answer["details"]), answer["details"]
    progress = _progress if sys.stderr.isatty() else lambda done, total: None
    actions: dict[str, Callable[[], tuple[str, dict[str, Any]]]] = {
        "status": lambda: ("status", status(memory)),
        "index": lambda: ("index", index_all(memory, verify=options.verify, progress=progress)),
        "rebuild": lambda: ("rebuild", rebuild(memory, progress)),
        "gc": lambda: ("gc", gc_confirm(memory) if options.confirm else gc_preview(memory)),
        "forget": lambda: ("forget", forget(memory, options.id)),
    }
    command, details = actions[options.command]()
    return describe(command, details), details


def serve_stdio() -> None:
    """The adapter protocol: one JSON request per stdin line, one response per stdout line."""
    server = ProtocolServer()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            request = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            request = None
            response: dict[str, Any] = {
                "seq": None,
                "errored": True,
                "context": {"message": f"bad JSON: {error}"},
            }
        else:
            response = server.handle(request)
        sys.stdout.buffer.write(orjson.dumps(response) + b"\n")
        sys.stdout.buffer.flush()
        if isinstance(request, dict) and request.get("cmd") == "stop":
            return


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    if options.command == "serve":
        serve_stdio()
        return 0
    if options.command == "manifest":
        print(json.dumps(manifest(), indent=2, ensure_ascii=False))
        return 0
    if options.command == "view":
        if options.exact_dirs and options.sessions_dir is None:
            options.sessions_dir = []
        return run_viewer(_memory(options), open_browser=options.open, parent=options.parent, out=sys.stdout)
    try:
        text, details = _run(options)
    except ToolError as error:
        print(f"pimem: {error.message}", file=sys.stderr)
        return 2
    except Exception as error:  # the user gets one line, never a traceback
        print(f"pimem: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(details, indent=2, ensure_ascii=False) if options.json else text)
    return 0
