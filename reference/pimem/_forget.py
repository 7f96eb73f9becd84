"""The forget list: entry ids and session ids the user asked to hide, kept apart from the index.

It lives in `<state_dir>/forget.json` so it survives a rebuild; the indexer consults it so a
forgotten entry never becomes a row or a term again.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable

__all__ = ["ForgetList"]


class ForgetList:
    def __init__(self, state_dir: str) -> None:
        self.path = os.path.join(state_dir, "forget.json")
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._entries: set[str] = set()
        self._sessions: set[str] = set()

    def _load(self) -> None:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self._stamp, self._entries, self._sessions = None, set(), set()
            return
        stamp = (info.st_size, info.st_mtime_ns)
        if stamp != self._stamp:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
            self._entries, self._sessions = set(data.get("entries", [])), set(data.get("sessions", []))
            self._stamp = stamp

    def now(self) -> Callable[[str, str], bool]:
        """Whether (session id, entry id) is forgotten, as the list stands now (one look at the
        file for any number of questions)."""
        with self._lock:
            self._load()
            entries, sessions = frozenset(self._entries), frozenset(self._sessions)
        return lambda session_id, entry_id: session_id in sessions or entry_id in entries

    def add(self, kind: str, value: str) -> None:
        """Record `value` as a forgotten entry id ("entry") or session id ("session")."""
        with self._lock:
            self._load()
            (self._entries if kind == "entry" else self._sessions).add(value)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            temporary = self.path + ".tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump({"entries": sorted(self._entries), "sessions": sorted(self._sessions)}, handle)
            os.replace(temporary, self.path)
            self._stamp = None
