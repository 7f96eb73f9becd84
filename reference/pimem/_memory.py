"""One memory instance: its configuration, its clock, discovery and keeping the index current.

A tool call costs O(the current journal + the result rows): discovery is cached (`Catalog`), the
scope of a call is cached until a journal appears, goes or changes its header, and the current
journal is indexed before answering. Other journals in view that grew a little are indexed too;
bigger backlogs are caught up in the background (`wake`), and the answer says how far indexing got
and when every journal in view was last compared with the index (`checkedAt`, at most a minute ago:
a call that finds it older stats every journal of its scope again first, JM-INDEX-191).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ._errors import IndexUnavailable
from ._forget import ForgetList
from ._index import Index
from ._journals import DEFAULT_MAX_LINE_BYTES, Catalog, Discovery, Journal, read_header
from ._memo import Memo, SizedCache
from ._query import View, scope_of
from ._redact import Policy
from ._results import Indexing
from ._scope import ScopeName, scoped_journals
from ._time import iso_utc

__all__ = ["Config", "Memory", "indexed"]

# Journals looked at again on every call: the most recently written, since journals being written
# are the ones that change. Others are looked at again by each backfill.
_RESTAT = 16
# How old the comparison of every journal with the index behind `indexing.complete` may be
# (JM-INDEX-191); a call that finds it older stats every journal again before answering.
RECHECK_AFTER = timedelta(seconds=60)
_CATCH_UP_BYTES = 1 << 20  # what a call indexes of other journals in view before answering
_REDACTED_CHARS = 8 << 20  # redacted texts kept for paging through long entries


def indexed(journal: Journal, known: dict[str, tuple[int, int, int]]) -> bool:
    """Whether the index holds the journal as it is (same size and mtime)."""
    seen = known.get(journal.path)
    return seen is not None and seen[1] == journal.size and seen[2] == journal.mtime_ns


@dataclass
class Config:
    state_dir: str
    agent_dir: str
    session_dirs: list[str] = field(default_factory=list)
    home: str = ""
    cwd: str = ""
    session_file: str | None = None
    allow_global: bool = False
    lease_seconds: int = 120
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    tz: str = "UTC"
    index_path: str | None = None
    redaction: Policy = field(default_factory=Policy)  # the user's own patterns and allowlist


class Memory:
    """What one Pi process runs. The clock is settable so nothing under test reads the system clock."""

    def __init__(self, config: Config, now: datetime | None = None) -> None:
        self.config = config
        self.clock = now
        self.forget = ForgetList(config.state_dir)
        self.catalog = Catalog(config.agent_dir, config.session_dirs, config.max_line_bytes)
        self.failed: set[str] = set()  # journals the indexer could not take in (counted as skipped)
        self.write_error: IndexUnavailable | None = None  # the index stopped taking writes (disk full)
        self.wake: Callable[[], None] = lambda: None  # start catching up in the background
        self._index: Index | None = None
        self._scopes: Memo[dict[tuple[Any, ...], set[str]]] = Memo()  # per discovery generation
        self._dropped: object = None  # the catalog generation whose vanished journals were last dropped
        self._suspects: Memo[list[str]] = Memo()
        self._view: Memo[View] = Memo()
        self._redacted: SizedCache[tuple[Policy, str]] = SizedCache(_REDACTED_CHARS)
        self.checked_at: datetime | None = None  # when every discovered journal was last compared
        self._checked: dict[tuple[Any, ...], datetime] = {}  # the same, of one call scope's journals

    def now(self) -> datetime:
        return self.clock if self.clock is not None else datetime.now(UTC)

    @property
    def index_path(self) -> str:
        return self.config.index_path or os.path.join(self.config.state_dir, "index.sqlite")

    def open_index(self) -> Index:
        """A new connection (each thread uses its own)."""
        return Index(self.index_path, self.config.max_line_bytes, self.config.redaction)

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self.open_index()
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def discover(self, full: bool = False) -> Discovery:
        """Discovered journals, plus the current one when Pi keeps it outside the session dirs.

        `full` looks at every file again (and so moves `checked_at`); otherwise only at what the
        folders say is new."""
        started = self.now()
        found = self.catalog.refresh(full)
        if full:
            self.checked_at = started
        current = self.current_journal()
        if current is None:
            return found
        return self.catalog.know(current) or Discovery([*found.journals, current], found.skipped_files)

    def sync(self, journal: Journal, index: Index | None = None, verify: bool = False) -> int:
        return (index or self.index).sync(journal, verify=verify, forgotten=self.forget.now)

    def current_journal(self) -> Journal | None:
        """The current session's journal, if Pi has created it and it has a valid header."""
        path = self.config.session_file
        if not path:
            return None
        try:
            header = read_header(path, self.config.max_line_bytes)
            info = os.stat(path)
        except OSError:
            return None
        if header is None:
            return None
        return Journal.from_header(path, header[0], info)

    def before_answer(self, scope: ScopeName, session_id: str | None) -> View:
        """Index the current journal, then what the call sees: the in-scope journals as they are now
        and the indexing counts. Raises IndexUnavailable while the index takes no writes. When
        neither discovery nor the index changed since the previous call, its view is reused."""
        if self.write_error is not None:
            self.wake()  # try again in the background; until that works, every call says so
            raise self.write_error
        current = self.current_journal()
        if current is not None:
            self.sync(current)
        found = self.discover()
        checked = self.checked(scope, found)
        self.freshen(found)
        if self._dropped != self.catalog.generation:
            self._dropped = self.catalog.generation
            self.drop_missing(found)
        index = self.index
        call = (scope, session_id, self.config.cwd, self.config.session_file, index)

        def key() -> tuple[Any, ...]:
            return (*call, self.catalog.version, index.generation, checked)

        before, foreign = key(), index.foreign

        def rekey() -> tuple[Any, ...]:
            # looking indexes what grew, which moves the key: the view holds that. Another process's
            # commit seen meanwhile may have come after part of the view was taken: keep the key of
            # before, so that the next call looks again
            return key() if index.foreign is foreign else before

        return self._view.get(before, lambda: self._look(scope, session_id, checked), rekey=rekey)

    def _look(self, scope: ScopeName, session_id: str | None, checked: datetime) -> View:
        journals = self.journals(self.discover(), scope, session_id)
        self.catch_up(journals)
        paths = [journal.path for journal in journals]
        whole = scope == "global" and session_id is None
        session_file = self.config.session_file
        return View(
            self.index,
            journals,
            paths,
            scope_of(self.index, paths, whole),
            self.indexing(journals, checked),
            os.path.abspath(session_file) if session_file else None,
            self._reindexer(journals),
            self._redacted,
        )

    def _reindexer(self, journals: list[Journal]) -> Callable[[str], None]:
        def reindex(path: str) -> None:
            journal = next(journal for journal in journals if journal.path == path)
            self.sync(journal, verify=True)  # a full prefix check sees rewrites the fingerprint missed

        return reindex

    def checked(self, scope: ScopeName, found: Discovery) -> datetime:
        """When the journals of a call's scope were last compared with the index: by the last full
        discovery, or by a call in this scope. When that is too old to answer on, they are compared
        again now (JM-INDEX-191). A comparison after `now` (the clock was set back) does not count."""
        key = (scope, self.config.cwd, self.config.session_file)
        now = self.now()
        times = [moment for moment in (self.checked_at, self._checked.get(key)) if moment and moment <= now]
        checked = max(times, default=None)
        if checked is not None and not self.recheck_due(checked, now):
            return checked
        self.recheck(self.journals(found, scope))
        self._checked[key] = now
        return now

    def recheck_due(self, checked: datetime, now: datetime) -> bool:
        return now - checked > RECHECK_AFTER

    def recheck(self, journals: list[Journal]) -> None:
        """Compare these journals with the index again: one stat each, a header read only where the
        stat moved. The journals that grew are then caught up as after any change."""
        self.catalog.restat(journal.path for journal in journals)

    def freshen(self, found: Discovery) -> None:
        """Look again at the journals a call can afford to: the most recently written (journals being
        written are the ones that change), and any the index holds in another state than the catalog
        (another process indexed it after it grew)."""
        known = self.index.known()
        suspects = self._suspects.get(  # only another process makes the index run ahead
            self.index.foreign,
            lambda: [j.path for j in found.journals if j.path in known and not indexed(j, known)],
        )
        self.catalog.restat([*self.catalog.recent(_RESTAT), *suspects])

    def catch_up(self, journals: list[Journal]) -> None:
        """Index the journals in view that grew since they were indexed, when that is cheap (another
        process appended a few lines); the rest, and journals never indexed, in the background."""
        known = self.index.known()
        stale = [j for j in journals if not indexed(j, known) and j.path not in self.failed]
        grown = [j for j in stale if j.path in known]
        work = sum(j.size - known[j.path][1] if j.size >= known[j.path][1] else j.size for j in grown)
        if work <= _CATCH_UP_BYTES:
            for journal in grown:
                self.sync(journal)
        if len(grown) < len(stale) or work > _CATCH_UP_BYTES:
            self.wake()

    def journals(self, found: Discovery, scope: ScopeName, session_id: str | None = None) -> list[Journal]:
        """The journals of `found` in scope, narrowed to a session id. The scope is remembered until
        discovery changes (a journal appears, goes, or changes its header)."""
        config = self.config
        scopes = self._scopes.get((self.catalog.generation, len(found.journals)), dict)
        key = (scope, config.cwd, config.session_file)
        paths = scopes.get(key)
        if paths is None:
            chosen = scoped_journals(
                found.journals, scope, cwd=config.cwd, home=config.home, session_file=config.session_file
            )
            paths = scopes[key] = {journal.path for journal in chosen}
        return [
            journal
            for journal in found.journals
            if journal.path in paths and (session_id is None or journal.session_id == session_id)
        ]

    def drop_missing(self, found: Discovery, index: Index | None = None) -> None:
        index = index or self.index
        present = {journal.path for journal in found.journals}
        for path in list(index.known()):
            if path not in present and not os.path.isfile(path):
                index.forget_path(path)

    def indexing(self, journals: list[Journal], checked: datetime | None = None) -> Indexing:
        """How far these journals are indexed, as of their last comparison with the index (`checked`;
        by default the last full discovery)."""
        known = self.index.known()
        done = sum(indexed(journal, known) for journal in journals)
        checked_at = iso_utc(checked or self.checked_at or self.now())
        return {
            "complete": done == len(journals),
            "indexedJournals": done,
            "totalJournals": len(journals),
            "checkedAt": checked_at,
        }
