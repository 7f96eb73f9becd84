"""Shared helpers of the reliability tests: sizes, figures, journals on disk, and a protocol session.

Every reliability test reaches the implementation the way the suite does, through the protocol
connector seam (`pimem_conformance.Connector`), except where the subject is the reference's own
command line (`pimem index`, `pimem serve`, `pimem rebuild`).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from pimem_conformance import (
    Adapter,
    Connector,
    SubprocessConnector,
    connector_for,
    load_schemas,
    strings_in,
)
from pimem_conformance.journals import JournalWriter, entry_line, header_line, line_bytes, linear_session

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
