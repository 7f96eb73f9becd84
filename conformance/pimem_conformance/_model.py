"""A pure-Python model of journals and scope: the oracle of the conformance state machine.

It knows what every journal on disk holds, which entries are live (complete lines still in the
file), which text every entry has after redaction, and which journals a tool call may see. It
shares no code with any implementation and needs no index: the state machine writes only user
messages whose text is plain words, unique terms and planted secrets of one fixed format, so
their extraction and redaction are known exactly.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SECRET_PREFIX", "EntryModel", "JournalModel", "MemoryModel", "project_root", "redacted_text"]

# Planted secrets are GitHub personal access tokens (rule `github-pat`): `ghp_` + 36 letters/digits.
SECRET_PREFIX = "ghp_"
SECRET_MARKER = "[REDACTED:github-pat]"


def redacted_text(text: str, secrets: tuple[str, ...]) -> str:
    """The text an implementation indexes and returns: each planted secret becomes the marker."""
    for secret in secrets:
        text = text.replace(secret, SECRET_MARKER)
    return text


@dataclass(frozen=True)
class EntryModel:
    id: str
    term: str  # a word no other entry ever contains
    text: str  # what Pi wrote
    secrets: tuple[str, ...] = ()

    @property
    def redacted(self) -> str:
        return redacted_text(self.text, self.secrets)


@dataclass
class JournalModel:
    """One journal file: its header, its complete entry lines and an unterminated tail."""

    key: str  # path relative to the workspace
    cwd: str
    session_id: str
    lines: list[EntryModel] = field(default_factory=list)  # complete lines after the header, in order
    pending: EntryModel | None = None  # an entry whose line is still partial (not yet written to the end)
    pending_rest: str = ""  # the rest of that line, appended when it completes


def project_root(cwd: str, header_cwds: set[str], home: str) -> str:
    """The scope root of the brief: the outermost ancestor of cwd (cwd included) that is the cwd
    of a discovered journal; home, `/` and their direct children count only when they are cwd."""
    cwd = posixpath.normpath(cwd)
    ancestors = [cwd]
    while ancestors[-1] != "/":
        ancestors.append(posixpath.dirname(ancestors[-1]))
    home = posixpath.normpath(home)
    for candidate in reversed(ancestors):  # outermost first
        if candidate not in header_cwds:
            continue
        parent = posixpath.dirname(candidate)
        too_broad = candidate in (home, "/") or parent in (home, "/")
        if too_broad and candidate != cwd:
            continue
        return candidate
    return cwd


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class MemoryModel:
    home: str
    cwd: str
    current: str  # key of the current session's journal (the file may not exist)
    allow_global: bool
    journals: dict[str, JournalModel] = field(default_factory=dict)
    removed: dict[str, EntryModel] = field(default_factory=dict)  # entries whose lines are gone for good

    def live(self) -> dict[str, tuple[JournalModel, EntryModel]]:
        """Every entry with a complete line on disk, by id."""
        return {entry.id: (journal, entry) for journal in self.journals.values() for entry in journal.lines}

    def pending(self) -> dict[str, EntryModel]:
        return {j.pending.id: j.pending for j in self.journals.values() if j.pending is not None}

    def scope_journals(self, scope: str) -> set[str]:
        """Keys of the journals a tool call with this scope may see."""
        if scope == "session":
            return {self.current} & set(self.journals)
        if scope == "global":
            return set(self.journals)
        root = project_root(self.cwd, {journal.cwd for journal in self.journals.values()}, self.home)
        return {key for key, journal in self.journals.items() if _within(journal.cwd, root)}

    def all_entries(self) -> dict[str, EntryModel]:
        """Every entry ever written: live, pending or removed."""
        return {**self.removed, **self.pending(), **{key: e for key, (_, e) in self.live().items()}}

    def all_secrets(self) -> set[str]:
        return {secret for entry in self.all_entries().values() for secret in entry.secrets}

    def outside(self, scope: str) -> dict[str, EntryModel]:
        """Entries of journals outside the scope (live or pending): nothing may name them."""
        visible = self.scope_journals(scope)
        hidden: dict[str, EntryModel] = {}
        for key, journal in self.journals.items():
            if key in visible:
                continue
            hidden.update({entry.id: entry for entry in journal.lines})
            if journal.pending is not None:
                hidden[journal.pending.id] = journal.pending
        return hidden

    def remove_journal(self, key: str) -> None:
        journal = self.journals.pop(key)
        self.removed.update({entry.id: entry for entry in journal.lines})
        if journal.pending is not None:
            self.removed[journal.pending.id] = journal.pending

    def describe(self) -> dict[str, Any]:
        """A readable state for failure messages."""
        return {
            "cwd": self.cwd,
            "current": self.current,
            "allow_global": self.allow_global,
            "journals": {
                key: {
                    "cwd": j.cwd,
                    "entries": [e.id for e in j.lines],
                    "pending": j.pending.id if j.pending else None,
                }
                for key, j in self.journals.items()
            },
        }
