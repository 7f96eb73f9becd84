"""Shared helpers of the reliability tests: sizes, figures, journals on disk, and a protocol session.

Every reliability test reaches the implementation the way the suite does, through the protocol
connector seam (`pimem_conformance._connector`), except where the subject is the reference's own
command line (`pimem index`, `pimem serve`, `pimem rebuild`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pimem_conformance._adapter import Adapter
from pimem_conformance._connector import Connector, SubprocessConnector, connector_for
from pimem_conformance._expect import strings_in
from pimem_conformance._jsjson import dumps_like_js
from pimem_conformance._schemas import load_schemas

__all__ = [
    "FIGURES",
    "NOBODY",
    "NOW",
    "SLOW",
    "TALLIES",
    "JournalWriter",
    "Memory",
    "as_nobody",
    "assert_no_internal_text",
    "entry_line",
    "give_to_nobody",
    "header_line",
    "line_bytes",
    "linear_session",
    "pimem_command",
    "record_figure",
    "result_ids",
    "scaled",
    "strings_in",
    "tally",
]

SLOW = os.environ.get("PIMEM_SLOW") == "1"
NOW = "2026-11-29T12:00:00.000Z"
NOBODY = 65534  # the unprivileged uid/gid CI runs a subject as, so permission bits apply
FIGURES: dict[str, str] = {}  # printed at the end of the run by conftest.py
TALLIES: dict[str, list[tuple[int, str]]] = {}  # totals across tests: "trials run", "entries checked"


def scaled(ci: int, slow: int) -> int:
    """The CI count, or the deeper count under PIMEM_SLOW=1."""
    return slow if SLOW else ci


def record_figure(name: str, value: object) -> None:
    FIGURES[name] = str(value)
    print(f"{name}: {value}")


def tally(total: str, amount: int, what: str) -> None:
    """Add `amount` to a run-wide total (e.g. "entries checked"), remembering where it came from."""
    TALLIES.setdefault(total, []).append((amount, what))


def pimem_command() -> list[str]:
    """The reference's command line, from the venv that runs the tests."""
    beside = Path(sys.executable).parent / "pimem"
    found = str(beside) if beside.exists() else shutil.which("pimem")
    if found is None:
        raise RuntimeError("the `pimem` command is not installed; run ./dev test once")
    return [found]


def give_to_nobody(path: Path) -> None:
    """Make a folder tree writable by the unprivileged user a subject runs as."""
    for folder, _dirs, files in os.walk(path):
        os.chown(folder, NOBODY, NOBODY)
        for name in files:
            os.chown(os.path.join(folder, name), NOBODY, NOBODY)


def as_nobody(argv: list[str]) -> list[str]:
    """`argv` run as an unprivileged user: root ignores permission bits, nobody does not."""
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


# ---- journals ---------------------------------------------------------------------------------


def header_line(session_id: str, cwd: str, timestamp: str = "2026-11-01T09:00:00.000Z") -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": timestamp, "cwd": cwd}


def entry_line(
    entry_id: str,
    parent_id: str | None,
    text: str,
    *,
    role: str = "user",
    timestamp: str = "2026-11-01T09:00:01.000Z",
) -> dict[str, Any]:
    """A message entry whose extracted text is exactly `text` (user or assistant)."""
    if role == "user":
        message: dict[str, Any] = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "timestamp": 1793523601000,
        }
    else:
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "mock",
            "provider": "mock",
            "model": "mock",
            "stopReason": "stop",
            "timestamp": 1793523601000,
        }
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "message": message,
    }


def linear_session(
    session_id: str, cwd: str, entries: Iterable[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    """A header, then entries given as (id, text, timestamp), each the child of the one before."""
    lines = [header_line(session_id, cwd)]
    parent = None
    for entry_id, text, timestamp in entries:
        lines.append(entry_line(entry_id, parent, text, timestamp=timestamp))
        parent = entry_id
    return lines


def line_bytes(line: dict[str, Any] | str) -> bytes:
    """One journal line as Pi writes it (JSON.stringify + newline); raw strings pass through."""
    text = line if isinstance(line, str) else dumps_like_js(line)
    return text.encode("utf-8", "surrogatepass") + b"\n"


def encoded_cwd(cwd: str) -> str:
    return "--" + cwd.strip("/").replace("/", "-") + "--"


@dataclass
class JournalWriter:
    """A workspace root with Pi's layout: `agent/sessions/<encoded cwd>/*.jsonl` and `state/`."""

    root: Path
    home: str = "/home/u"

    @property
    def agent_dir(self) -> Path:
        return self.root / "agent"

    @property
    def sessions_dir(self) -> Path:
        return self.agent_dir / "sessions"

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    def path_for(self, cwd: str, name: str) -> Path:
        return self.sessions_dir / encoded_cwd(cwd) / f"{name}.jsonl"

    def write(self, path: Path, lines: Iterable[dict[str, Any] | str]) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(line_bytes(line) for line in lines))
        return path

    def workspace(self, cwd: str, session_file: Path) -> dict[str, Any]:
        """The `workspace` of an `open` request."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        return {
            "home": self.home,
            "agent_dir": str(self.agent_dir),
            "session_dirs": [],
            "state_dir": str(self.state_dir),
            "cwd": cwd,
            "session_file": str(session_file),
        }

    def snapshot(self) -> dict[Path, bytes]:
        """Every journal's bytes, to prove later that nothing touched them."""
        return {path: path.read_bytes() for path in self.sessions_dir.rglob("*.jsonl") if path.is_file()}


# ---- the protocol -----------------------------------------------------------------------------


class Memory:
    """A protocol session with one implementation; instances are opened on demand."""

    def __init__(self, connector: Connector) -> None:
        self.adapter = Adapter(connector, load_schemas())
        self.implementation = self.adapter.start()

    @classmethod
    def connect(cls, impl: str, *, timeout: float = 120.0) -> Memory:
        return cls(connector_for(impl, timeout=timeout))

    @classmethod
    def serve(cls, argv: list[str], *, timeout: float = 120.0) -> Memory:
        """A subprocess adapter, e.g. `pimem serve`, possibly run as another user."""
        return cls(SubprocessConnector(argv, timeout=timeout))

    def open(
        self,
        instance: str,
        workspace: dict[str, Any],
        *,
        now: str = NOW,
        settings: dict[str, Any] | None = None,
        index: bool = True,
    ) -> None:
        self.adapter.send(
            "open",
            instance=instance,
            workspace=workspace,
            clock={"now": now, "tz": "UTC"},
            settings=settings or {},
        )
        if index:
            self.event(instance, "session_start", {"reason": "startup"})
            self.idle(instance)

    def event(self, instance: str, name: str, data: dict[str, Any]) -> None:
        self.adapter.send("event", instance=instance, name=name, data=data)

    def idle(self, instance: str) -> None:
        self.adapter.send("idle", instance=instance)

    def clock(self, instance: str, now: str) -> None:
        self.adapter.send("clock", instance=instance, now=now)

    def tool(self, instance: str, **arguments: Any) -> dict[str, Any]:
        return self.adapter.send("tool", instance=instance, name="memory_context", arguments=arguments)

    def raw_tool(self, instance: str, arguments: Any) -> dict[str, Any]:
        """A tool call with arguments of any shape, for hostile-input tests."""
        return self.adapter.send("tool", instance=instance, name="memory_context", arguments=arguments)

    def command(self, instance: str, args: str) -> dict[str, Any]:
        return self.adapter.send("command", instance=instance, name="memory", args=args)

    def stop(self) -> None:
        self.adapter.stop()


def result_ids(response: dict[str, Any]) -> list[str]:
    """The entry ids a response shows, in order (search/summaries results, read, around)."""
    details = response.get("details") or {}
    if "results" in details:
        return [item["entryId"] for item in details["results"]]
    if details.get("action") == "read" and details.get("status") == "ok":
        return [details["entryId"]]
    return [item["entryId"] for item in details.get("entries", [])]


# Text that only an internal failure puts into a message: SQL engines, tracebacks, exception names.
INTERNAL_MARKERS = (
    "Traceback",
    "sqlite",
    "SQLITE",
    "apsw",
    "FTS5",
    "fts5",
    "syntax error",
    'near "',
    "database is locked",
    "no such table",
    "no such column",
    "Error:",
    "Exception",
    'File "/',
)


def assert_no_internal_text(response: dict[str, Any], request: Any = None) -> None:
    """No internal marker in any output string, unless the caller's own input carried it."""
    echoed = list(strings_in(request))
    for text in strings_in(response):
        for marker in INTERNAL_MARKERS:
            if marker in text and not any(marker in given for given in echoed):
                raise AssertionError(f"internal text {marker!r} reached the model: {text[:300]!r}")
