"""Fixtures of the reference's unit tests: a temporary Pi agent dir, and sessions over the fixtures."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pimem_conformance.journals import JournalWriter

HOME = "/home/u"


@pytest.fixture
def workspace() -> Iterator[JournalWriter]:
    """A temporary folder laid out as Pi's agent dir (`agent/sessions/<encoded cwd>/`, `state/`)."""
    with tempfile.TemporaryDirectory(prefix="pimem-test-") as root:
        yield JournalWriter(Path(root), home=HOME)


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
