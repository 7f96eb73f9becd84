"""Pi journals on disk: discovery, header validation, chunked line reading and tolerant parsing.

Journals are only ever read here. A journal is keyed by its absolute path; its session id and cwd
come from its header line, never from the folder name (Pi's cwd encoding is lossy).
"""

from __future__ import annotations

import contextlib
import heapq
import json
import os
import re
import stat
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ._memo import Memo

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "Catalog",
    "Discovery",
    "Journal",
    "LineChunk",
    "parse_line",
    "read_chunk",
    "read_header",
    "read_line_at",
]

DEFAULT_MAX_LINE_BYTES = 16 << 20
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class Journal(NamedTuple):
    path: str
    session_id: str
    cwd: str
    started: str
    size: int
    mtime_ns: int

    @classmethod
    def from_header(cls, path: str, header: dict[str, Any], info: os.stat_result) -> Journal:
        """The journal that a valid header line (`read_header`) and a stat of its file describe."""
        started = header.get("timestamp")
        return cls(
            os.path.abspath(path),
            header["id"],
            header["cwd"],
            started if isinstance(started, str) else "",
            info.st_size,
            info.st_mtime_ns,
        )


@dataclass
class Discovery:
    journals: list[Journal]
    skipped_files: int


def _clean(value: Any) -> Any:
    """Replace lone surrogates (JSON.stringify of a string cut mid-pair) so the text is valid UTF-8."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {_clean(key): _clean(item) for key, item in value.items()}
    return value


def parse_line(raw: bytes) -> Any:
    """Parse one journal line; None when it is not JSON. orjson first, json for what orjson rejects
    (lone surrogates, invalid UTF-8, integers beyond 64 bits; not NaN or Infinity, which json alone
    reads). Nesting deeper than either parser goes (orjson stops at 1,024 levels, json at the
    recursion limit) counts as not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return _clean(json.loads(raw.decode("utf-8", "replace"), parse_constant=_not_json))
    except (ValueError, RecursionError):
        return None


def _not_json(constant: str) -> None:
    """json's NaN, Infinity and -Infinity, which JSON (and so JSON.parse, and Pi) has not."""
    raise ValueError(f"{constant} is not JSON")


def _valid_header(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") == "session"
        and isinstance(value.get("id"), str)
        and isinstance(value.get("cwd"), str)
    )


def read_header(path: str, max_line_bytes: int) -> tuple[dict[str, Any], bytes] | None:
    """The header object and its raw line, or None when the first line is not a valid header (a
    line longer than `max_line_bytes` is skipped unparsed, like every line: JM-JOURNAL-250)."""
    with open(path, "rb") as handle:
        first = handle.readline(max_line_bytes + 1)
    if not first.endswith(b"\n"):
        return None
    header = parse_line(first[:-1])
    return (header, first) if _valid_header(header) else None


def _inside(real: str, roots: list[str]) -> bool:
    return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)


def _roots(agent_dir: str, session_dirs: list[str]) -> list[str]:
    """The folders journals may live in, resolved: the default layout's and every flat dir."""
    folders = [os.path.join(agent_dir, "sessions"), *session_dirs]
    return [os.path.realpath(folder) for folder in folders]


def _candidates(agent_dir: str, session_dirs: list[str]) -> Iterator[str]:
    yield from sorted(str(path) for path in Path(agent_dir, "sessions").glob("*/*.jsonl"))
    for flat in session_dirs:
        yield from sorted(str(path) for path in Path(flat).glob("*.jsonl"))


class _Look(NamedTuple):
    """What one look at a candidate file found."""

    key: tuple[int, int, int] | None  # (inode, size, mtime_ns); None when the file could not be read
    journal: Journal | None  # None: no valid header (not a journal), or skipped

    @property
    def skipped(self) -> bool:
        return self.key is None


def _look(path: str, before: _Look | None, max_line_bytes: int) -> _Look:
    """Stat a candidate; its header is read again unless `before` saw the same inode, size and mtime."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # FIFOs and devices would block or never end
            raise OSError(f"{path} is not a regular file")  # skipped as a file that cannot be read
        key = (info.st_ino, info.st_size, info.st_mtime_ns)
        if before is not None and before.key == key:
            return before
        header = read_header(path, max_line_bytes)
    except OSError:
        return _Look(None, None)
    if header is None:
        return _Look(key, None)
    return _Look(key, Journal.from_header(path, header[0], info))


def _identity(journal: Journal | None) -> tuple[str, str] | None:
    """What scope depends on: a journal's session id and cwd."""
    return None if journal is None else (journal.session_id, journal.cwd)


def _stamp(folder: str) -> int | None:
    """A folder's mtime, or None when there is no such folder (yet)."""
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


class Catalog:
    """The discovered journals, kept between calls so that a call costs O(what changed).

    Folders are listed again only when one of their mtimes moves (a file was created, removed or
    renamed), and a file's header is read again only when its inode, size or mtime moves. A quick
    refresh looks at new files and at files that were not journals last time; a full one (backfill,
    commands) stats every file, and `restat` refreshes chosen journals.
    """

    def __init__(self, agent_dir: str, session_dirs: list[str], max_line_bytes: int) -> None:
        self.agent_dir = agent_dir
        self.session_dirs = session_dirs
        self.max_line_bytes = max_line_bytes
        # tokens that caches are keyed by: each is a new object whenever what it stands for changes
        self.generation = object()  # the set of journals, or a header's session id or cwd
        self.version = object()  # anything at all (a size, an mtime)
        self._lock = threading.Lock()
        self._stamps: dict[str, int | None] | None = None
        self._paths: list[str] = []  # candidates inside the roots, one per real file
        self._outside: int  # candidates whose real path leaves the roots: skipped and counted (each
        # _relist counts them; the first refresh relists, as no folder stamps are known yet)
        self._looks: dict[str, _Look] = {}
        self._found: Discovery | None = None
        self._positions: dict[str, int] = {}  # where each journal is in _found
        self._unsettled: set[str] = set()  # new candidates, and candidates that are no journal (yet)
        self._recent: Memo[list[str]] = Memo()

    def _folders(self) -> dict[str, int | None]:
        """The mtime of every folder whose listing discovery depends on."""
        sessions = os.path.join(self.agent_dir, "sessions")
        folders = [sessions, *self.session_dirs]
        with contextlib.suppress(OSError), os.scandir(sessions) as listing:
            folders += [item.path for item in listing if item.is_dir()]
        return {folder: _stamp(folder) for folder in folders}

    def _relist(self) -> None:
        roots = _roots(self.agent_dir, self.session_dirs)
        by_real: dict[str, str] = {}
        self._outside = 0
        for path in _candidates(self.agent_dir, self.session_dirs):
            real = os.path.realpath(path)
            if not _inside(real, roots):
                self._outside += 1  # a symlink leading outside the roots is never followed
            elif real not in by_real or not os.path.islink(path):
                by_real[real] = path  # one journal seen twice is kept once, under its own name
        self._paths = list(by_real.values())
        self._looks = {path: self._looks[path] for path in self._looks.keys() & set(self._paths)}
        self._unsettled = {path for path in self._paths if path not in self._looks}
        self._unsettled.update(path for path, look in self._looks.items() if look.journal is None)

    def _update(self, path: str, look: _Look) -> None:
        before = self._looks.get(path)
        if before is look:
            return
        self._looks[path] = look
        self.version = object()
        if look.journal is None:
            self._unsettled.add(path)  # looked at again on every refresh until it is a journal
        else:
            self._unsettled.discard(path)
        if _identity(before.journal if before else None) != _identity(look.journal):
            self.generation = object()
        if self._found is not None and path in self._positions and look.journal is not None:
            self._found.journals[self._positions[path]] = look.journal  # it grew: no new list
        else:
            self._found = None

    def refresh(self, full: bool) -> Discovery:
        with self._lock:
            stamps = self._folders()
            if stamps != self._stamps:
                self._relist()
                self._stamps = stamps
                self._found = None
                self.generation = object()
            for path in self._paths if full else sorted(self._unsettled):
                # a full look reads every header: one rewritten in place may keep size and mtime
                self._update(path, _look(path, None if full else self._looks.get(path), self.max_line_bytes))
            return self._discovery()

    def _discovery(self) -> Discovery:
        """What the looks found, as a copy the caller may change."""
        if self._found is None:
            looks = [self._looks[path] for path in self._paths]
            journals = [look.journal for look in looks if look.journal is not None]
            self._found = Discovery(journals, self._outside + sum(look.skipped for look in looks))
            self._positions = {journal.path: number for number, journal in enumerate(journals)}
        return Discovery(list(self._found.journals), self._found.skipped_files)

    def recent(self, count: int) -> list[str]:
        """The `count` journals written last, as far as the catalog knows."""
        with self._lock:

            def newest() -> list[str]:
                looks = (self._looks[path] for path in self._paths if path in self._looks)
                journals = [look.journal for look in looks if look.journal is not None]
                newest = heapq.nlargest(count, journals, key=lambda journal: journal.mtime_ns)
                return [journal.path for journal in newest]

            return self._recent.get(self.version, newest)

    def know(self, journal: Journal) -> Discovery | None:
        """Take a journal whose header was just read (the current one, which may have grown or had
        its header changed in place): the discovery with it, or None when it is no candidate (a
        current journal outside the roots)."""
        with self._lock:
            before = self._looks.get(journal.path)
            if before is None:
                return None
            if before.journal != journal:
                inode = before.key[0] if before.key else 0  # if it changed, the next look reads it again
                self._update(journal.path, _Look((inode, journal.size, journal.mtime_ns), journal))
            return self._discovery()

    def restat(self, paths: Iterable[str]) -> None:
        """Look at these journals again."""
        with self._lock:
            for path in [path for path in paths if path in self._looks]:  # not a current journal elsewhere
                self._update(path, _look(path, self._looks[path], self.max_line_bytes))


@dataclass
class LineChunk:
    """Complete lines read from one position: (byte offset, raw line without newline)."""

    lines: list[tuple[int, bytes]]
    end: int  # offset just after the last complete line consumed (including skipped long lines)
    overlong: int  # lines skipped unparsed because they exceed max_line_bytes


def read_chunk(path: str, start: int, max_line_bytes: int, chunk_bytes: int) -> LineChunk:
    """Read complete lines from `start`, about `chunk_bytes` of them; a partial last line is left for later.

    An overlong line is skipped without being kept in memory, and only once its newline is seen.
    """
    chunk = LineChunk([], start, 0)
    with open(path, "rb") as handle:
        handle.seek(start)
        pending = b""
        pending_at = start
        skipping = False
        while True:
            data = handle.read(chunk_bytes)
            if not data:
                return chunk
            pos = 0
            while True:
                newline = data.find(b"\n", pos)
                if newline < 0:
                    break
                if skipping:
                    skipping = False
                    chunk.overlong += 1
                else:
                    line = pending + data[pos:newline]
                    if len(line) > max_line_bytes:
                        chunk.overlong += 1
                    else:
                        chunk.lines.append((pending_at, line))
                pending = b""
                pos = newline + 1
                pending_at = chunk.end = handle.tell() - len(data) + pos
            if not skipping:
                pending += data[pos:]
                if len(pending) > max_line_bytes:
                    pending, skipping = b"", True
            if chunk.end > start:
                return chunk


def read_line_at(path: str, offset: int, length: int) -> bytes | None:
    """The raw bytes of a line at a stored pointer, or None when the file no longer holds them."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length + 1)
    except OSError:
        return None
    if data[length:] != b"\n":  # the file ends sooner, or the line no longer ends there
        return None
    return data[:length]
