"""A `Memory` over a JournalWriter's workspace, as the unit tests that drive one directly build it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from pimem._memory import Config, Memory
from pimem_conformance.journals import JournalWriter


def memory_in(workspace: JournalWriter, cwd: str, current: Path, now: datetime, **settings: Any) -> Memory:
    """A memory standing in `cwd` with `current` as its session's journal (`settings`: other Config
    fields)."""
    config = Config(
        state_dir=str(workspace.state_dir),
        agent_dir=str(workspace.agent_dir),
        home=workspace.home,
        cwd=cwd,
        session_file=str(current),
        **settings,
    )
    return Memory(config, now=now)
