"""The disposable index: SQLite (apsw, WAL) with a contentless FTS5 table of redacted terms.

It stores, per journal, a byte cursor and a fingerprint for the tiered rewrite detection, and per
line with an id a byte pointer into the journal. It never stores entry text. A schema change
rebuilds it. Entry rowids order by day: the UTC day of the timestamp, shifted left by 24 bits,
plus a sequence number within the day. So "the newest candidates" and date bounds are reverse
scans and rowid ranges, for the entries table and the FTS5 doclists alike, while rowids within a
day stay dense: FTS5 stores rowid deltas, and millisecond rowids would make its doclists 5 times
bigger.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import apsw

from ._extract import extract, sensitive_call_ids
from ._journals import Journal, LineChunk, parse_line, read_chunk, read_header, read_line_at
from ._redact import redact_many

__all__ = [
    "DAY_SHIFT",
    "MAX_MS",
    "SCHEMA_VERSION",
    "Index",
    "IndexUnavailable",
    "canonical_timestamp",
    "day_rowids",
    "epoch_ms",
]

SCHEMA_VERSION = "pimem-2"
_BUSY_MS = 10_000
# Lines per transaction: fewer commits (and FTS5 segments) against holding the write lock longer
_BATCH_BYTES = 4 << 20
DAY_SHIFT = 24  # up to 16 million lines a day
_DAY_MS = 86_400_000
_LAST_OF_DAY = "SELECT max(rowid) FROM entries WHERE rowid BETWEEN ? AND ?"
MAX_MS = (1 << 46) - 1  # timestamps are clamped to 1970..4199
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, cwd TEXT NOT NULL,
  started TEXT NOT NULL, cursor INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  header_hash BLOB, last_offset INTEGER, last_length INTEGER, last_hash BLOB, prefix_hash BLOB NOT NULL,
  skipped_lines INTEGER NOT NULL DEFAULT 0);
-- Every line with an id: the tree that `around` walks. `kind` is NULL for a line that is no entry
-- (or a forgotten one); only entries have terms. `ts` is the timestamp in milliseconds (0 when it
-- does not parse); `timestamp` is stored only when the line's own string is not the canonical
-- rendering of `ts` (Pi always writes that form).
CREATE TABLE entries(
  rowid INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, entry_id TEXT NOT NULL, parent_id TEXT,
  offset INTEGER NOT NULL, length INTEGER NOT NULL, ts INTEGER NOT NULL, kind TEXT, role TEXT,
  tool_name TEXT, chars INTEGER, tokens_before INTEGER, timestamp TEXT);
CREATE INDEX entries_by_id ON entries(entry_id);
CREATE INDEX entries_by_parent ON entries(file_id, parent_id);
-- tool calls that read a sensitive file; their results may arrive in a later pass
CREATE TABLE withheld_calls(file_id INTEGER NOT NULL, call_id TEXT NOT NULL, PRIMARY KEY(file_id, call_id))
  WITHOUT ROWID;
CREATE VIRTUAL TABLE terms USING fts5(text, content='', contentless_delete=1, detail=none,
  tokenize='unicode61 remove_diacritics 2');
"""


class IndexUnavailable(Exception):
    """The index cannot be opened or written. The message is for the user: it never holds SQL."""

    def __init__(self, error: BaseException) -> None:
        if isinstance(error, apsw.FullError):
            message = "the disk holding the memory index is full"
        elif isinstance(error, (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError, OSError)):
            message = "the memory index cannot be written: its state folder is read-only or inaccessible"
        else:
            message = "the memory index cannot be opened or written"
        super().__init__(message)
        self.detail = f"{type(error).__name__}: {error}"  # for stderr, never for the agent


def epoch_ms(timestamp: str) -> int | None:
    """A timestamp with a zone (or UTC without) as milliseconds since 1970, clamped; None if unparsable."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return min(max(int(moment.timestamp() * 1000), 0), MAX_MS)


def canonical_timestamp(ms: int) -> str:
    """Milliseconds as Pi writes timestamps (ISO UTC, milliseconds, `Z`)."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def day_rowids(first_ms: int, last_ms: int) -> tuple[int, int]:
    """The rowids of the days from the one of `first_ms` to the one of `last_ms` (inclusive)."""
    return (first_ms // _DAY_MS) << DAY_SHIFT, ((last_ms // _DAY_MS + 1) << DAY_SHIFT) - 1


def _chain(digest: bytes, line: bytes) -> bytes:
    return hashlib.blake2b(digest + line, digest_size=16).digest()


def _hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass
class _FileState:
    id: int
    cursor: int
    size: int
    mtime_ns: int
    header_hash: bytes | None
    last_offset: int | None
    last_length: int | None
    last_hash: bytes | None
    prefix_hash: bytes
    skipped_lines: int


@dataclass
class _Pass:
    """One journal's pass: what it has learnt so far (sensitive calls, entries added, skipped lines)."""

    state: _FileState
    path: str
    session_id: str
    withheld: set[str]
    hidden: Callable[[str, str], bool] | None
    added: int = 0
    skipped: int = 0


class Index:
    """One connection to `<state_dir>/index.sqlite`; each thread opens its own."""

    def __init__(self, path: str, max_line_bytes: int) -> None:
        self.path = path
        self.max_line_bytes = max_line_bytes
        self._known: dict[str, tuple[int, int, int]] | None = None
        self._version = -1
        self.reads = 0  # how often `known` was read again: its answer may have changed since
        self._paths: tuple[int, dict[int, str]] | None = None
        try:
            self.db = self._connect()
        except (apsw.CorruptError, apsw.NotADBError):
            self._remove_files()  # the index is disposable: a damaged one is rebuilt from journals
            self.db = self._connect()

    def _connect(self) -> apsw.Connection:
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            db = apsw.Connection(self.path)
            db.set_busy_timeout(_BUSY_MS)
            db.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
            with db:
                db.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if row is None or row[0] != SCHEMA_VERSION:
                    self.recreate(db)
        except (apsw.CorruptError, apsw.NotADBError):
            raise
        except (apsw.Error, OSError) as error:
            raise IndexUnavailable(error) from error
        return db

    @staticmethod
    def recreate(db: apsw.Connection) -> None:
        """Drop whatever schema is there and create ours: a schema change rebuilds, never migrates."""
        tables = db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )
        names = [(name, sql or "") for name, sql in tables]
        # virtual tables first: dropping one drops its shadow tables
        for name, _ in sorted(names, key=lambda item: not item[1].upper().startswith("CREATE VIRTUAL")):
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
        db.execute(_SCHEMA)
        db.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path + suffix)

    def close(self) -> None:
        self.db.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A BEGIN IMMEDIATE transaction: writers queue on the busy timeout instead of failing midway.

        Any SQLite error inside (a full disk, a read-only folder) rolls back and becomes IndexUnavailable.
        """
        self._known = None
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except apsw.Error as error:
            raise IndexUnavailable(error) from error
        try:
            yield self.db
            self.db.execute("COMMIT")
        except BaseException as error:
            with contextlib.suppress(apsw.Error):  # a failed COMMIT may have ended the transaction
                self.db.execute("ROLLBACK")
            if isinstance(error, apsw.Error):
                raise IndexUnavailable(error) from error
            raise

    def rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self.db.execute(sql, params))
        except apsw.Error as error:
            raise IndexUnavailable(error) from error

    def meta(self, key: str) -> str | None:
        rows = self.rows("SELECT value FROM meta WHERE key=?", (key,))
        return str(rows[0][0]) if rows else None

    def paths(self) -> dict[int, str]:
        """file id → path of every journal indexed (see `known`)."""
        known = self.known()
        if self._paths is None or self._paths[0] != self.reads:
            self._paths = (self.reads, {value[0]: path for path, value in known.items()})
        return self._paths[1]

    def known(self) -> dict[str, tuple[int, int, int]]:
        """path → (file id, size, mtime_ns) of every journal indexed, re-read only after a write."""
        version = self.rows("PRAGMA data_version")[0][0]  # moves when another connection commits
        if self._known is None or version != self._version:
            rows = self.rows("SELECT path, id, size, mtime_ns FROM files")
            self._known = {path: (file_id, size, mtime) for path, file_id, size, mtime in rows}
            self._version = version
            self.reads += 1
        return self._known

    # -- indexing --------------------------------------------------------------------------------

    def _state(self, path: str) -> _FileState | None:
        # `rows` reads to the end: a statement left open would hold a read snapshot, and a write
        # begun on a stale snapshot fails at once (SQLITE_BUSY_SNAPSHOT) instead of waiting its turn
        rows = self.rows(
            "SELECT id, cursor, size, mtime_ns, header_hash, last_offset, last_length, last_hash,"
            " prefix_hash, skipped_lines FROM files WHERE path=?",
            (path,),
        )
        return _FileState(*rows[0]) if rows else None

    def drop_file(self, file_id: int) -> None:
        """Remove a journal's lines and terms (inside the caller's transaction)."""
        self.db.execute(
            "DELETE FROM terms WHERE rowid IN"
            " (SELECT rowid FROM entries WHERE file_id=? AND kind IS NOT NULL)",
            (file_id,),
        )
        for table in ("entries", "withheld_calls"):
            self.db.execute(f"DELETE FROM {table} WHERE file_id=?", (file_id,))

    def forget_path(self, path: str) -> None:
        with self.write():
            state = self._state(path)
            if state is not None:
                self.drop_file(state.id)
                self.db.execute("DELETE FROM files WHERE id=?", (state.id,))

    def _prefix_digest(self, path: str, end: int) -> bytes:
        digest = b""
        position = 0
        while position < end:
            chunk = read_chunk(path, position, self.max_line_bytes)
            for offset, line in chunk.lines:
                if offset < end:
                    digest = _chain(digest, line)
            if chunk.end == position:
                break
            position = chunk.end
        return digest

    def _rewritten(self, journal: Journal, state: _FileState, header_hash: bytes, verify: bool) -> bool:
        """Tiered rewrite detection, cheapest signal first."""
        if journal.size < state.size or journal.size < state.cursor:
            return True
        if journal.size == state.size and journal.mtime_ns != state.mtime_ns:
            return True
        if state.header_hash is not None and header_hash != state.header_hash:
            return True
        if state.last_offset is not None and state.last_length is not None:
            line = read_line_at(journal.path, state.last_offset, state.last_length)
            if line is None or _hash(line) != state.last_hash:
                return True
        return verify and self._prefix_digest(journal.path, state.cursor) != state.prefix_hash

    def sync(
        self,
        journal: Journal,
        *,
        verify: bool = False,
        hidden: Callable[[str, str], bool] | None = None,
    ) -> int:
        """Bring one journal's rows up to date, _BATCH_BYTES of lines per transaction; entries added.

        `hidden(session_id, entry_id)` tells which entries the user asked to forget.
        """
        try:
            header = read_header(journal.path)
            info = os.stat(journal.path)
        except OSError:
            header = None
        if header is None:
            self.forget_path(journal.path)
            return 0
        obj, raw_header = header
        started = obj.get("timestamp")
        current = Journal(
            journal.path,
            obj["id"],
            obj["cwd"],
            started if isinstance(started, str) else "",
            info.st_size,
            info.st_mtime_ns,
        )
        header_hash = _hash(raw_header)
        state = self._state(journal.path)
        unchanged = state is not None and (state.size, state.mtime_ns) == (info.st_size, info.st_mtime_ns)
        if unchanged and not verify and state and not self._rewritten(current, state, header_hash, False):
            return 0  # nothing new and nothing rewritten: no write at all
        work: _Pass | None = None
        while True:
            with self.write():
                state = self._state(journal.path)
                if work is None:  # the first transaction decides whether the journal was rewritten
                    if state is not None and self._rewritten(current, state, header_hash, verify):
                        self.drop_file(state.id)
                        self.db.execute("DELETE FROM files WHERE id=?", (state.id,))
                        state = None
                    if state is None:
                        state = self._new_file(current, header_hash)
                    calls = self.db.execute("SELECT call_id FROM withheld_calls WHERE file_id=?", (state.id,))
                    work = _Pass(state, journal.path, current.session_id, {call for (call,) in calls}, hidden)
                assert state is not None
                work.state = state
                start = state.cursor
                chunk = read_chunk(journal.path, start, self.max_line_bytes, _BATCH_BYTES)
                self._store(work, chunk)
                self._advance(work, chunk, current, header_hash)
            if chunk.end == start or chunk.end >= current.size:
                return work.added

    def _new_file(self, journal: Journal, header_hash: bytes) -> _FileState:
        self.db.execute(
            "INSERT INTO files(path, session_id, cwd, started, cursor, size, mtime_ns, header_hash,"
            " prefix_hash) VALUES(?,?,?,?,0,?,?,?,?)",
            (
                journal.path,
                journal.session_id,
                journal.cwd,
                journal.started,
                journal.size,
                journal.mtime_ns,
                header_hash,
                b"",
            ),
        )
        state = self._state(journal.path)
        assert state is not None
        return state

    def _advance(self, work: _Pass, chunk: LineChunk, journal: Journal, header_hash: bytes) -> None:
        """Move the cursor and the fingerprint past the chunk (same transaction as its rows)."""
        state = work.state
        last = chunk.lines[-1] if chunk.lines else None
        self.db.execute(
            "UPDATE files SET cursor=?, size=?, mtime_ns=?, header_hash=?, last_offset=?, last_length=?,"
            " last_hash=?, prefix_hash=?, skipped_lines=?, session_id=?, cwd=? WHERE id=?",
            (
                chunk.end,
                journal.size,
                journal.mtime_ns,
                header_hash,
                last[0] if last else state.last_offset,
                len(last[1]) if last else state.last_length,
                _hash(last[1]) if last else state.last_hash,
                state.prefix_hash,
                state.skipped_lines + chunk.overlong + work.skipped,
                journal.session_id,
                journal.cwd,
                state.id,
            ),
        )
        work.skipped = 0

    def _store(self, work: _Pass, chunk: LineChunk) -> None:
        """Insert the lines with an id of one chunk, and the terms of those that are entries."""
        state = work.state
        lines: list[tuple[list[Any], str | None]] = []
        new_calls: list[tuple[int, str]] = []
        for offset, raw in chunk.lines:
            state.prefix_hash = _chain(state.prefix_hash, raw)
            if offset == 0:
                continue  # the header
            obj = parse_line(raw)
            if not isinstance(obj, dict):
                work.skipped += 1
                continue
            for call_id in sensitive_call_ids(obj):
                if call_id not in work.withheld:
                    work.withheld.add(call_id)
                    new_calls.append((state.id, call_id))
            entry_id = obj.get("id")
            if not isinstance(entry_id, str):
                continue
            try:
                entry = extract(obj, work.withheld)
            except RecursionError:  # tool-call arguments nested too deep to serialise
                work.skipped += 1
                continue
            parent = obj.get("parentId")
            stamp = obj.get("timestamp")
            stamp = stamp if isinstance(stamp, str) else ""
            ms = epoch_ms(stamp) or 0
            shown = None if stamp == canonical_timestamp(ms) else stamp
            row = [ms // _DAY_MS, state.id, entry_id, parent if isinstance(parent, str) else None, offset]
            row += [len(raw), ms]
            if entry is None or (work.hidden is not None and work.hidden(work.session_id, entry_id)):
                lines.append(([*row, None, None, None, None, None, shown], None))
            else:
                row += [entry.kind, entry.role, entry.tool_name, 0, entry.tokens_before, shown]
                lines.append((row, entry.text))
        # redacted together: one scan per keyword for a batch of short texts
        entries = [number for number, (_, text) in enumerate(lines) if text is not None]
        redacted = redact_many([text for _, text in lines if text is not None])
        for number, text in zip(entries, redacted, strict=True):
            lines[number][0][10] = len(text)
            lines[number] = (lines[number][0], text)
        self._number(lines)
        # FTS5 starts a new segment whenever a rowid is not above the previous one: insert in order
        lines.sort(key=lambda line: int(line[0][0]))
        self.db.executemany(
            "INSERT INTO entries VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", [row for row, _ in lines]
        )
        terms = [(row[0], text) for row, text in lines if text is not None]
        self.db.executemany("INSERT INTO terms(rowid, text) VALUES(?,?)", terms)
        self.db.executemany("INSERT OR IGNORE INTO withheld_calls VALUES(?,?)", new_calls)
        work.added += len(terms)

    def _number(self, lines: list[tuple[list[Any], str | None]]) -> None:
        """Turn each line's day into its rowid: the day's next sequence number."""
        following: dict[int, int] = {}
        for row, _ in lines:
            day = row[0]
            if day not in following:
                first, last = day << DAY_SHIFT, ((day + 1) << DAY_SHIFT) - 1
                top = self.rows(_LAST_OF_DAY, (first, last))[0][0]
                following[day] = first if top is None else top + 1
            row[0] = following[day]
            following[day] += 1
