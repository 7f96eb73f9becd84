"""The index's storage: its schema and every SQL statement against it, behind named methods.

SQLite through apsw, in WAL mode. Tables: `meta` (the schema version, the backfill lease), `files`
(per journal, a byte cursor and the fingerprint of the tiered rewrite detection), `entries` (per
line with an id, a byte pointer into the journal, never its text), `withheld_calls`,
`context_edits` (what Pi 1.x context_edit lines do to their targets) and `terms` (contentless
FTS5 of redacted text). A schema change rebuilds, never migrates. Entry rowids order
by day (see _time). Each row type sits next to its column list, so no caller indexes a tuple, and
any SQLite error leaves this module as IndexUnavailable. No other module writes SQL but
`_store_checks`, which holds what no answer of the memory runs (the doctor's checks, test damage).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import threading
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

import apsw
import orjson

from . import _pages
from ._errors import IndexUnavailable
from ._time import MAX_MS, MIN_MS, canonical_timestamp, day_of_rowid, day_rowids, rowids_of_day

__all__ = [
    "SCHEMA_VERSION",
    "Candidate",
    "Candidates",
    "ContextEditRow",
    "EntryRow",
    "FileState",
    "Filters",
    "IndexedJournal",
    "Line",
    "Scope",
    "Store",
]

SCHEMA_VERSION = "pimem-12"
_BUSY_MS = 10_000
_CHECKPOINT_BUSY_MS = 100  # a checkpoint that finds readers copies what it can and leaves the rest
_CHECKPOINT_WAL_BYTES = 4 << 20  # a write that leaves a larger WAL checkpoints it
_HOLDING_WALK = 25  # matches walked per rowid asked about, at most, before `holding` seeks instead
# combining marks are word characters (JM-SEARCH-041); the text given is _terms.index_text's
_TOKENIZER = "tokenize='unicode61 remove_diacritics 2 categories ''L* N* Co M*'''"
_TERMS = f"text, content='', contentless_delete=1, detail=none, {_TOKENIZER}"
_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, cwd TEXT NOT NULL,
  started TEXT NOT NULL, cursor INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  header_hash BLOB NOT NULL, last_offset INTEGER NOT NULL, last_length INTEGER NOT NULL,
  last_hash BLOB NOT NULL, prefix_hash TEXT NOT NULL,
  skipped_lines INTEGER NOT NULL DEFAULT 0);
-- Every line with an id: the tree that `around` walks. `kind` is NULL for a line that is no entry
-- (or a forgotten one); only entries have terms. What only a shown entry needs (its role, tool
-- name, tokens before) comes from its line, which is read anyway to show its text. `ts` is the
-- timestamp in milliseconds (0 when it does not parse); `timestamp` is stored only when the line's
-- own string is not the canonical rendering of `ts` (Pi always writes that form).
CREATE TABLE entries(
  rowid INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, entry_id TEXT NOT NULL, parent_id TEXT,
  offset INTEGER NOT NULL, length INTEGER NOT NULL, ts INTEGER NOT NULL, kind TEXT, chars INTEGER,
  timestamp TEXT);
CREATE INDEX entries_by_id ON entries(entry_id);
CREATE INDEX entries_by_parent ON entries(file_id, parent_id);
-- tool calls that read a sensitive file; their results may arrive in a later pass
CREATE TABLE withheld_calls(file_id INTEGER NOT NULL, call_id TEXT NOT NULL, PRIMARY KEY(file_id, call_id))
  WITHOUT ROWID;
-- Pi 1.x context_edit lines (an entry or not): which entry each one replaces or omits
CREATE TABLE context_edits(file_id INTEGER NOT NULL, target_id TEXT NOT NULL, offset INTEGER NOT NULL,
  length INTEGER NOT NULL, edit_id TEXT NOT NULL, replaced INTEGER NOT NULL,
  PRIMARY KEY(file_id, target_id, offset)) WITHOUT ROWID;
CREATE VIRTUAL TABLE terms USING fts5({_TERMS});
"""

_READ_ONLY = "the memory index cannot be written: its state folder is read-only or inaccessible"
_PLAINLY: dict[type[BaseException], str] = {  # what an SQLite error means for the user
    apsw.FullError: "the disk holding the memory index is full",
    apsw.ReadOnlyError: _READ_ONLY,
    apsw.CantOpenError: _READ_ONLY,
    apsw.PermissionsError: _READ_ONLY,
    PermissionError: _READ_ONLY,
}


def unavailable(error: BaseException) -> IndexUnavailable:
    """An SQLite (or file system) error as the user is told of it."""
    reason = _PLAINLY.get(type(error), "the memory index cannot be opened or written")
    return IndexUnavailable(reason, f"{type(error).__name__}: {error}")


# -- row types, each next to its columns ---------------------------------------------------------


@dataclass
class FileState:
    """A journal's row: how far it is indexed and the fingerprint its rewrites are detected by."""

    id: int
    cursor: int
    size: int
    mtime_ns: int
    header_hash: bytes
    last_offset: int
    last_length: int
    last_hash: bytes
    prefix_hash: str  # decimal digits (see _prepare.prefix_digest)
    skipped_lines: int


_FILE_STATE = ", ".join(field.name for field in dataclasses.fields(FileState))


class IndexedJournal(NamedTuple):
    """What the index remembers of a journal's header and file (the fields of `Journal`)."""

    path: str
    session_id: str
    cwd: str
    started: str
    size: int
    mtime_ns: int


class Line(NamedTuple):
    """A line with an id, ready to store; an entry has a kind, and the size and search terms of its
    redacted text (the text itself stays in the journal)."""

    day: int  # days since 1970: the store turns it into the line's rowid
    entry_id: str
    parent_id: str | None
    offset: int
    length: int
    ms: int
    shown: str | None  # the timestamp, when it is not the canonical rendering of `ms`
    kind: str | None = None
    chars: int | None = None  # characters of the redacted text
    terms: str | None = None  # what the terms table is given (`_terms.index_text` of that text)
    call_id: str | None = None  # the tool call a tool result answers
    edit: tuple[str, bool] | None = None  # a context_edit line: the entry it replaces (True) or omits

    def hidden(self) -> Line:
        """The line as a hidden entry is stored: a node of the tree, but no entry and no terms (a
        hidden context_edit still says what it did to its target)."""
        return self._replace(kind=None, chars=None, terms=None, call_id=None)


class ContextEditRow(NamedTuple):
    """A context_edit line as stored: where it is, and what it does to its target."""

    target_id: str
    offset: int
    length: int
    edit_id: str
    replaced: bool


_CONTEXT_EDIT_COLUMNS = ", ".join(ContextEditRow._fields)
_LINE_COLUMNS = "rowid, file_id, entry_id, parent_id, offset, length, ts, kind, chars, timestamp"


def _line_values(rowid: int, file_id: int, line: Line) -> tuple[Any, ...]:
    return (
        rowid,
        file_id,
        line.entry_id,
        line.parent_id,
        line.offset,
        line.length,
        line.ms,
        line.kind,
        line.chars,
        line.shown,
    )


class EntryRow(NamedTuple):
    """A stored line with its journal's columns; `kind` is None for a line that is no entry."""

    rowid: int  # orders by day (see _time)
    entry_id: str
    parent_id: str | None
    stored_timestamp: str | None  # only when the line's string is not the canonical one
    kind: str | None
    offset: int
    length: int
    path: str
    session_id: str
    cwd: str
    file_id: int
    chars: int | None
    ms: int

    @property
    def timestamp(self) -> str:
        """The line's `timestamp`, as it was written."""
        return canonical_timestamp(self.ms) if self.stored_timestamp is None else self.stored_timestamp

    @property
    def age(self) -> tuple[int, str, int]:
        """Sorts older first; equal times in an order that survives a rebuild (rowids do not)."""
        return (self.ms, self.path, self.offset)


_ENTRY_COLUMNS = {
    "rowid": "e.rowid",
    "entry_id": "e.entry_id",
    "parent_id": "e.parent_id",
    "stored_timestamp": "e.timestamp",
    "kind": "e.kind",
    "offset": "e.offset",
    "length": "e.length",
    "path": "f.path",
    "session_id": "f.session_id",
    "cwd": "f.cwd",
    "file_id": "f.id",
    "chars": "e.chars",
    "ms": "e.ts",
}
assert tuple(_ENTRY_COLUMNS) == EntryRow._fields
_ENTRY_SELECT = f"SELECT {', '.join(_ENTRY_COLUMNS.values())} FROM entries e JOIN files f ON f.id = e.file_id"


class Candidate(NamedTuple):
    """A search candidate: what ranking needs, before its row is fetched."""

    rowid: int
    chars: int
    ms: int
    path: str
    offset: int


class Candidates(Sequence[Candidate]):
    """Candidates as SQLite returned them, each made a `Candidate` only when it is read: making all
    2,000 of a common term's took 0.9 ms, and a page of a single-term search reads a dozen."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows  # as SQLite returned them: a Candidate's fields, in order

    def __len__(self) -> int:
        return len(self.rows)

    def without(self, rowids: Container[int]) -> Candidates:
        """The same candidates, in order, without these rowids."""
        return Candidates([row for row in self.rows if row[0] not in rowids])

    def __iter__(self) -> Iterator[Candidate]:
        return map(Candidate._make, self.rows)

    @overload
    def __getitem__(self, index: int) -> Candidate: ...

    @overload
    def __getitem__(self, index: slice) -> list[Candidate]: ...

    def __getitem__(self, index: int | slice) -> Candidate | list[Candidate]:
        if isinstance(index, slice):
            return list(map(Candidate._make, self.rows[index]))
        return Candidate._make(self.rows[index])


_CANDIDATE_COLUMNS = "e.rowid AS rowid, e.chars AS chars, e.ts AS ms, f.path AS path, e.offset AS offset"
# Shorter entries first (a focused answer), then newer, then in an order that survives a rebuild
# (rowids do not): the order all-terms candidates are ranked in.
_SHORTEST_FIRST = "chars, ms DESC, path DESC, offset DESC"

Scope = tuple[int, ...] | None  # the file ids of the journals in scope; None: every journal


class Filters(NamedTuple):
    """Which entries a listing or a search keeps: kinds, and a time range in milliseconds."""

    kinds: tuple[str, ...] | None = None
    since: int | None = None
    until: int | None = None
    hidden: frozenset[tuple[str, int]] = frozenset()  # (entry id, ms) of entries left out (_context)


def _in_scope(scope: Scope) -> str:
    # file ids are integers, so they are inlined
    return "1" if scope is None else f"e.file_id IN ({','.join(map(str, sorted(scope)))})"


def _filtered(filters: Filters, rowid: str) -> tuple[str, tuple[Any, ...]]:
    """The SQL conditions (each after AND) for `filters`, on entries `e` whose rowid is `rowid`."""
    where = ""
    params: tuple[Any, ...] = ()
    if filters.kinds is not None:
        where += f" AND e.kind IN ({','.join('?' * len(filters.kinds))})"
        params += filters.kinds
    if filters.since is not None or filters.until is not None:
        first = MIN_MS if filters.since is None else filters.since
        last = MAX_MS if filters.until is None else filters.until
        where += f" AND {rowid} BETWEEN ? AND ? AND e.ts BETWEEN ? AND ?"
        params += (*day_rowids(first, last), first, last)
    if filters.hidden:
        where += f" AND (e.entry_id, e.ts) NOT IN {_PAIRS}"
        params += (_json_list(sorted(filters.hidden)),)
    return where, params


# the (entry id, ms) pairs of a JSON list given as one parameter
_PAIRS = "(SELECT value ->> 0, value ->> 1 FROM json_each(?))"


# -- the connection ------------------------------------------------------------------------------


def _create(path: str) -> None:
    """A new, empty index file in WAL mode, made aside and linked into place, so no process ever
    opens one in another mode: switching modes takes a lock that SQLite does not wait for. Its
    pages keep room for their CRCs, and it is written through the VFS that fills them in. The
    caller holds the file and found none: a WAL or shared memory left there is not another
    process's, and a WAL without its database would be read into the new one."""
    _remove_files(path, ("-wal", "-shm"))
    aside = f"{path}.{os.getpid()}.{threading.get_ident()}.new"
    db = _pages.checkpointer(aside)
    _pages.reserve_bytes(db)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    try:
        os.link(aside, path)  # atomic, and never over an index another process just made
    except FileExistsError:
        pass
    finally:
        os.remove(aside)


def _configure(db: apsw.Connection, busy_ms: int) -> None:
    """Only `Store.checkpoint` writes the main file: never SQLite on its own, nor on close."""
    db.set_busy_timeout(busy_ms)
    db.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    db.execute("PRAGMA wal_autocheckpoint=0")


@contextlib.contextmanager
def _immediate(db: apsw.Connection) -> Iterator[None]:
    """A transaction that holds the write lock from its start, so writers queue on the busy timeout
    (a read that turns into a write fails at once when another writer got there first)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(apsw.Error):  # a failed COMMIT may have ended the transaction
            db.execute("ROLLBACK")
        raise


def _recreate(db: apsw.Connection) -> None:
    """Drop whatever schema is there and create ours: a schema change rebuilds, never migrates."""
    # a virtual table's shadow tables (FTS5's data, index, config) go with it
    tables = db.execute(
        "SELECT name FROM pragma_table_list WHERE schema='main' AND type IN ('table', 'virtual')"
        " AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    for (name,) in tables:
        db.execute(f'DROP TABLE "{name}"')
    db.execute(_SCHEMA)
    db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))


def _schema(db: apsw.Connection) -> str | None:
    """The schema version an index file says it has, if any."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchall():
        return None
    rows = db.execute("SELECT value FROM meta WHERE key='schema'").fetchall()
    return next((str(value) for (value,) in rows), None)


def _remove_files(path: str, suffixes: tuple[str, ...] = ("", "-wal", "-shm")) -> None:
    for suffix in suffixes:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def _connect(path: str) -> apsw.Connection:
    """A connection to the index file at `path`, made first when there is none. Raises DamagedIndex
    when the file is not as written here (the page check, or SQLite's own)."""
    found = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not _pages.unchanged(path):
            with _pages.holding_main_file(path):  # no other process checks, makes or writes it meanwhile
                if not os.path.exists(path):
                    _create(path)
                elif (damage := _pages.damage(path)) is not None:
                    raise _pages.DamagedIndex(damage, _pages.identity(path))
        found = _pages.identity(path)
        db = apsw.Connection(path)
        _configure(db, _BUSY_MS)
        db.execute("PRAGMA synchronous=NORMAL")
        # under the write lock: processes that start together queue here, where a read turned
        # write would fail at once (SQLITE_BUSY, no waiting)
        with _immediate(db):
            if _schema(db) != SCHEMA_VERSION:
                _recreate(db)
    except (apsw.CorruptError, apsw.NotADBError) as error:
        raise _pages.DamagedIndex(str(error), found) from error
    except (apsw.Error, OSError) as error:
        raise unavailable(error) from error
    return db


def _remove_damaged(path: str, found: list[int] | None) -> None:
    """Remove the index file found damaged, with its WAL and shared memory; unless another process,
    which found the same damage, has made the file anew meanwhile."""
    with _pages.holding_main_file(path):
        if found is not None and _pages.identity(path) == found:
            _remove_files(path)


class Store:
    """One connection to an index file, opened with our schema (a damaged file is made anew)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._checkpointer: apsw.Connection | None = None
        try:
            self._db = _connect(path)
        except _pages.DamagedIndex as damaged:
            _remove_damaged(path, damaged.found)  # the index is disposable: rebuilt from the journals
            try:
                self._db = _connect(path)
            except _pages.DamagedIndex as again:
                raise unavailable(again) from again

    def close(self) -> None:
        with contextlib.suppress(IndexUnavailable):  # a read-only folder: the WAL stays as it is
            self.checkpoint()
        if self._checkpointer is not None:
            self._checkpointer.close()
        self._db.close()

    def checkpoint(self) -> None:
        """Copy the WAL into the main file through the VFS that writes each page's CRC, empty the
        WAL when no reader needs it (what readers need stays), and stamp the file as checked (the
        file this connection has open: one in memory has none)."""
        if not self._db.filename:
            return
        try:
            if self._checkpointer is None:
                self._checkpointer = _pages.checkpointer(self._db.filename)
                _configure(self._checkpointer, _CHECKPOINT_BUSY_MS)
            self._checkpointer.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the WAL
            with _pages.writing_main_file(self._db.filename) as writing:
                if not writing:
                    return  # another process checks the file: the WAL waits for the next checkpoint
                with contextlib.suppress(apsw.BusyError):
                    self._checkpointer.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
                _pages.write_stamp(self._db.filename)
        except apsw.Error as error:
            raise unavailable(error) from error

    def _checkpoint_if_large(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            if os.path.getsize(self.path + "-wal") > _CHECKPOINT_WAL_BYTES:
                self.checkpoint()

    def _all(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        # read to the end: a statement left open would hold a read snapshot, and a write begun on a
        # stale snapshot fails at once (SQLITE_BUSY_SNAPSHOT) instead of waiting its turn
        try:
            return list(self._db.execute(sql, params))
        except apsw.Error as error:
            raise unavailable(error) from error

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """A write transaction (see _immediate). Any SQLite error inside it (a full disk, a read-only
        folder) rolls it back and becomes IndexUnavailable."""
        try:
            with _immediate(self._db):
                yield
        except apsw.Error as error:
            raise unavailable(error) from error
        self._checkpoint_if_large()

    def clear(self) -> None:
        """Drop every row and term: a fresh, empty index."""
        with self.write():
            _recreate(self._db)

    def compact(self) -> None:
        """After a large pass: FTS5 segments merged into one, free and half-full pages given back."""
        with self.write():
            self._db.execute("INSERT INTO terms(terms) VALUES('optimize')")
        self._all("VACUUM")
        self.checkpoint()

    def _value(self, sql: str, params: Any = ()) -> Any:
        """The one value of a query that answers one row of one column (a count, a pragma)."""
        ((value,),) = self._all(sql, params)
        return value

    def data_version(self) -> int:
        """A number that moves whenever another connection commits."""
        return int(self._value("PRAGMA data_version"))

    # -- meta ------------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self._all("SELECT value FROM meta WHERE key=?", (key,))
        return next((str(value) for (value,) in rows), None)

    def read_lease(self) -> str | None:
        return self.meta("lease")

    def write_lease(self, value: str | None) -> None:
        """Set the backfill lease (None: release it), inside the caller's transaction."""
        if value is None:
            self._db.execute("DELETE FROM meta WHERE key='lease'")
        else:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES('lease', ?)", (value,))

    # -- files -----------------------------------------------------------------------------------

    def known_files(self) -> dict[str, tuple[int, int, int]]:
        """path → (file id, size, mtime_ns) of every journal indexed."""
        rows = self._all("SELECT path, id, size, mtime_ns FROM files")
        return {path: (file_id, size, mtime) for path, file_id, size, mtime in rows}

    def file_state(self, path: str) -> FileState | None:
        rows = self._all(f"SELECT {_FILE_STATE} FROM files WHERE path=?", (path,))
        return next((FileState(*row) for row in rows), None)

    def add_file(
        self, journal: IndexedJournal, header_hash: bytes, last_length: int, last_hash: bytes
    ) -> None:
        """A journal's row before any batch: nothing indexed, its header the last line so far."""
        self._db.execute(
            "INSERT INTO files(path, session_id, cwd, started, cursor, size, mtime_ns, header_hash,"
            " last_offset, last_length, last_hash, prefix_hash) VALUES(?,?,?,?,0,-1,-1,?,0,?,?,'0')",
            (
                journal.path,
                journal.session_id,
                journal.cwd,
                journal.started,
                header_hash,
                last_length,
                last_hash,
            ),
        )

    def advance_file(
        self,
        file_id: int,
        *,
        cursor: int,
        size: int,
        mtime_ns: int,
        header_hash: bytes,
        last: tuple[int, int, bytes],
        prefix_hash: str,
        skipped_lines: int,
        session_id: str,
        cwd: str,
    ) -> None:
        """Move a journal's cursor and fingerprint past a batch (inside the caller's transaction)."""
        self._db.execute(
            "UPDATE files SET cursor=?, size=?, mtime_ns=?, header_hash=?, last_offset=?, last_length=?,"
            " last_hash=?, prefix_hash=?, skipped_lines=?, session_id=?, cwd=? WHERE id=?",
            (
                cursor,
                size,
                mtime_ns,
                header_hash,
                *last,
                prefix_hash,
                skipped_lines,
                session_id,
                cwd,
                file_id,
            ),
        )

    def remove_file(self, file_id: int) -> None:
        """A journal's row, lines and terms gone (inside the caller's transaction)."""
        self._db.execute(
            "DELETE FROM terms WHERE rowid IN"
            " (SELECT rowid FROM entries WHERE file_id=? AND kind IS NOT NULL)",
            (file_id,),
        )
        self._db.execute("DELETE FROM entries WHERE file_id=?", (file_id,))
        self._db.execute("DELETE FROM withheld_calls WHERE file_id=?", (file_id,))
        self._db.execute("DELETE FROM context_edits WHERE file_id=?", (file_id,))
        self._db.execute("DELETE FROM files WHERE id=?", (file_id,))

    def remove_journal(self, path: str) -> None:
        with self.write():
            for (file_id,) in self._all("SELECT id FROM files WHERE path=?", (path,)):
                self.remove_file(file_id)

    # -- lines -----------------------------------------------------------------------------------

    def withheld(self, file_id: int) -> set[str]:
        """The call ids of a journal's tool calls that read a sensitive file."""
        return {
            call for (call,) in self._all("SELECT call_id FROM withheld_calls WHERE file_id=?", (file_id,))
        }

    def add_withheld(self, file_id: int, calls: Iterable[str]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO withheld_calls VALUES(?,?)", [(file_id, call) for call in calls]
        )

    def add_lines(self, file_id: int, lines: list[Line]) -> int:
        """Store lines (inside the caller's transaction), each numbered within its day; entries
        with terms added."""
        numbering: dict[int, Iterator[int]] = {}  # day -> its next rowids
        rows = []
        for line in lines:
            if line.day not in numbering:
                first, last = rowids_of_day(line.day)
                top = self._value("SELECT max(rowid) FROM entries WHERE rowid BETWEEN ? AND ?", (first, last))
                numbering[line.day] = itertools.count(first if top is None else top + 1)
            rows.append((next(numbering[line.day]), line))
        # FTS5 starts a new segment whenever a rowid is not above the previous one: insert in order
        # (rowids are unique, so the tuples sort by them alone)
        rows.sort()
        placeholders = ",".join("?" * len(_LINE_COLUMNS.split(",")))
        self._db.executemany(
            f"INSERT INTO entries({_LINE_COLUMNS}) VALUES({placeholders})",
            [_line_values(rowid, file_id, line) for rowid, line in rows],
        )
        terms = [(rowid, line.terms) for rowid, line in rows if line.terms is not None]
        self._db.executemany("INSERT INTO terms(rowid, text) VALUES(?,?)", terms)
        edits = [
            (file_id, *line.edit, line.offset, line.length, line.entry_id) for line in lines if line.edit
        ]
        self._db.executemany(
            "INSERT OR REPLACE INTO context_edits(file_id, target_id, replaced, offset, length, edit_id)"
            " VALUES(?,?,?,?,?,?)",
            edits,
        )
        return len(terms)

    def context_edits(self, file_id: int, target_ids: list[str]) -> list[ContextEditRow]:
        """Every context_edit of these targets in a journal, the last written first."""
        marks = ",".join("?" * len(target_ids))
        rows = self._all(
            f"SELECT {_CONTEXT_EDIT_COLUMNS} FROM context_edits"
            f" WHERE file_id=? AND target_id IN ({marks}) ORDER BY offset DESC",
            (file_id, *target_ids),
        )
        return [
            ContextEditRow(target, offset, length, edit_id, bool(replaced))
            for target, offset, length, edit_id, replaced in rows
        ]

    def current_branch(self, file_id: int, since: int) -> Container[int]:
        """The offsets of the lines on a journal's current branch (its last line back to the root),
        from `since` on: the walk up stops below it (Pi writes a parent before its children)."""
        rows = self._all(
            "WITH RECURSIVE up(entry_id, parent_id, offset) AS ("
            " SELECT * FROM (SELECT entry_id, parent_id, offset FROM entries WHERE file_id=?1"
            "  ORDER BY offset DESC LIMIT 1)"
            " UNION SELECT e.entry_id, e.parent_id, e.offset FROM up"
            "  JOIN entries e ON e.entry_id = up.parent_id AND e.file_id=?1 WHERE up.offset > ?2)"
            " SELECT offset FROM up",
            (file_id, since),
        )
        return {offset for (offset,) in rows}

    def hide_entries(self, kind: str, key: str) -> None:
        """Hide the stored entries of a session (`kind` "session") or with an id ("entry"): their
        lines stay nodes of the tree that `around` walks, stored as `Line.hidden` stores them, and
        their terms are wiped from the disk."""
        if kind == "session":
            which = "e.file_id IN (SELECT id FROM files WHERE session_id = ?)"
        else:
            which = "e.entry_id = ?"
        rowids = f"SELECT e.rowid FROM entries e WHERE e.kind IS NOT NULL AND {which}"
        with self.write():
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.execute(f"DELETE FROM terms WHERE rowid IN ({rowids})", (key,))
            self._db.execute(
                f"UPDATE entries SET kind = NULL, chars = NULL WHERE rowid IN ({rowids})", (key,)
            )
            self._db.execute("INSERT INTO terms(terms) VALUES('optimize')")
        self.checkpoint()  # the wiped terms leave the WAL too

    # -- queries ---------------------------------------------------------------------------------

    def _entries(self, scope: Scope, where: str, params: tuple[Any, ...], tail: str = "") -> list[EntryRow]:
        sql = f"{_ENTRY_SELECT} WHERE e.kind IS NOT NULL AND {_in_scope(scope)} {where} {tail}"
        return [EntryRow(*values) for values in self._all(sql, params)]

    def entries(self, scope: Scope, filters: Filters) -> list[EntryRow]:
        return self._entries(scope, *_filtered(filters, "e.rowid"))

    def entries_with_id(self, scope: Scope, entry_id: str | None) -> list[EntryRow]:
        """In-scope entries with this id, in the order their journals have them."""
        return self._entries(scope, "AND e.entry_id = ?", (entry_id,), "ORDER BY e.offset")

    def entries_at(self, scope: Scope, rowids: Iterable[int]) -> list[EntryRow]:
        return self._entries(scope, f"AND e.rowid IN ({','.join(map(str, rowids))})", ())

    def newest_entries(self, scope: Scope, filters: Filters, count: int) -> list[EntryRow]:
        """At least the `count` newest in-scope entries (fewer if there are not as many). Rowids order
        by day only, so the oldest day among the newest rowids comes whole, and the caller sorts."""
        where, params = _filtered(filters, "e.rowid")
        found = self._entries(scope, where, (*params, count), "ORDER BY e.rowid DESC LIMIT ?")
        if len(found) == count:
            day = rowids_of_day(day_of_rowid(min(row.rowid for row in found)))
            found += self._entries(scope, where + " AND e.rowid BETWEEN ? AND ?", (*params, *day))
        return list({row.rowid: row for row in found}.values())

    def candidates(
        self, match: str, scope: Scope, filters: Filters, cap: int, *, shortest_first: bool
    ) -> Candidates:
        """The newest in-scope entries whose terms match (an FTS5 query), at most `cap` (FTS5 walks
        its doclists newest first), newest first or `shortest_first` (see _SHORTEST_FIRST)."""
        where, params = _filtered(filters, "terms.rowid")
        sql = (
            f"SELECT {_CANDIDATE_COLUMNS} FROM terms JOIN entries e ON e.rowid = terms.rowid"
            f" JOIN files f ON f.id = e.file_id WHERE terms MATCH ? AND {_in_scope(scope)} {where}"
            f" ORDER BY terms.rowid DESC LIMIT {int(cap)}"
        )
        if shortest_first:
            sql = f"SELECT * FROM ({sql}) ORDER BY {_SHORTEST_FIRST}"
        return Candidates(self._all(sql, (match, *params)))

    def holding(self, match: str, rowids: Iterable[int]) -> set[int]:
        """Which of these entries match an FTS5 query. FTS5 walks the query's matches between the
        lowest and the highest rowid, which costs far less than seeking each rowid in its doclists
        (as `rowid IN (...)` does, tens of microseconds each), unless the query matches very many
        entries there: then it seeks. A prefix query is always walked, since FTS5 expands the prefix
        again for every rowid it seeks (2,192 rowids took 25 s seeking, 40 ms walking); `+rowid`
        keeps the list from FTS5, so SQLite drops the other matches of the walk."""
        wanted = set(rowids)
        if not wanted:
            return set()
        walk = "SELECT rowid FROM terms WHERE terms MATCH ? AND rowid BETWEEN ? AND ?"
        if "*" in match:
            sql = f"{walk} AND +rowid IN ({','.join(map(str, wanted))})"
            return {rowid for (rowid,) in self._all(sql, (match, min(wanted), max(wanted)))}
        cap = _HOLDING_WALK * len(wanted)
        walked = [rowid for (rowid,) in self._all(f"{walk} LIMIT {cap}", (match, min(wanted), max(wanted)))]
        if len(walked) < cap:
            return wanted.intersection(walked)
        sql = f"SELECT rowid FROM terms WHERE terms MATCH ? AND rowid IN ({','.join(map(str, wanted))})"
        return {rowid for (rowid,) in self._all(sql, (match,))}

    def holding_both(self, match: str, alongside: str, rowids: Iterable[int]) -> set[int]:
        """Which of these entries, each known to match `alongside`, also match `match` (both FTS5
        queries): FTS5 intersects the two between the lowest and the highest rowid, advancing the
        longer doclist to each rowid of the shorter instead of seeking every rowid asked about."""
        wanted = set(rowids)
        if not wanted:
            return set()
        sql = "SELECT rowid FROM terms WHERE terms MATCH ? AND rowid BETWEEN ? AND ?"
        found = self._all(sql, (f"({match}) AND ({alongside})", min(wanted), max(wanted)))
        return wanted.intersection(rowid for (rowid,) in found)

    def document_frequency(self, match: str, cap: int) -> int:
        """How many entries of the whole index match an FTS5 query, counted up to `cap`."""
        sql = f"SELECT count(*) FROM (SELECT rowid FROM terms WHERE terms MATCH ? LIMIT {int(cap)})"
        return int(self._value(sql, (match,)))

    def entry_total(self) -> int:
        """Entries in the whole index."""
        return int(self._value("SELECT count(*) FROM entries WHERE kind IS NOT NULL"))

    def lines(self, file_id: int) -> list[EntryRow]:
        """Every stored line of a journal, entry or not, in the order they were written."""
        return [
            EntryRow(*row)
            for row in self._all(f"{_ENTRY_SELECT} WHERE e.file_id=? ORDER BY e.offset", (file_id,))
        ]

    def entries_among(self, scope: Scope, filters: Filters, pairs: frozenset[tuple[str, int]]) -> list[int]:
        """The rowids of the in-scope entries that pass the filters and are one of these (entry id,
        ms) pairs."""
        where, params = _filtered(filters._replace(hidden=frozenset()), "e.rowid")
        sql = (
            f"SELECT e.rowid FROM entries e WHERE e.kind IS NOT NULL AND {_in_scope(scope)}"
            f" AND (e.entry_id, e.ts) IN {_PAIRS} {where}"
        )
        return [rowid for (rowid,) in self._all(sql, (_json_list(sorted(pairs)), *params))]

    def node(self, file_id: int, entry_id: str) -> EntryRow | None:
        """A journal's last line with this id, entry or not."""
        rows = self._all(
            f"{_ENTRY_SELECT} WHERE e.file_id=? AND e.entry_id=? ORDER BY e.offset DESC LIMIT 1",
            (file_id, entry_id),
        )
        return next((EntryRow(*row) for row in rows), None)

    def children(self, file_id: int, parent_id: str) -> list[EntryRow]:
        """A journal's lines whose parent is this id, entries or not, in the order they were written."""
        rows = self._all(
            f"{_ENTRY_SELECT} WHERE e.file_id=? AND e.parent_id=? ORDER BY e.offset", (file_id, parent_id)
        )
        return [EntryRow(*values) for values in rows]

    # -- counts ----------------------------------------------------------------------------------

    def count_entries(
        self, paths: list[str], *, kinds: tuple[str, ...] | None = None, entry_id: str | None = None
    ) -> int:
        """Entries in these journals, of these kinds or with this id."""
        where, params = _filtered(Filters(kinds=kinds), "e.rowid")
        if entry_id is not None:
            where, params = where + " AND e.entry_id = ?", (*params, entry_id)
        count = self._value(
            "SELECT count(*) FROM entries e JOIN files f ON f.id = e.file_id"
            f" WHERE e.kind IS NOT NULL AND f.path IN (SELECT value FROM json_each(?)) {where}",
            (_json_list(paths), *params),
        )
        return int(count)

    def skipped_lines(self, paths: list[str]) -> int:
        """Overlong and malformed lines these journals had."""
        total = self._value(
            "SELECT coalesce(sum(skipped_lines), 0) FROM files"
            " WHERE path IN (SELECT value FROM json_each(?))",
            (_json_list(paths),),
        )
        return int(total)

    def kind_counts(self, path: str) -> dict[str | None, int]:
        """How many lines of each kind a journal has (None: lines that are no entry)."""
        rows = self._all(
            "SELECT e.kind, count(*) FROM entries e JOIN files f ON f.id = e.file_id WHERE f.path = ?"
            " GROUP BY e.kind",
            (path,),
        )
        return {kind: int(count) for kind, count in rows}


def _json_list(values: list[Any]) -> str:
    return orjson.dumps(values).decode()
