"""Helpers shared by the reference's unit tests: temporary Pi workspaces with inline journals."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HOME = "/home/u"
CWD = "/home/u/app"


def header(
    session_id: str = "s-1", cwd: str = CWD, timestamp: str = "2026-11-20T10:00:00.000Z"
) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": session_id, "timestamp": timestamp, "cwd": cwd}


def message(entry_id: str, parent: str | None, role: str, timestamp: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": timestamp,
        "message": {"role": role, **fields},
    }


def user(
    entry_id: str, parent: str | None, text: str, timestamp: str = "2026-11-20T10:01:00.000Z"
) -> dict[str, Any]:
    return message(entry_id, parent, "user", timestamp, content=[{"type": "text", "text": text}])


def assistant(
    entry_id: str, parent: str | None, text: str, timestamp: str = "2026-11-20T10:02:00.000Z"
) -> dict[str, Any]:
    return message(entry_id, parent, "assistant", timestamp, content=[{"type": "text", "text": text}])


def write_journal(path: Path, lines: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(
        (line if isinstance(line, str) else json.dumps(line, separators=(",", ":"))) + "\n" for line in lines
    )
    path.write_text(text, encoding="utf-8")
    return path


class Workspace:
    """A Pi agent dir plus a state dir under a temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.agent_dir = root / "agent"
        self.state_dir = root / "state"
        self.sessions = self.agent_dir / "sessions"

    def journal(self, name: str, lines: list[Any], folder: str = "--home-u-app--") -> Path:
        return write_journal(self.sessions / folder / name, lines)


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory(prefix="pimem-test-") as root:
        yield Workspace(Path(root))
