"""One memory instance: its configuration, its clock, discovery and keeping the index current."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ._forget import ForgetList
from ._index import Index
from ._journals import DEFAULT_MAX_LINE_BYTES, Discovery, HeaderCache, Journal, discover, read_header
from ._scope import scoped_journals

__all__ = ["Config", "Memory"]


@dataclass
class Config:
    state_dir: str
    agent_dir: str | None = None
    session_dirs: list[str] = field(default_factory=list)
    home: str = ""
    cwd: str = ""
    session_file: str | None = None
    allow_global: bool = False
    lease_seconds: int = 120
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    tz: str = "UTC"
    index_path: str | None = None


class Memory:
    """What one Pi process runs. The clock is settable so nothing under test reads the system clock."""

    def __init__(self, config: Config, now: datetime | None = None) -> None:
        self.config = config
        self.clock = now
        self.forget = ForgetList(config.state_dir)
        self._index: Index | None = None
        self._headers: HeaderCache = {}
        self.failed: set[str] = set()  # journals the indexer could not take in (counted as skipped)

    def now(self) -> datetime:
        return self.clock if self.clock is not None else datetime.now(UTC)

    @property
    def index_path(self) -> str:
        return self.config.index_path or os.path.join(self.config.state_dir, "index.sqlite")

    def open_index(self) -> Index:
        """A new connection (each thread uses its own)."""
        return Index(self.index_path, self.config.max_line_bytes)

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self.open_index()
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def discover(self, headers: HeaderCache | None = None) -> Discovery:
        """Discovered journals, plus the current one when Pi keeps it outside the session dirs."""
        found = discover(
            self.config.agent_dir, self.config.session_dirs, self._headers if headers is None else headers
        )
        current = self.current_journal()
        if current is not None and all(journal.path != current.path for journal in found.journals):
            found.journals.append(current)
        return found

    def sync(self, journal: Journal, index: Index | None = None, verify: bool = False) -> int:
        return (index or self.index).sync(journal, verify=verify, hidden=self.forget.hidden)

    def current_journal(self) -> Journal | None:
        """The current session's journal, if Pi has created it and it has a valid header."""
        path = self.config.session_file
        if not path:
            return None
        try:
            header = read_header(path)
            info = os.stat(path)
        except OSError:
            return None
        if header is None:
            return None
        obj: dict[str, Any] = header[0]
        started = obj.get("timestamp")
        started = started if isinstance(started, str) else ""
        return Journal(os.path.abspath(path), obj["id"], obj["cwd"], started, info.st_size, info.st_mtime_ns)

    def stored(self, index: Index | None = None) -> dict[str, tuple[int, int]]:
        """path → (size, mtime_ns) of every journal the index has seen."""
        rows = (index or self.index).rows("SELECT path, size, mtime_ns FROM files")
        return {path: (size, mtime) for path, size, mtime in rows}

    def refresh(self, found: Discovery, journals: list[Journal]) -> None:
        """Before answering: index the current journal, catch up already-indexed journals in view that
        changed, and drop the rows of journals that no longer exist. Never-indexed journals are left
        to backfill, so a call is never blocked by a large backlog."""
        current = self.current_journal()
        if current is not None:
            self.sync(current)
        stored = self.stored()
        for journal in journals:
            seen = stored.get(journal.path)
            if seen is not None and seen != (journal.size, journal.mtime_ns):
                self.sync(journal)
        self.drop_missing(found)

    def drop_missing(self, found: Discovery, index: Index | None = None) -> None:
        index = index or self.index
        present = {journal.path for journal in found.journals}
        for path in self.stored(index):
            if path not in present and not os.path.isfile(path):
                index.forget_path(path)

    def journals(self, found: Discovery, scope: str, session_id: str | None = None) -> list[Journal]:
        config = self.config
        chosen = scoped_journals(
            found.journals, scope, cwd=config.cwd, home=config.home, session_file=config.session_file
        )
        return [journal for journal in chosen if session_id is None or journal.session_id == session_id]

    def indexing(self, journals: list[Journal]) -> dict[str, Any]:
        stored = self.stored()
        done = sum(1 for journal in journals if stored.get(journal.path) == (journal.size, journal.mtime_ns))
        return {"complete": done == len(journals), "indexedJournals": done, "totalJournals": len(journals)}
