"""Pi journal builders: the lines Pi writes, the folder it writes them to, and writing them as Pi does.

One place for what every corpus here is made of (the fixture generator, the state machine, the
case workspaces, and the suite's and the reference's tests): a session header, message entries,
the encoded cwd folder name, journals written as `JSON.stringify` lines, and `JournalWriter`, a
folder laid out as Pi lays out its agent dir.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pimem_conformance._jsjson import dumps_like_js

__all__ = [
    "JournalWriter",
    "encoded_cwd",
    "entry_line",
    "header_line",
    "journal_bytes",
    "line_bytes",
    "linear_session",
    "message_line",
    "tool_call_line",
    "tool_result_line",
    "write_journal",
]

Line = dict[str, Any]


def encoded_cwd(cwd: str) -> str:
    """Pi's session folder name for a cwd: one leading `/` or `\\` dropped, then every `/`, `\\` and
    `:` made `-`, between `--` and `--` (`/home/u/app` -> `--home-u-app--`, `C:\\x` -> `--C--x--`).
    Lossy: `/a-b/c` and `/a/b-c` share a folder, so a journal's cwd comes from its header only."""
    return "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


def header_line(
    session_id: str,
    cwd: str,
    timestamp: str = "2026-11-01T09:00:00.000Z",
    *,
    version: int | None = 3,
    parent_session: str | None = None,
) -> Line:
    """A session header in Pi's key order; `version=None` for a version 1 journal (no field)."""
    header: Line = {"type": "session"}
    if version is not None:
        header["version"] = version
    header.update({"id": session_id, "timestamp": timestamp, "cwd": cwd})
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def message_line(entry_id: str, parent_id: str | None, timestamp: str, message: dict[str, Any]) -> Line:
    """A message entry (Pi's tree keys, then the message)."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": timestamp,
        "message": message,
    }


def entry_line(
    entry_id: str,
    parent_id: str | None,
    text: str,
    *,
    role: str = "user",
    timestamp: str = "2026-11-01T09:00:01.000Z",
) -> Line:
    """A user or assistant message whose extracted text is exactly `text`."""
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role != "user":
        message.update({"api": "mock", "provider": "mock", "model": "mock", "stopReason": "stop"})
    message["timestamp"] = 1793523601000
    return message_line(entry_id, parent_id, timestamp, message)


def tool_call_line(
    entry_id: str,
    parent_id: str | None,
    call: dict[str, Any],
    *,
    timestamp: str = "2026-11-01T09:00:01.000Z",
) -> Line:
    """An assistant message that only calls one tool: `call` is `{id, name, arguments}`."""
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", **call}],
        "api": "mock",
        "provider": "mock",
        "model": "mock",
        "stopReason": "toolUse",
        "timestamp": 1793613600000,
    }
    return message_line(entry_id, parent_id, timestamp, message)


def tool_result_line(
    entry_id: str,
    parent_id: str | None,
    call_id: str,
    tool_name: str,
    text: str,
    *,
    timestamp: str = "2026-11-01T09:00:01.000Z",
) -> Line:
    """The result of tool call `call_id`, whose extracted text is exactly `text`."""
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool_name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1793613600000,
    }
    return message_line(entry_id, parent_id, timestamp, message)


def linear_session(session_id: str, cwd: str, entries: Iterable[tuple[str, str, str]]) -> list[Line]:
    """A header, then entries given as (id, text, timestamp), each the child of the one before."""
    lines = [header_line(session_id, cwd)]
    parent = None
    for entry_id, text, timestamp in entries:
        lines.append(entry_line(entry_id, parent, text, timestamp=timestamp))
        parent = entry_id
    return lines


def line_bytes(line: Line | str) -> bytes:
    """One journal line as Pi writes it (JSON.stringify, then a newline); raw strings pass through."""
    text = line if isinstance(line, str) else dumps_like_js(line)
    return text.encode("utf-8", "surrogatepass") + b"\n"


def journal_bytes(lines: Iterable[Line | str]) -> bytes:
    return b"".join(line_bytes(line) for line in lines)


def write_journal(path: Path, lines: Iterable[Line | str]) -> Path:
    """Write a journal (and its folders); the path, for chaining."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(journal_bytes(lines))
    return path


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

    def write(self, path: Path, lines: Iterable[Line | str]) -> Path:
        return write_journal(path, lines)

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
