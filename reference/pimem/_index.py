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
import functools
import hashlib
import multiprocessing
import operator
import os
import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypeVar

import apsw

from ._extract import WITHHELD, extract, sensitive_call_ids
from ._journals import Journal, parse_line, read_chunk, read_header, read_line_at
from ._redact import redact_many
from ._terms import index_text

__all__ = [
    "BULK_BYTES",
    "DAY_SHIFT",
    "MAX_MS",
    "SCHEMA_VERSION",
    "Index",
    "IndexUnavailable",
    "canonical_timestamp",
    "day_rowids",
    "epoch_ms",
    "preparing",
]

SCHEMA_VERSION = "pimem-7"
_BUSY_MS = 10_000
# Lines per transaction: fewer commits (and FTS5 segments) against holding the write lock longer
_BATCH_BYTES = 4 << 20
_AHEAD = 4  # batches prepared ahead of the one being stored, when workers prepare them
_DIGEST_MASK = (1 << 64) - 1
BULK_BYTES = 64 << 20  # a foreground pass over more is prepared by workers, and compacted after
_WORKERS = min(2, max(1, (os.cpu_count() or 2) - 1))  # this process stores meanwhile
T = TypeVar("T")
DAY_SHIFT = 24  # up to 16 million lines a day
_DAY_MS = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_LAST_OF_DAY = "SELECT max(rowid) FROM entries WHERE rowid BETWEEN ? AND ?"
MAX_MS = (1 << 46) - 1  # timestamps are clamped to 1970..4199
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, session_id TEXT NOT NULL, cwd TEXT NOT NULL,
  started TEXT NOT NULL, cursor INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
  header_hash BLOB NOT NULL, last_offset INTEGER NOT NULL, last_length INTEGER NOT NULL,
  last_hash BLOB NOT NULL, prefix_hash BLOB NOT NULL,
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
CREATE VIRTUAL TABLE terms USING fts5(text, content='', contentless_delete=1, detail=none,
  tokenize='unicode61 remove_diacritics 2 categories ''L* N* Co M*''');
"""


_READ_ONLY = "the memory index cannot be written: its state folder is read-only or inaccessible"
_PLAINLY: dict[type[BaseException], str] = {  # what an SQLite error means for the user
    apsw.FullError: "the disk holding the memory index is full",
    apsw.ReadOnlyError: _READ_ONLY,
    apsw.CantOpenError: _READ_ONLY,
    apsw.PermissionsError: _READ_ONLY,
    PermissionError: _READ_ONLY,
}


class IndexUnavailable(Exception):
    """The index cannot be opened or written. The message is for the user: it never holds SQL."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(_PLAINLY.get(type(error), "the memory index cannot be opened or written"))
        self.detail = f"{type(error).__name__}: {error}"  # for stderr, never for the agent


def epoch_ms(timestamp: str) -> int | None:
    """A timestamp with a zone (or UTC without) as milliseconds since 1970, clamped; None if unparsable."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return min(max((moment - _EPOCH) // _ONE_MS, 0), MAX_MS)


def _canonical_shape(timestamp: str) -> bool:
    """Whether it has the shape Pi writes (2026-11-20T10:00:00.000Z), checked without parsing."""
    return len(timestamp) == 24 and timestamp[10] == "T" and timestamp[19] == "." and timestamp[23] == "Z"


def canonical_timestamp(ms: int) -> str:
    """Milliseconds as Pi writes timestamps (ISO UTC, milliseconds, `Z`)."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def day_rowids(first_ms: int, last_ms: int) -> tuple[int, int]:
    """The rowids of the days from the one of `first_ms` to the one of `last_ms` (inclusive)."""
    return (first_ms // _DAY_MS) << DAY_SHIFT, ((last_ms // _DAY_MS + 1) << DAY_SHIFT) - 1


def _create(path: str) -> None:
    """A new, empty index file in WAL mode, made aside and linked into place, so no process ever
    opens one in another mode: switching modes takes a lock that SQLite does not wait for."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    aside = f"{path}.{os.getpid()}.{threading.get_ident()}.new"
    db = apsw.Connection(aside)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    try:
        os.link(aside, path)  # atomic, and never over an index another process just made
    except FileExistsError:
        pass
    finally:
        os.remove(aside)


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


def _schema(db: apsw.Connection) -> str | None:
    """The schema version an index file says it has, if any."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchall():
        return None
    rows = db.execute("SELECT value FROM meta WHERE key='schema'").fetchall()
    return str(rows[0][0]) if rows else None


def _hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass
class _FileState:
    id: int
    cursor: int
    size: int
    mtime_ns: int
    header_hash: bytes
    last_offset: int
    last_length: int
    last_hash: bytes
    prefix_hash: bytes
    skipped_lines: int


@dataclass(frozen=True)
class _Task:
    """Prepare the complete lines of a journal from `start`, about _BATCH_BYTES of them."""

    path: str
    start: int
    max_line_bytes: int
    withheld: frozenset[str]  # sensitive call ids the index knows of


class _Line(NamedTuple):
    """A line with an id, ready to store; an entry has a kind and a text."""

    day: int  # becomes the rowid (see _number)
    entry_id: str
    parent_id: str | None
    offset: int
    length: int
    ms: int
    shown: str | None  # the timestamp, when it is not the canonical rendering of `ms`
    kind: str | None = None
    text: str | None = None  # redacted
    call_id: str | None = None  # the tool call a tool result answers

    def row(self, file_id: int) -> list[Any]:
        """Its columns in the entries table."""
        chars = None if self.text is None else len(self.text)
        head = [self.day, file_id, self.entry_id, self.parent_id, self.offset, self.length, self.ms]
        return [*head, self.kind, chars, self.shown]


@dataclass
class _Prepared:
    """A task's lines with an id, ready to store: extracted and redacted, not yet numbered."""

    start: int
    end: int
    lines: list[_Line]
    sensitive: list[str]  # call ids of tool calls that read a sensitive file
    skipped: int  # overlong and malformed lines
    digest: int  # the prefix hash of these lines (see _line_digest)
    last: tuple[int, int, bytes] | None  # offset, length and hash of the last line


def _line_digest(offset: int, line: bytes) -> int:
    """A line's share of the prefix hash: the XOR of these over all lines, so that the prefix hash
    of a journal prepared in pieces, in any order, is the same. Its CRC times the (odd-made) offset,
    so that a line that moved counts as changed: CRCs alone are linear, and two equal-length lines
    that swap places would cancel out. It detects edits, not adversaries."""
    return zlib.crc32(line) * (2 * offset + 1) & _DIGEST_MASK


def _line_moved(path: str, state: _FileState) -> bool:
    """Whether the last line indexed no longer has the bytes it had (or is gone)."""
    line = read_line_at(path, state.last_offset, state.last_length)
    return line is None or _hash(line) != state.last_hash


def _digest(lines: Iterable[tuple[int, bytes]]) -> int:
    return functools.reduce(operator.xor, (_line_digest(offset, line) for offset, line in lines), 0)


def prepare(task: _Task) -> _Prepared:
    """Read, parse, extract and redact one batch of lines. Pure (no index): it runs in a worker
    process during large passes, in this one otherwise."""
    chunk = read_chunk(task.path, task.start, task.max_line_bytes, _BATCH_BYTES)
    withheld = set(task.withheld)
    found = _Prepared(task.start, chunk.end, [], [], chunk.overlong, _digest(chunk.lines), None)
    texts: list[str] = []
    for offset, raw in chunk.lines:
        if offset == 0:
            continue  # the header
        obj = parse_line(raw)
        if not isinstance(obj, dict):
            found.skipped += 1
            continue
        for call_id in sensitive_call_ids(obj):
            withheld.add(call_id)
            found.sensitive.append(call_id)
        entry_id = obj.get("id")
        if not isinstance(entry_id, str):
            continue
        try:
            entry = extract(obj, withheld)
        except RecursionError:  # tool-call arguments nested too deep to serialise
            found.skipped += 1
            continue
        parent, stamp = obj.get("parentId"), obj.get("timestamp")
        stamp = stamp if isinstance(stamp, str) else ""
        ms = epoch_ms(stamp) or 0
        shown = None if _canonical_shape(stamp) and 0 < ms < MAX_MS else stamp
        parent = parent if isinstance(parent, str) else None
        line = _Line(ms // _DAY_MS, entry_id, parent, offset, len(raw), ms, shown)
        if entry is not None:
            call = obj["message"].get("toolCallId") if entry.kind == "tool_result" else None
            line = _Line(*line[:7], entry.kind, None, call)
            texts.append(entry.text)
        found.lines.append(line)
    # redacted together: one scan per keyword for a batch of short texts
    redacted = iter(redact_many(texts))
    found.lines = [line._replace(text=next(redacted)) if line.kind else line for line in found.lines]
    if chunk.lines:
        offset, raw = chunk.lines[-1]
        found.last = (offset, len(raw), _hash(raw))
    return found


class _Inline(Executor):
    """Runs each task at once, in this process: a pass without workers."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:
            future.set_exception(error)
        return future


_INLINE = _Inline()


class _Workers(Executor):
    """Worker processes, and this process once they are gone (a sandbox may not let them live)."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool: Executor = pool

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        try:
            return self.pool.submit(fn, *args, **kwargs)
        except BrokenProcessPool:
            self.pool = _INLINE
            return self.pool.submit(fn, *args, **kwargs)


def _outcome(batch: Future[_Prepared], again: Callable[[], Future[_Prepared]]) -> _Prepared:
    """A batch's result; prepared once more (here) if the worker preparing it died."""
    try:
        return batch.result()
    except BrokenProcessPool:
        return again().result()


def _give_up(journal: Journal, error: Exception) -> None:
    raise error


@contextlib.contextmanager
def preparing(pending_bytes: int) -> Iterator[Executor | None]:
    """Worker processes to prepare batches in, when a pass has enough to do to repay starting them
    (a fresh interpreter each: the caller may have threads, which a fork would copy mid-step)."""
    if pending_bytes < BULK_BYTES:
        yield None
        return
    try:
        pool = ProcessPoolExecutor(_WORKERS, mp_context=multiprocessing.get_context("spawn"))
    except OSError:  # no processes to be had here (a sandbox): this one prepares everything
        yield None
        return
    with pool:
        yield _Workers(pool)


@dataclass
class _Pass:
    """One journal's pass: its state in the index, what it has learnt, what it added."""

    state: _FileState
    journal: Journal
    header_hash: bytes
    withheld: set[str]
    added: int = 0


class Index:
    """One connection to `<state_dir>/index.sqlite`; each thread opens its own."""

    def __init__(self, path: str, max_line_bytes: int) -> None:
        self.path = path
        self.max_line_bytes = max_line_bytes
        self._known: dict[str, tuple[int, int, int]] | None = None
        self._version = -1
        self.reads = 0  # moves whenever `known` changes (its answer may have changed since)
        self.foreign = 0  # moves whenever another connection's commit made `known` read again
        self._paths: tuple[int, dict[int, str]] | None = None
        try:
            self.db = self._connect()
        except (apsw.CorruptError, apsw.NotADBError):
            self._remove_files()  # the index is disposable: a damaged one is rebuilt from journals
            self.db = self._connect()

    def _connect(self) -> apsw.Connection:
        try:
            if not os.path.exists(self.path):
                _create(self.path)
            db = apsw.Connection(self.path)
            db.set_busy_timeout(_BUSY_MS)
            db.execute("PRAGMA synchronous=NORMAL")
            # under the write lock: processes that start together queue here, where a read turned
            # write would fail at once (SQLITE_BUSY, no waiting)
            with _immediate(db):
                if _schema(db) != SCHEMA_VERSION:
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
        """A write transaction (see _immediate). Any SQLite error inside it (a full disk, a read-only
        folder) rolls it back and becomes IndexUnavailable."""
        try:
            with _immediate(self.db):
                yield self.db
        except apsw.Error as error:
            raise IndexUnavailable(error) from error

    def rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self.db.execute(sql, params))
        except apsw.Error as error:
            raise IndexUnavailable(error) from error

    def compact(self) -> None:
        """After a large pass: FTS5 segments merged into one, free and half-full pages given back."""
        with self.write():
            self.db.execute("INSERT INTO terms(terms) VALUES('optimize')")
        try:
            self.db.execute("VACUUM")
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
        """path → (file id, size, mtime_ns) of every journal indexed. Kept up to date by this
        connection's own writes (`_note`), read again when another connection has committed."""
        version = self.rows("PRAGMA data_version")[0][0]  # moves when another connection commits
        if self._known is None or version != self._version:
            rows = self.rows("SELECT path, id, size, mtime_ns FROM files")
            self._known = {path: (file_id, size, mtime) for path, file_id, size, mtime in rows}
            self._version = version
            self.reads += 1
            self.foreign += 1
        return self._known

    def _note(self, path: str, state: tuple[int, int, int] | None) -> None:
        """What this connection just wrote of a journal (None: its row is gone)."""
        known = self.known()
        if state is None:
            known.pop(path, None)
        else:
            known[path] = state
        self.reads += 1

    def clear(self) -> None:
        """Drop every row and term (rebuild): a fresh, empty index."""
        with self.write() as db:
            self.recreate(db)
        self._known = None

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
            for (file_id,) in self.rows("SELECT id FROM files WHERE path=?", (path,)):
                self.drop_file(file_id)
                self.db.execute("DELETE FROM files WHERE id=?", (file_id,))
        self._note(path, None)

    def _prefix_digest(self, path: str, end: int) -> bytes:
        digest = position = 0
        while position < end and (chunk := read_chunk(path, position, self.max_line_bytes)).end > position:
            digest ^= _digest(line for line in chunk.lines if line[0] < end)
            position = chunk.end
        return digest.to_bytes(8, "little")

    def _rewritten(self, journal: Journal, state: _FileState, header_hash: bytes, verify: bool) -> bool:
        """Tiered rewrite detection, cheapest signal first."""
        return (
            journal.size < max(state.size, state.cursor)  # a shrink
            or (journal.size == state.size and journal.mtime_ns != state.mtime_ns)  # same size, new mtime
            or header_hash != state.header_hash
            or _line_moved(journal.path, state)
            or (verify and self._prefix_digest(journal.path, state.cursor) != state.prefix_hash)
        )

    def sync(
        self,
        journal: Journal,
        *,
        verify: bool = False,
        forgotten: Callable[[], Callable[[str, str], bool]] | None = None,
    ) -> int:
        """Bring one journal's rows up to date; entries added. See `sync_many`."""
        return self.sync_many([journal], verify=lambda journal: verify, forgotten=forgotten)

    def sync_many(
        self,
        journals: Iterable[Journal],
        *,
        verify: Callable[[Journal], bool] = lambda journal: False,
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
        ahead: deque[tuple[_Pass, Future[_Prepared]]] = deque()
        added = 0
        while True:
            while len(ahead) < (_AHEAD if pool else 1) and carry_on():
                journal = next(pending, None)
                if journal is None:
                    break
                if (work := self._begin(journal, verify(journal))) is not None:
                    ahead.append((work, self._submit(work, pool or _INLINE)))
                else:
                    done(journal)
            if not ahead:
                return added
            work, batch = ahead.popleft()
            try:
                prepared = _outcome(batch, functools.partial(self._submit, work, _INLINE))
            except Exception as error:
                failed(work.journal, error)
                continue
            if self._store(work, prepared, forgotten) and carry_on():
                ahead.append((work, self._submit(work, pool or _INLINE)))
            else:
                done(work.journal)
            added += work.added
            work.added = 0

    def _submit(self, work: _Pass, pool: Executor) -> Future[_Prepared]:
        task = _Task(work.journal.path, work.state.cursor, self.max_line_bytes, frozenset(work.withheld))
        return pool.submit(prepare, task)

    def _begin(self, journal: Journal, verify: bool) -> _Pass | None:
        """Start a journal's pass: None when it is gone or unchanged, else where it goes on from
        (byte 0 after a rewrite)."""
        try:
            header = read_header(journal.path)
            info = os.stat(journal.path)
        except OSError:
            header = None
        if header is None:
            self.forget_path(journal.path)
            return None
        obj, raw_header = header
        started = obj.get("timestamp")
        started = started if isinstance(started, str) else ""
        current = Journal(journal.path, obj["id"], obj["cwd"], started, info.st_size, info.st_mtime_ns)
        header_hash = _hash(raw_header)
        state = self._state(journal.path)
        unchanged = state is not None and (state.size, state.mtime_ns) == (info.st_size, info.st_mtime_ns)
        if unchanged and not verify and state and not self._rewritten(current, state, header_hash, False):
            return None  # nothing new and nothing rewritten: no write at all
        with self.write():
            state = self._state(journal.path)
            if state is not None and self._rewritten(current, state, header_hash, verify):
                self.drop_file(state.id)
                self.db.execute("DELETE FROM files WHERE id=?", (state.id,))
                state = None
            if state is None:
                state = self._new_file(current, raw_header)
            calls = self.rows("SELECT call_id FROM withheld_calls WHERE file_id=?", (state.id,))
        self._note(journal.path, (state.id, state.size, state.mtime_ns))
        return _Pass(state, current, header_hash, {call for (call,) in calls})

    def _new_file(self, journal: Journal, header: bytes) -> _FileState:
        """A journal's row before any batch: nothing indexed, the header its last line so far."""
        line = header[:-1]
        self.db.execute(
            "INSERT INTO files(path, session_id, cwd, started, cursor, size, mtime_ns, header_hash,"
            " last_offset, last_length, last_hash, prefix_hash) VALUES(?,?,?,?,0,-1,-1,?,0,?,?,x'')",
            (
                journal.path,
                journal.session_id,
                journal.cwd,
                journal.started,
                _hash(header),
                len(line),
                _hash(line),
            ),
        )
        state = self._state(journal.path)
        assert state is not None
        return state

    def _store(
        self, work: _Pass, prepared: _Prepared, forgotten: Callable[[], Callable[[str, str], bool]] | None
    ) -> bool:
        """Store a prepared batch and move the cursor and fingerprint past it, in one transaction;
        whether the journal has more to read."""
        journal = work.journal
        with self.write():
            state = self._state(journal.path)
            if state is None or state.id != work.state.id or state.cursor != prepared.start:
                return False  # another pass (another process) moved this journal on meanwhile
            work.state = state
            hidden = forgotten() if forgotten is not None else None
            new = [
                (state.id, call) for call in dict.fromkeys(prepared.sensitive) if call not in work.withheld
            ]
            work.withheld.update(prepared.sensitive)
            rows, texts = [], []
            for line in prepared.lines:
                if line.kind is not None and hidden is not None and hidden(journal.session_id, line.entry_id):
                    line = _Line(*line[:7])  # it stays a node of the tree, but is no entry
                elif line.call_id in work.withheld:
                    line = line._replace(text=WITHHELD)  # its call was read in an earlier batch
                rows.append(line.row(state.id))
                texts.append(line.text)
            self._number(rows)
            # FTS5 starts a new segment whenever a rowid is not above the previous one: insert in order
            order = sorted(range(len(rows)), key=lambda number: int(rows[number][0]))
            self.db.executemany(f"INSERT INTO entries VALUES({','.join('?' * 10)})", [rows[n] for n in order])
            terms = [(rows[n][0], index_text(text)) for n in order if (text := texts[n]) is not None]
            self.db.executemany("INSERT INTO terms(rowid, text) VALUES(?,?)", terms)
            self.db.executemany("INSERT OR IGNORE INTO withheld_calls VALUES(?,?)", new)
            last = prepared.last or (state.last_offset, state.last_length, state.last_hash)
            digest = int.from_bytes(state.prefix_hash, "little") ^ prepared.digest
            more = prepared.start < prepared.end < journal.size
            # size and mtime say "indexed as it is" only once the pass is through (a pass cut short
            # by a crash must not look finished)
            size, mtime = (-1, -1) if more else (journal.size, journal.mtime_ns)
            self.db.execute(
                "UPDATE files SET cursor=?, size=?, mtime_ns=?, header_hash=?, last_offset=?, last_length=?,"
                " last_hash=?, prefix_hash=?, skipped_lines=?, session_id=?, cwd=? WHERE id=?",
                (
                    prepared.end,
                    size,
                    mtime,
                    work.header_hash,
                    *last,
                    digest.to_bytes(8, "little"),
                    state.skipped_lines + prepared.skipped,
                    journal.session_id,
                    journal.cwd,
                    state.id,
                ),
            )
            work.added += len(terms)
            state.cursor = prepared.end
        self._note(journal.path, (state.id, size, mtime))
        return more

    def _number(self, rows: list[list[Any]]) -> None:
        """Turn each row's day into its rowid: the day's next sequence number."""
        following: dict[int, int] = {}
        for row in rows:
            day = row[0]
            if day not in following:
                first, last = day << DAY_SHIFT, ((day + 1) << DAY_SHIFT) - 1
                top = self.rows(_LAST_OF_DAY, (first, last))[0][0]
                following[day] = first if top is None else top + 1
            row[0] = following[day]
            following[day] += 1
