"""The disposable index: SQLite (apsw, WAL) with a contentless FTS5 table of redacted terms.

It stores, per journal, a byte cursor and a fingerprint for the tiered rewrite detection, and per
entry a byte pointer into the journal. It never stores entry text. A schema change rebuilds it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import apsw

from ._extract import extract, sensitive_call_ids
from ._journals import Journal, parse_line, read_chunk, read_header, read_line_at
from ._redact import redact

__all__ = ["SCHEMA_VERSION", "Index", "IndexUnavailable", "ts_key"]

SCHEMA_VERSION = "pimem-1"
_BUSY_MS = 10_000
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, cwd TEXT NOT NULL,
  started TEXT NOT NULL, cursor INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  header_hash BLOB, last_offset INTEGER, last_length INTEGER, last_hash BLOB, prefix_hash BLOB NOT NULL,
  skipped_lines INTEGER NOT NULL DEFAULT 0);
CREATE TABLE entries(
  rowid INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, entry_id TEXT NOT NULL, parent_id TEXT,
  timestamp TEXT NOT NULL, ts_key TEXT NOT NULL, kind TEXT NOT NULL, role TEXT, tool_name TEXT,
  chars INTEGER NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL, tokens_before INTEGER);
CREATE INDEX entries_by_id ON entries(entry_id);
CREATE INDEX entries_by_file ON entries(file_id, offset);
CREATE INDEX entries_by_time ON entries(ts_key);
-- every line with an id, entry or not: the tree that `around` walks
CREATE TABLE links(file_id INTEGER NOT NULL, entry_id TEXT NOT NULL, parent_id TEXT, offset INTEGER NOT NULL);
CREATE INDEX links_by_id ON links(file_id, entry_id);
CREATE INDEX links_by_parent ON links(file_id, parent_id);
-- tool calls that read a sensitive file; their results may arrive in a later pass
CREATE TABLE withheld_calls(file_id INTEGER NOT NULL, call_id TEXT NOT NULL, PRIMARY KEY(file_id, call_id))
  WITHOUT ROWID;
CREATE VIRTUAL TABLE terms USING fts5(text, content='', contentless_delete=1, detail=none,
  tokenize='unicode61 remove_diacritics 2');
"""


class IndexUnavailable(Exception):
    """The index cannot be opened or written."""


def ts_key(timestamp: str) -> str:
    """A journal timestamp as sortable ISO UTC with milliseconds; "" when it does not parse."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


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


class Index:
    """One connection to `<state_dir>/index.sqlite`; each thread opens its own."""

    def __init__(self, path: str, max_line_bytes: int) -> None:
        self.path = path
        self.max_line_bytes = max_line_bytes
        try:
            self.db = self._connect()
        except (apsw.CorruptError, apsw.NotADBError):
            self._remove_files()  # the index is disposable: a damaged one is rebuilt from journals
            self.db = self._connect()
        except (apsw.Error, OSError) as error:
            raise IndexUnavailable(str(error)) from error

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
            raise IndexUnavailable(str(error)) from error
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
        """A BEGIN IMMEDIATE transaction: writers queue on the busy timeout instead of failing midway."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except apsw.Error as error:
            raise IndexUnavailable(str(error)) from error
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        try:
            self.db.execute("COMMIT")
        except apsw.Error as error:
            raise IndexUnavailable(str(error)) from error

    def rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self.db.execute(sql, params))
        except apsw.Error as error:
            raise IndexUnavailable(str(error)) from error

    # -- meta ------------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        rows = self.rows("SELECT value FROM meta WHERE key=?", (key,))
        return str(rows[0][0]) if rows else None

    # -- indexing --------------------------------------------------------------------------------

    def _state(self, path: str) -> _FileState | None:
        row = self.db.execute(
            "SELECT id, cursor, size, mtime_ns, header_hash, last_offset, last_length, last_hash,"
            " prefix_hash, skipped_lines FROM files WHERE path=?",
            (path,),
        ).fetchone()
        return _FileState(*row) if row else None

    def drop_file(self, file_id: int) -> None:
        """Remove a journal's entries and terms (inside the caller's transaction)."""
        self.db.execute(
            "DELETE FROM terms WHERE rowid IN (SELECT rowid FROM entries WHERE file_id=?)", (file_id,)
        )
        for table in ("entries", "links", "withheld_calls"):
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

    def sync(self, journal: Journal, *, verify: bool = False, hidden: Any = None) -> int:
        """Bring one journal's rows up to date; returns how many entries were added.

        `hidden(session_id, entry_id)` tells which entries the user asked to forget.
        """
        added = 0
        first = True
        while True:
            try:
                header = read_header(journal.path)
                info = os.stat(journal.path)
            except OSError:
                self.forget_path(journal.path)
                return added
            if header is None:
                self.forget_path(journal.path)
                return added
            started = header[0].get("timestamp")
            current = Journal(
                journal.path,
                header[0]["id"],
                header[0]["cwd"],
                started if isinstance(started, str) else "",
                info.st_size,
                info.st_mtime_ns,
            )
            with self.write():
                state = self._state(journal.path)
                header_hash = _hash(header[1])
                if state is not None and (first and self._rewritten(current, state, header_hash, verify)):
                    self.drop_file(state.id)
                    self.db.execute("DELETE FROM files WHERE id=?", (state.id,))
                    state = None
                if state is None:
                    self.db.execute(
                        "INSERT INTO files(path, session_id, cwd, started, cursor, size, mtime_ns,"
                        " header_hash, prefix_hash) VALUES(?,?,?,?,0,?,?,?,?)",
                        (
                            journal.path,
                            current.session_id,
                            current.cwd,
                            current.started,
                            current.size,
                            current.mtime_ns,
                            header_hash,
                            b"",
                        ),
                    )
                    state = self._state(journal.path)
                    assert state is not None
                first = False
                chunk = read_chunk(journal.path, state.cursor, self.max_line_bytes)
                stored, malformed = self._store(state, chunk.lines, current.session_id, hidden)
                added += stored
                skipped = state.skipped_lines + chunk.overlong + malformed
                last = chunk.lines[-1] if chunk.lines else None
                self.db.execute(
                    "UPDATE files SET cursor=?, size=?, mtime_ns=?, header_hash=?, last_offset=?,"
                    " last_length=?, last_hash=?, prefix_hash=?, skipped_lines=?, session_id=?, cwd=?"
                    " WHERE id=?",
                    (
                        chunk.end,
                        current.size,
                        current.mtime_ns,
                        header_hash,
                        last[0] if last else state.last_offset,
                        len(last[1]) if last else state.last_length,
                        _hash(last[1]) if last else state.last_hash,
                        state.prefix_hash,
                        skipped,
                        current.session_id,
                        current.cwd,
                        state.id,
                    ),
                )
            if chunk.end == state.cursor or chunk.end >= current.size:
                return added

    def _store(
        self, state: _FileState, lines: list[tuple[int, bytes]], session_id: str, hidden: Any
    ) -> tuple[int, int]:
        """Insert the entries of some complete lines: (entries added, malformed lines).

        Advances state.prefix_hash over every line.
        """
        withheld = {
            row[0]
            for row in self.db.execute("SELECT call_id FROM withheld_calls WHERE file_id=?", (state.id,))
        }
        added = malformed = 0
        for offset, raw in lines:
            state.prefix_hash = _chain(state.prefix_hash, raw)
            if offset == 0:
                continue  # the header
            obj = parse_line(raw)
            if not isinstance(obj, dict):
                malformed += 1
                continue
            for call_id in sensitive_call_ids(obj):
                withheld.add(call_id)
                self.db.execute("INSERT OR IGNORE INTO withheld_calls VALUES(?,?)", (state.id, call_id))
            entry_id = obj.get("id")
            if not isinstance(entry_id, str):
                continue
            parent = obj.get("parentId")
            self.db.execute(
                "INSERT INTO links VALUES(?,?,?,?)",
                (state.id, entry_id, parent if isinstance(parent, str) else None, offset),
            )
            try:
                entry = extract(obj, withheld)
            except RecursionError:  # tool-call arguments nested too deep to serialise
                malformed += 1
                continue
            if entry is None or (hidden is not None and hidden(session_id, entry_id)):
                continue
            text = redact(entry.text)
            self.db.execute(
                "INSERT INTO entries(file_id, entry_id, parent_id, timestamp, ts_key, kind, role, tool_name,"
                " chars, offset, length, tokens_before) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    state.id,
                    entry.entry_id,
                    entry.parent_id,
                    entry.timestamp,
                    ts_key(entry.timestamp),
                    entry.kind,
                    entry.role,
                    entry.tool_name,
                    len(text),
                    offset,
                    len(raw),
                    entry.tokens_before,
                ),
            )
            self.db.execute("INSERT INTO terms(rowid, text) VALUES(?,?)", (self.db.last_insert_rowid(), text))
            added += 1
        return added, malformed
