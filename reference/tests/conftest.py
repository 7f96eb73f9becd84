"""Helpers shared by the reference's unit tests: temporary Pi workspaces with inline journals."""

from __future__ import annotations

import json
import shutil
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


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "journals"
NOW = "2026-11-29T12:00:00.000Z"


class Session:
    """A ProtocolServer instance over a copy of the committed fixture journals."""

    def __init__(self, root: Path, cwd: str, session: str | None = None, **settings: Any) -> None:
        from pimem._serve import ProtocolServer

        shutil.copytree(FIXTURES, root, dirs_exist_ok=True)
        self.root = root
        self.server = ProtocolServer()
        workspace = {
            "home": HOME,
            "agent_dir": str(root / "agent"),
            "session_dirs": [str(root / "flat")],
            "state_dir": str(root / "state"),
            "cwd": cwd,
            "session_file": str(root / session) if session else None,
        }
        self.call(
            cmd="open", instance="a", workspace=workspace, clock={"now": NOW, "tz": "UTC"}, settings=settings
        )
        self.call(cmd="event", instance="a", name="session_start", data={"reason": "startup"})
        self.call(cmd="idle", instance="a")

    def call(self, **request: Any) -> dict[str, Any]:
        response = self.server.handle({"seq": 1, **request})
        assert "errored" not in response, response
        return response

    def tool(self, **arguments: Any) -> dict[str, Any]:
        return self.call(cmd="tool", instance="a", name="memory_context", arguments=arguments)

    def command(self, args: str) -> dict[str, Any]:
        return self.call(cmd="command", instance="a", name="memory", args=args)

    def close(self) -> None:
        self.call(cmd="stop")


@pytest.fixture
def fixture_session() -> Iterator[Any]:
    """A factory of Sessions in temporary folders, all stopped at the end."""
    sessions: list[Session] = []
    with tempfile.TemporaryDirectory(prefix="pimem-fixtures-") as root:

        def make(cwd: str, session: str | None = None, **settings: Any) -> Session:
            sessions.append(Session(Path(root) / str(len(sessions)), cwd, session, **settings))
            return sessions[-1]

        yield make
        for session in sessions:
            session.close()
