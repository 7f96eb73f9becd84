"""The disposable index: keeping it current with the journals, one batch of lines at a time.

It holds, per journal, a byte cursor and a fingerprint for the tiered rewrite detection, and per
line with an id a byte pointer into the journal; never entry text. The storage and all of its SQL
are `_store`'s; this module decides what to store: which journals changed, how (appended to or
rewritten), and which batches of prepared lines go in, in one transaction each.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import multiprocessing
import operator
import os
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ._extract import WITHHELD, context_edit, extract, sensitive_call_ids
from ._journals import Journal, parse_line, read_chunk, read_header, read_line_at
from ._memo import Memo
from ._redact import Policy, redact_many, redaction_policy
from ._store import FileState, IndexedJournal, Line, Store
from ._terms import index_text
from ._time import DAY_MS, MAX_MS, canonical_shape, epoch_ms

__all__ = ["BULK_BYTES", "Index", "preparing"]

_AHEAD = 4  # batches prepared ahead of the one being stored, when workers prepare them
_DIGEST_MASK = (1 << 64) - 1
BULK_BYTES = 64 << 20  # a foreground pass over more is prepared by workers, and compacted after
_WORKERS = min(2, max(1, (os.cpu_count() or 2) - 1))  # this process stores meanwhile
# Lines per transaction: fewer commits (and FTS5 segments) against holding the write lock longer
_BATCH_BYTES = 4 << 20
T = TypeVar("T")


def _hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass(frozen=True)
class _Task:
    """Prepare the complete lines of a journal from `start`, about _BATCH_BYTES of them."""

    path: str
    start: int
    max_line_bytes: int
    withheld: frozenset[str]  # sensitive call ids the index knows of
    redaction: Policy = field(default_factory=Policy)  # the user's own patterns and allowlist


@dataclass
class _Prepared:
    """A task's lines with an id, ready to store: extracted and redacted, not yet numbered."""

    start: int
    end: int
    lines: list[Line]
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


def _line_moved(path: str, state: FileState) -> bool:
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
        shown = None if canonical_shape(stamp) and 0 < ms < MAX_MS else stamp
        parent = parent if isinstance(parent, str) else None
        line = Line(ms // DAY_MS, entry_id, parent, offset, len(raw), ms, shown)
        if entry is not None:
            call = obj["message"].get("toolCallId") if entry.kind == "tool_result" else None
            line = line._replace(kind=entry.kind, call_id=call)
            texts.append(entry.text)
        if (edit := context_edit(obj)) is not None:
            line = line._replace(edit_target=edit.target_id, replaced=edit.replaced)
        found.lines.append(line)
    # redacted together: one scan per keyword for a batch of short texts
    with redaction_policy(task.redaction):
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
        self._known: dict[str, tuple[int, int, int]] | None = None
        self._version = -1
        self.generation = 0  # moves whenever `known` changes (its answer may have changed since)
        self.foreign = 0  # moves whenever another connection's commit made `known` read again
        self._paths: Memo[dict[int, str]] = Memo()
        self.store = Store(path)

    def close(self) -> None:
        self.store.close()

    def write(self) -> contextlib.AbstractContextManager[None]:
        """A write transaction; any SQLite error inside it becomes IndexUnavailable."""
        return self.store.write()

    def compact(self) -> None:
        self.store.compact()

    def paths(self) -> dict[int, str]:
        """file id → path of every journal indexed (see `known`)."""
        known = self.known()
        return self._paths.get(self.generation, lambda: {value[0]: path for path, value in known.items()})

    def known(self) -> dict[str, tuple[int, int, int]]:
        """path → (file id, size, mtime_ns) of every journal indexed. Kept up to date by this
        connection's own writes (`_note`), read again when another connection has committed."""
        version = self.store.data_version()
        if self._known is None or version != self._version:
            self._known = self.store.known_files()
            self._version = version
            self.generation += 1
            self.foreign += 1
        return self._known

    def _note(self, path: str, state: tuple[int, int, int] | None) -> None:
        """What this connection just wrote of a journal (None: its row is gone)."""
        known = self.known()
        if state is None:
            known.pop(path, None)
        else:
            known[path] = state
        self.generation += 1

    def clear(self) -> None:
        """Drop every row and term (rebuild): a fresh, empty index."""
        self.store.clear()
        self._known = None

    # -- indexing --------------------------------------------------------------------------------

    def forget_path(self, path: str) -> None:
        self.store.remove_journal(path)
        self._note(path, None)

    def _prefix_digest(self, path: str, end: int) -> bytes:
        digest = position = 0
        while position < end and (chunk := read_chunk(path, position, self.max_line_bytes)).end > position:
            digest ^= _digest(line for line in chunk.lines if line[0] < end)
            position = chunk.end
        return digest.to_bytes(8, "little")

    def _rewritten(self, journal: Journal, state: FileState, header_hash: bytes, verify: bool) -> bool:
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
        task = _Task(
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
        try:
            header = read_header(journal.path)
            info = os.stat(journal.path)
        except OSError:
            header = None
        if header is None:
            self.forget_path(journal.path)
            return None
        obj, raw_header = header
        current = Journal.from_header(journal.path, obj, info)
        header_hash = _hash(raw_header)
        state = self.store.file_state(journal.path)
        unchanged = state is not None and (state.size, state.mtime_ns) == (info.st_size, info.st_mtime_ns)
        if unchanged and not verify and state and not self._rewritten(current, state, header_hash, False):
            return None  # nothing new and nothing rewritten: no write at all
        with self.write():
            state = self.store.file_state(journal.path)
            if state is not None and self._rewritten(current, state, header_hash, verify):
                self.store.remove_file(state.id)
                state = None
            if state is None:
                state = self._new_file(current, raw_header)
            withheld = self.store.withheld(state.id)
        self._note(journal.path, (state.id, state.size, state.mtime_ns))
        return _Pass(state, current, header_hash, withheld)

    def _new_file(self, journal: Journal, header: bytes) -> FileState:
        """A journal's row before any batch: nothing indexed, the header its last line so far."""
        line = header[:-1]
        self.store.add_file(_indexed(journal), _hash(header), len(line), _hash(line))
        state = self.store.file_state(journal.path)
        assert state is not None
        return state

    def _store(
        self, work: _Pass, prepared: _Prepared, forgotten: Callable[[], Callable[[str, str], bool]] | None
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
                    line = line._replace(text=WITHHELD)  # its call was read in an earlier batch
                lines.append(line)
            added = self.store.add_lines(state.id, lines, index_text)
            self.store.add_withheld(state.id, new)
            last = prepared.last or (state.last_offset, state.last_length, state.last_hash)
            digest = int.from_bytes(state.prefix_hash, "little") ^ prepared.digest
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
                prefix_hash=digest.to_bytes(8, "little"),
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
