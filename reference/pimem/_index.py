"""The disposable index: keeping it current with the journals, one batch of lines at a time.

It holds, per journal, a byte cursor and a fingerprint for the tiered rewrite detection, and per
line with an id a byte pointer into the journal; never entry text. The storage and all of its SQL
are `_store`'s, and batches are prepared (read, extracted, redacted, made into search terms) by
`_prepare`; this module decides what to store: which journals changed, how (appended to or
rewritten), and which prepared batches go in, in one transaction each.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future
from dataclasses import dataclass

from ._journals import Journal, read_header
from ._prepare import Prepared, Task, as_withheld, line_hash, line_moved, prefix_digest, prepare
from ._redact import Policy
from ._store import FileState, IndexedJournal, Store
from ._workers import INLINE, outcome

__all__ = ["Index"]

_AHEAD = 8  # batches prepared ahead of the one being stored, when workers prepare them


def _give_up(journal: Journal, error: Exception) -> None:
    raise error


@dataclass
class _Pass:
    """One journal's pass: its state in the index, what it has learnt, what it added."""

    state: FileState
    journal: Journal
    header_hash: bytes
    withheld: set[str]
    added: int = 0


class Index:
    """One connection to `<state_dir>/index.sqlite`; each thread opens its own."""

    def __init__(self, path: str, max_line_bytes: int, redaction: Policy | None = None) -> None:
        self.path = path
        self.max_line_bytes = max_line_bytes
        self.redaction = redaction or Policy()
        self._known: dict[str, tuple[int, int, int]] = {}
        self._version: int | None = None  # the data_version `_known` was read at (None: read it again)
        # tokens that caches are keyed by: each is a new object whenever what it stands for changes
        self.generation = object()  # `known` changed (its answer may have changed since)
        self.foreign = object()  # another connection's commit made `known` read again
        self.store = Store(path)

    def close(self) -> None:
        self.store.close()

    def write(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction; any SQLite error inside it becomes IndexUnavailable."""
        return self.store.write()

    def known(self) -> dict[str, tuple[int, int, int]]:
        """path → (file id, size, mtime_ns) of every journal indexed. Kept up to date by this
        connection's own writes (`_note`), read again when another connection has committed."""
        version = self.store.data_version()
        if version != self._version:
            self._known = self.store.known_files()
            self._version = version
            self.generation = object()
            self.foreign = object()
        return self._known

    def _note(self, path: str, state: tuple[int, int, int]) -> None:
        """What this connection just wrote of a journal."""
        self.known()[path] = state
        self.generation = object()

    def clear(self) -> None:
        """Drop every row and term (rebuild): a fresh, empty index."""
        self.store.clear()
        self._version = None

    # -- indexing --------------------------------------------------------------------------------

    def forget_path(self, path: str) -> None:
        self.store.remove_journal(path)
        self._version = None  # its row is gone: `known` is read again

    def _rewritten(self, journal: Journal, state: FileState, header_hash: bytes, verify: bool) -> bool:
        """Tiered rewrite detection, cheapest signal first."""
        path = journal.path
        return (
            journal.size < max(state.size, state.cursor)  # a shrink
            or (journal.size == state.size and journal.mtime_ns != state.mtime_ns)  # same size, new mtime
            or header_hash != state.header_hash
            or line_moved(path, state.last_offset, state.last_length, state.last_hash)
            or (verify and prefix_digest(path, state.cursor, self.max_line_bytes) != state.prefix_hash)
        )

    def sync(
        self,
        journal: Journal,
        *,
        verify: bool,
        forgotten: Callable[[], Callable[[str, str], bool]] | None,
    ) -> int:
        """Bring one journal's rows up to date; entries added. See `sync_many`."""
        return self.sync_many([journal], verify=lambda journal: verify, forgotten=forgotten)

    def sync_many(
        self,
        journals: Iterable[Journal],
        *,
        verify: Callable[[Journal], bool],
        forgotten: Callable[[], Callable[[str, str], bool]] | None = None,
        pool: Executor | None = None,
        carry_on: Callable[[], bool] = lambda: True,
        failed: Callable[[Journal, Exception], None] = _give_up,
        done: Callable[[Journal], None] = lambda journal: None,
    ) -> int:
        """Bring journals' rows up to date, one transaction per batch of lines; entries added.

        `forgotten()(session_id, entry_id)` tells which entries the user asked to forget; it is asked
        inside each transaction, so a forget that committed first is always seen. With a `pool`,
        batches are prepared (read, parsed, redacted) in worker processes while this process stores
        them. `carry_on()` is asked before each batch is asked for; `failed(journal, error)` takes a
        journal whose preparation raised (by default, the error goes on up); `done(journal)` follows
        each journal.
        """
        pending = iter(journals)
        ahead: deque[tuple[_Pass, Future[Prepared]]] = deque()
        added = 0
        while True:
            while len(ahead) < (_AHEAD if pool else 1) and carry_on():
                journal = next(pending, None)
                if journal is None:
                    break
                if (work := self._begin(journal, verify(journal))) is not None:
                    ahead.append((work, self._submit(work, pool or INLINE)))
                else:
                    done(journal)
            if not ahead:
                return added
            work, batch = ahead.popleft()
            try:
                prepared = outcome(batch, functools.partial(self._submit, work, INLINE))
            except Exception as error:
                failed(work.journal, error)
                continue
            if self._store(work, prepared, forgotten) and carry_on():
                ahead.append((work, self._submit(work, pool or INLINE)))
            else:
                done(work.journal)
            added += work.added
            work.added = 0

    def _submit(self, work: _Pass, pool: Executor) -> Future[Prepared]:
        task = Task(
            work.journal.path,
            work.state.cursor,
            self.max_line_bytes,
            frozenset(work.withheld),
            self.redaction,
        )
        return pool.submit(prepare, task)

    def _begin(self, journal: Journal, verify: bool) -> _Pass | None:
        """Start a journal's pass: None when it is gone or unchanged, else where it goes on from
        (byte 0 after a rewrite)."""
        seen = self._as_now(journal.path)
        if seen is None:
            self.forget_path(journal.path)
            return None
        current, raw_header = seen
        header_hash = line_hash(raw_header)
        state = self.store.file_state(journal.path)
        unchanged = state is not None and (state.size, state.mtime_ns) == (current.size, current.mtime_ns)
        if unchanged and state and not self._rewritten(current, state, header_hash, verify):
            return None  # nothing new and nothing rewritten: no write at all
        with self.write():
            state = self.store.file_state(journal.path)
            # another connection may have indexed more of the journal since the look above, so that
            # a journal that only grew would look shrunk: look again, now that no one else writes
            seen = self._as_now(journal.path)
            if seen is None:
                return None  # gone meanwhile: the next pass forgets it
            current, raw_header = seen
            header_hash = line_hash(raw_header)
            if state is not None and self._rewritten(current, state, header_hash, verify):
                self.store.remove_file(state.id)
                state = None
            if state is None:
                state = self._new_file(current, raw_header)
            withheld = self.store.withheld(state.id)
        self._note(journal.path, (state.id, state.size, state.mtime_ns))
        return _Pass(state, current, header_hash, withheld)

    def _as_now(self, path: str) -> tuple[Journal, bytes] | None:
        """The journal at `path` as it is now, with its header line; None when it is gone or has no
        valid header."""
        try:
            header = read_header(path, self.max_line_bytes)
            info = os.stat(path)
        except OSError:
            return None
        if header is None:
            return None
        return Journal.from_header(path, header[0], info), header[1]

    def _new_file(self, journal: Journal, header: bytes) -> FileState:
        """A journal's row before any batch: nothing indexed, the header its last line so far."""
        line = header.removesuffix(b"\n")
        self.store.add_file(_indexed(journal), line_hash(header), len(line), line_hash(line))
        state = self.store.file_state(journal.path)
        assert state is not None
        return state

    def _store(
        self, work: _Pass, prepared: Prepared, forgotten: Callable[[], Callable[[str, str], bool]] | None
    ) -> bool:
        """Store a prepared batch and move the cursor and fingerprint past it, in one transaction;
        whether the journal has more to read."""
        journal = work.journal
        with self.write():
            state = self.store.file_state(journal.path)
            if state is None or state.id != work.state.id or state.cursor != prepared.start:
                return False  # another pass (another process) moved this journal on meanwhile
            work.state = state
            hidden = forgotten() if forgotten is not None else None
            new = [call for call in dict.fromkeys(prepared.sensitive) if call not in work.withheld]
            work.withheld.update(prepared.sensitive)
            lines = []
            for line in prepared.lines:
                if line.kind is not None and hidden is not None and hidden(journal.session_id, line.entry_id):
                    line = line.hidden()
                elif line.call_id in work.withheld:
                    line = as_withheld(line)  # its call was read in an earlier batch
                lines.append(line)
            added = self.store.add_lines(state.id, lines)
            self.store.add_withheld(state.id, new)
            last = prepared.last or (state.last_offset, state.last_length, state.last_hash)
            digest = int(state.prefix_hash) ^ prepared.digest
            more = prepared.start < prepared.end < journal.size
            # size and mtime say "indexed as it is" only once the pass is through (a pass cut short
            # by a crash must not look finished)
            size, mtime = (-1, -1) if more else (journal.size, journal.mtime_ns)
            self.store.advance_file(
                state.id,
                cursor=prepared.end,
                size=size,
                mtime_ns=mtime,
                header_hash=work.header_hash,
                last=last,
                prefix_hash=str(digest),
                skipped_lines=state.skipped_lines + prepared.skipped,
                session_id=journal.session_id,
                cwd=journal.cwd,
            )
            work.added += added
            state.cursor = prepared.end
        self._note(journal.path, (state.id, size, mtime))
        return more


def _indexed(journal: Journal) -> IndexedJournal:
    return IndexedJournal(
        journal.path, journal.session_id, journal.cwd, journal.started, journal.size, journal.mtime_ns
    )
