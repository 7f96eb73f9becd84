"""`pimem`: the user's command line, and `pimem serve`, the adapter protocol on stdin/stdout.

Defaults follow Pi: the agent dir is $PI_CODING_AGENT_DIR or ~/.pi/agent; a flat session dir
comes from $PI_CODING_AGENT_SESSION_DIR or `sessionDir` in settings.json (the project's
.pi/settings.json overrides the agent dir's); the index lives in <agentDir>/memory/.

Exit codes: search, read, around, summaries 0 when something was found and 1 when nothing was;
the other commands 0 on success and 1 when there was nothing to act on; 2 usage errors; 3 the index
is unavailable.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import SPEC_VERSION, __version__
from ._console import Style, render_answer, render_status
from ._doctor import doctor, journal_folders, skipped_lines
from ._errors import IndexUnavailable, ToolError, Wording, protocol_answer
from ._extract import KINDS
from ._journals import parse_line
from ._maintenance import (
    describe,
    forget,
    gc_confirm,
    gc_preview,
    index_all,
    rebuild,
    status,
)
from ._memory import Config, Memory
from ._query import query_terms
from ._scope import SCOPES
from ._serve import PROTOCOL, ProtocolServer, decode_request, encode_response, manifest
from ._time import iso_utc
from ._tool import parse_bound, run_tool
from ._view import run_viewer

__all__ = ["default_agent_dir", "default_session_dirs", "main", "serve_stdio"]

EXIT_OK, EXIT_NOTHING, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 1, 2, 3
QUERIES = ("search", "read", "around", "summaries")
# The command line's words for the errors' advice (the one translation is _errors.protocol_answer):
# a tool error's own advice is an example call for the agent, so here only bad_offset keeps one.
CLI_WORDING = Wording(
    remedy="the index cannot be opened or written: free space or fix the folder it is in "
    "(`pimem status` shows it), then run `pimem rebuild` if it persists",
    advice={"bad_offset": "example: pimem read ID --offset 0"},
)
_DATE_FORMS = "YYYY-MM-DD (a whole local day) or ISO-8601 with a zone, e.g. 2026-11-29T14:00:00Z"
_EXAMPLES = {
    None: 'pimem search "retry backoff"',
    "search": 'pimem search "retry backoff" --since 2026-11-01 --limit 10',
    "read": "pimem read d24d95c5 --offset 0",
    "around": "pimem around d24d95c5 --before 3 --after 3",
    "summaries": "pimem summaries --since 2026-11-01",
    "gc": "pimem gc --confirm",
    "forget": "pimem forget d24d95c5",
    "index": "pimem index --verify",
    "view": "pimem view --open",
}


# An error about one of these options shows that option used right.
_OPTION_EXAMPLES = {
    "--limit": "pimem search retry --limit 10",
    "--since": "pimem search retry --since 2026-11-01 --until 2026-11-30",
    "--until": "pimem search retry --since 2026-11-01 --until 2026-11-30",
    "--offset": "pimem read d24d95c5 --offset 0",
    "--before": "pimem around d24d95c5 --before 3 --after 3",
    "--after": "pimem around d24d95c5 --before 3 --after 3",
    "--kind": "pimem search retry --kind user --kind assistant",
    "--scope session": "pimem search retry --scope session --session ~/.pi/agent/sessions/<dir>/<file>.jsonl",
    "--scope": "pimem search retry --scope global",
}


class UsageError(Exception):
    """A command line that cannot run; the message names what was wrong, the example what is right."""

    def __init__(self, message: str, command: str | None) -> None:
        super().__init__(message)
        self.message = message
        options = [option for option in _OPTION_EXAMPLES if option in message]
        self.example = _OPTION_EXAMPLES[options[0]] if options else _EXAMPLES.get(command, _EXAMPLES[None])


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, what was wrong and an example for this command; no usage dump, no traceback."""
        command = self.prog.split()[1] if len(self.prog.split()) > 1 else None
        raise UsageError(message, command)


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


def _bounded(name: str, low: int, high: int | None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            number = None
        if number is None or number < low or (high is not None and number > high):
            span = f"from {low} to {high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"must be a whole number {span}, got {text!r}")
        return number

    return parse


def _date(name: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        try:
            parse_bound(name, text, os.environ.get("TZ") or "UTC", end=False)
        except ToolError:
            raise argparse.ArgumentTypeError(f"must be {_DATE_FORMS}; got {text!r}") from None
        return text

    return parse


def _common() -> _Parser:
    """Options every command takes, before or after its name (SUPPRESS: given twice, the later wins)."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--agent-dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="Pi's agent dir, holding sessions/ (default: $PI_CODING_AGENT_DIR or ~/.pi/agent)",
    )
    common.add_argument(
        "--sessions-dir",
        metavar="DIR",
        action="append",
        default=argparse.SUPPRESS,
        help="a flat folder of journals, repeatable (default: $PI_CODING_AGENT_SESSION_DIR or "
        "sessionDir in settings.json)",
    )
    common.add_argument(
        "--index",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="the index file (default: <agent-dir>/memory/index.sqlite)",
    )
    common.add_argument(
        "--cwd",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the project folder that decides the project scope (default: the current folder)",
    )
    common.add_argument(
        "--session",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="the current session's journal: read prefers it, --scope session searches only it",
    )
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON (errors too) on stdout"
    )
    return common


def _scoped(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scope",
        choices=SCOPES,
        default="project",
        help="project (default: journals of this folder's project), session (needs --session), global",
    )
    parser.add_argument("--session-id", metavar="ID", help="only the journal with this session id")


def _bounds(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", metavar="DATE", type=_date("--since"), help=f"from: {_DATE_FORMS}")
    parser.add_argument("--until", metavar="DATE", type=_date("--until"), help="until, inclusive: same forms")
    parser.add_argument(
        "--limit", metavar="N", type=_bounded("--limit", 1, 50), default=10, help="1-50, default 10"
    )


def _entry(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("entry_id", metavar="ID", nargs="?", help="an entry id from search")
    parser.add_argument(
        "--source", metavar="HANDLE", help="the handle of one of several entries with the same id"
    )


def _parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(
        prog="pimem",
        parents=[common],
        description="Search and read Pi session journals through a disposable index.",
        epilog="Exit codes: 0 found / done, 1 nothing found, 2 usage error, 3 index unavailable.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name, parents=[common], help=text, description=text, epilog=f"example: {_EXAMPLES.get(name, '')}"
        )

    search = command("search", "search entries for literal words, best first (no words: newest first)")
    search.add_argument("query", nargs="*", metavar="WORDS", help="words to find; an entry with all wins")
    _scoped(search)
    search.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        metavar="KIND",
        help=f"only entries of this kind, repeatable (any of them): {', '.join(KINDS)}",
    )
    search.add_argument(
        "--leaf",
        metavar="ID",
        help="where the model stands in the current session (default: its journal's last entry); "
        "entries in its context are left out",
    )
    search.add_argument(
        "--include-context", action="store_true", help="also show the entries in the model's context"
    )
    _bounds(search)
    read = command("read", "print one entry's text, 16,000 characters a page")
    _entry(read)
    _scoped(read)
    read.add_argument(
        "--offset", metavar="N", type=_bounded("--offset", 0, None), default=0, help="page start, 0 or more"
    )
    around = command("around", "print the entries before and after one entry in its conversation")
    _entry(around)
    _scoped(around)
    for side in ("before", "after"):
        around.add_argument(
            f"--{side}", metavar="N", type=_bounded(f"--{side}", 0, 20), default=3, help="0-20, default 3"
        )
    summaries = command("summaries", "compaction and branch summaries, newest first")
    _scoped(summaries)
    _bounds(summaries)
    command("status", "the index (path, size), the folders scanned, journals, entries, skipped lines")
    command("index", "index new and changed journals").add_argument(
        "--verify", action="store_true", help="check every journal's prefix too (finds same-length edits)"
    )
    command("rebuild", "drop the index and build it again")
    command("gc", "list junk journals; --confirm deletes exactly that list").add_argument(
        "--confirm", action="store_true", help="delete the journals the last `pimem gc` listed"
    )
    command("forget", "hide an entry or a whole session for good, even after a rebuild").add_argument(
        "id", metavar="ID", help="an entry id or a session id"
    )
    command("doctor", "check Python, SQLite, the index, the journal folders and the Pi settings")
    command("serve", "speak the adapter protocol on stdin/stdout (what the Pi extension runs)")
    command("manifest", "print what the Pi integration registers, as JSON")
    view = command("view", "browse the memory in a local, read-only, token-gated page (prints its URL)")
    view.add_argument("--open", action="store_true", help="also open the URL in a browser (with a display)")
    view.add_argument("--parent", metavar="PID", type=int, help="stop when this process exits (Pi)")
    view.add_argument(
        "--exact-dirs",
        action="store_true",
        help="only --sessions-dir (none when not given): never a session dir from env or settings",
    )
    return parser


def version_line() -> str:
    return f"pimem {__version__} (spec {SPEC_VERSION}, adapter protocol {PROTOCOL})"


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


def _quiet(done: int, total: int) -> None:
    """No progress bar when stderr is no terminal."""


def _check(options: argparse.Namespace) -> None:
    """What argparse cannot see: combinations of options."""
    command = options.command
    if command in ("read", "around") and not options.entry_id and not options.source:
        raise UsageError(f"{command} needs an entry id (or --source HANDLE from a result)", command)
    if getattr(options, "scope", None) == "session" and not options.session:
        raise UsageError(
            "--scope session needs the current session's journal, and none was given: "
            "add --session FILE (or use --session-id ID to narrow to one session)",
            command,
        )
    since, until = getattr(options, "since", None), getattr(options, "until", None)
    if since and until:
        tz = os.environ.get("TZ") or "UTC"
        if parse_bound("--since", since, tz, end=False) > parse_bound("--until", until, tz, end=True):
            raise UsageError(f"--since {since} is after --until {until}; swap them", command)


def _tool_arguments(options: argparse.Namespace) -> dict[str, Any]:
    command = options.command
    arguments: dict[str, Any] = {"action": command, "scope": options.scope, "sessionId": options.session_id}
    if command == "search":
        query = " ".join(options.query)
        arguments.update(query=query or None, kind=options.kind, limit=options.limit)
        arguments["includeContext"] = options.include_context or None
    if command in ("search", "summaries"):
        arguments.update(since=options.since, until=options.until, limit=options.limit)
    if command in ("read", "around"):
        arguments.update(entryId=options.entry_id, source=options.source)
    if command == "read":
        arguments["offset"] = options.offset
    if command == "around":
        arguments.update(before=options.before, after=options.after)
    return {key: value for key, value in arguments.items() if value is not None}


def last_entry_id(path: str) -> str | None:
    """The id of a journal's last line that carries one, after its header: where Pi stands when it
    resumes the session (None when the file cannot be read or holds no such line)."""
    try:
        with open(path, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for raw in reversed(lines[1:]):
        obj = parse_line(raw) if raw.strip() else None
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            return str(obj["id"])
    return None


def _leaf(options: argparse.Namespace, memory: Memory) -> str | None:
    """The leaf a search stands at: --leaf, else the current journal's last line with an id (where
    Pi resumes a session), else none."""
    if options.command != "search":
        return None
    if options.leaf is not None:
        return str(options.leaf)
    return last_entry_id(memory.config.session_file) if memory.config.session_file else None


def _found(details: dict[str, Any]) -> bool:
    if details["action"] in ("search", "summaries"):
        return bool(details["results"])
    return bool(details["status"] == "ok")


class Answered(Exception):
    """The tool answered with an error, already in command-line words (`CLI_WORDING`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class NoJournals(Exception):
    def __init__(self, folders: list[dict[str, Any]]) -> None:
        looked = "\n".join(
            f"  {folder['path']}" + ("" if folder["exists"] else " (missing)") for folder in folders
        )
        super().__init__(
            f"no Pi journals found, so nothing was indexed or created. Looked in:\n{looked}\n"
            "Point at others with --agent-dir DIR (the folder holding sessions/), --sessions-dir DIR "
            "(a flat folder, repeatable) or PI_CODING_AGENT_DIR=DIR."
        )
        self.folders = folders


def _status(memory: Memory) -> dict[str, Any]:
    folders = journal_folders(memory)
    exists = os.path.exists(memory.index_path)
    if exists:
        details = status(memory)
        details["skippedLines"] = skipped_lines(memory, 20)
    else:  # nothing is created just to say that nothing is there
        journals = sum(folder["journals"] for folder in folders)
        indexing = {
            "complete": journals == 0,
            "indexedJournals": 0,
            "totalJournals": journals,
            "checkedAt": iso_utc(memory.now()),  # the folders were just counted
        }
        details = {
            "journals": journals,
            "entries": 0,
            "summaries": 0,
            "skipped": {"files": 0, "lines": 0},
            "indexing": indexing,
            "lease": None,
            "skippedLines": [],
        }
    size = os.path.getsize(memory.index_path) if exists else 0
    index = {"path": memory.index_path, "exists": exists, "bytes": size}
    return {**details, "index": index, "folders": folders}


def _run(options: argparse.Namespace, style: Style) -> tuple[str, Any, int]:
    """(text, JSON, exit code) of one command."""
    memory = _memory(options)
    command = options.command
    if command == "status":
        details = _status(memory)
        return render_status(details), details, EXIT_OK
    if command == "doctor":
        text, details = doctor(memory)
        return text, details, EXIT_OK
    found = memory.discover(full=True)
    if not found.journals and not os.path.exists(memory.index_path):
        raise NoJournals(journal_folders(memory))
    progress = _progress if sys.stderr.isatty() else _quiet
    if command in QUERIES:
        if not memory.indexing(found.journals)["complete"]:  # no background indexer in this process
            index_all(memory, progress=progress)
        answer = run_tool(memory, _tool_arguments(options), CLI_WORDING, _leaf(options, memory))
        if "error" in answer:
            raise Answered(answer["error"]["code"], answer["error"]["message"])
        details = answer["details"]
        terms = query_terms(details["query"] or "") if command == "search" else []
        return render_answer(details, style, terms), details, EXIT_OK if _found(details) else EXIT_NOTHING
    actions: dict[str, Callable[[], dict[str, Any]]] = {
        "index": lambda: index_all(memory, verify=options.verify, progress=progress),
        "rebuild": lambda: rebuild(memory, progress),
        "gc": lambda: gc_confirm(memory) if options.confirm else gc_preview(memory),
        "forget": lambda: forget(memory, options.id),
    }
    details = actions[command]()
    text = describe(details).replace("`/memory gc confirm`", "`pimem gc --confirm`")
    return text, details, EXIT_OK


def _exit_code(code: str, command: str) -> int:
    if code == "index_unavailable":
        return EXIT_UNAVAILABLE
    if command == "forget":  # nothing by that id: nothing to act on
        return EXIT_NOTHING
    return EXIT_USAGE


def serve_stdio() -> None:
    """The adapter protocol: one JSON request per stdin line, one response per stdout line."""
    server = ProtocolServer()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            request = decode_request(line)
        except ValueError as error:
            request = None
            response: dict[str, Any] = {
                "seq": None,
                "errored": True,
                "context": {"message": f"bad JSON: {error}"},
            }
        else:
            response = server.handle(request)
        sys.stdout.buffer.write(encode_response(response))
        sys.stdout.buffer.flush()
        if isinstance(request, dict) and request.get("cmd") == "stop":
            return


def _fill(options: argparse.Namespace) -> argparse.Namespace:
    for name in ("agent_dir", "sessions_dir", "index", "cwd", "session"):
        setattr(options, name, getattr(options, name, None))
    options.json = getattr(options, "json", False)
    return options


def _say(as_json: bool, code: str, message: str, **extra: Any) -> None:
    if as_json:
        print(json.dumps({"error": {"code": code, "message": message, **extra}}, ensure_ascii=False))
    else:
        print(f"pimem: {message}", file=sys.stderr)


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in arguments
    try:
        options = _fill(_parser().parse_args(arguments))
        if options.command not in ("serve", "manifest"):
            _check(options)
    except UsageError as error:
        _say(as_json, "usage", f"{error.message} (example: {error.example})")
        return EXIT_USAGE
    if options.command == "serve":
        serve_stdio()
        return EXIT_OK
    if options.command == "manifest":
        print(json.dumps(manifest(), indent=2, ensure_ascii=False))
        return EXIT_OK
    if options.command == "view":
        if options.exact_dirs and options.sessions_dir is None:
            options.sessions_dir = []
        return run_viewer(_memory(options), open_browser=options.open, parent=options.parent, out=sys.stdout)
    try:
        text, details, code = _run(options, Style(sys.stdout.isatty()))
    except NoJournals as error:
        _say(options.json, "no_journals", str(error), lookedIn=error.folders)
        return EXIT_NOTHING
    except Answered as error:  # the tool's answer, already in command-line words
        _say(options.json, error.code, error.message)
        return _exit_code(error.code, options.command)
    except (ToolError, IndexUnavailable) as error:  # a command's own (forget, index, rebuild, gc)
        answer = protocol_answer(error, CLI_WORDING)["error"]
        _say(options.json, answer["code"], answer["message"])
        return _exit_code(answer["code"], options.command)
    except Exception as error:  # the user gets one line, never a traceback
        _say(options.json, "internal", f"{type(error).__name__}: {error}")
        return EXIT_NOTHING
    print(json.dumps(details, indent=2, ensure_ascii=False) if options.json else text)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # `pimem search x | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return EXIT_OK
    return code
