"""The index file's own integrity check (JM-INDEX-321): a CRC-32 in the last 4 bytes of every page.

SQLite reads a page whose bytes changed as data, so random bytes written into a closed index would
be answered from. Every page keeps 4 reserved bytes (SQLite leaves them alone) holding the CRC-32
of the rest of the page. Reads and normal writes use SQLite's own VFS, so search pays nothing: in
WAL mode only a checkpoint writes the main file, and every checkpoint goes through `checkpointer`,
a connection whose VFS fills in each page's CRC as it writes it (the WAL has SQLite's own frame
checksums and is never touched).

On open, a stamp beside the index (size, change time and inode of the main file as it was last
written or checked here) decides whether the file can have changed since: if not, nothing is read;
if so, every page is checked (`damage`). Damage never resets a change time, and a stamp is written
only once the coarse clock the kernel stamps files with has passed the file's change time, so a
later write cannot share it.

A checkpoint writes its pages and page 1's count one by one, so a check must not read the file
while another connection, in any process, writes it: a torn read would be taken for damage, and
the rebuild would wipe an index that others are using. A lock file beside the index orders them.
Checking, making and removing the file hold it and wait for it (`holding_main_file`); a
checkpoint holds it too but, rather than wait, is skipped (`writing_main_file`: its WAL stays for
the next one).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import struct
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from typing import BinaryIO

import apsw

__all__ = [
    "RESERVED_BYTES",
    "DamagedIndex",
    "checkpointer",
    "damage",
    "holding_main_file",
    "identity",
    "reserve_bytes",
    "unchanged",
    "write_stamp",
    "writing_main_file",
]

RESERVED_BYTES = 4
_FCNTL_RESERVE_BYTES = 38  # SQLITE_FCNTL_RESERVE_BYTES
_VFS_NAME = "pimem-pages"
_MAIN_DB = int(apsw.mapping_open_flags["SQLITE_OPEN_MAIN_DB"])
_HEADER = b"SQLite format 3\x00"
_CHUNK = 1 << 20
_STAMP_WAIT_S = 0.05  # at most this long for the coarse clock to pass a file's change time
# the clock Linux stamps files with (CLOCK_REALTIME_COARSE, which Python 3.11 does not name); other
# systems: the real-time clock, less a margin coarser than any file system's tick
_FILE_CLOCK, _FILE_CLOCK_MARGIN_NS = (5, 0) if sys.platform == "linux" else (time.CLOCK_REALTIME, 20_000_000)


class DamagedIndex(Exception):
    """The index file is not as this implementation wrote it: rebuild it from the journals.
    `found`: the identity of the file found damaged (see `identity`)."""

    def __init__(self, reason: str, found: list[int] | None) -> None:
        super().__init__(reason)
        self.found = found


def _crc(page: memoryview) -> bytes:
    return struct.pack(">I", zlib.crc32(page[:-RESERVED_BYTES]))


class _ChecksummingFile(apsw.VFSFile):
    def __init__(self, vfs: str, name: apsw.URIFilename | str | None, flags: list[int]) -> None:
        super().__init__(vfs, name, flags)
        self.main = bool(flags[0] & _MAIN_DB)

    def xWrite(self, data: bytes, offset: int) -> None:
        if self.main and len(data) > RESERVED_BYTES:
            page = bytearray(data)
            page[-RESERVED_BYTES:] = _crc(memoryview(page))
            data = bytes(page)
        super().xWrite(data, offset)


class _ChecksummingVFS(apsw.VFS):
    def __init__(self) -> None:
        super().__init__(_VFS_NAME, "")

    def xOpen(self, name: apsw.URIFilename | str | None, flags: list[int]) -> _ChecksummingFile:
        return _ChecksummingFile("", name, flags)


_registered: list[_ChecksummingVFS] = []
_lock = threading.Lock()


def checkpointer(path: str) -> apsw.Connection:
    """A connection whose writes of the main file carry each page's CRC: for checkpoints (and for
    making a new index) only."""
    with _lock:
        if not _registered:
            _registered.append(_ChecksummingVFS())
    return apsw.Connection(path, vfs=_VFS_NAME)


def reserve_bytes(db: apsw.Connection) -> None:
    """Keep RESERVED_BYTES at the end of every page of a database not written yet."""
    value = ctypes.c_int(RESERVED_BYTES)
    db.file_control("main", _FCNTL_RESERVE_BYTES, ctypes.addressof(value))


@contextlib.contextmanager
def _locked(path: str, how: int) -> Iterator[bool]:
    """`how` (flock's) on the lock file beside the index; False when a non-blocking lock is taken.
    True without a lock file when none can be made (a read-only folder, where no one writes)."""
    try:
        handle = os.open(f"{path}.lock", os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(handle, how)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(handle)  # drops the lock


def writing_main_file(path: str) -> contextlib.AbstractContextManager[bool]:
    """Hold the index file alone, to write it (False, at once: a check or another write holds it)."""
    return _locked(path, fcntl.LOCK_EX | fcntl.LOCK_NB)


def holding_main_file(path: str) -> contextlib.AbstractContextManager[bool]:
    """Hold the index file alone, to check, make or remove it; waits for a write under way."""
    return _locked(path, fcntl.LOCK_EX)


def _stamp_path(path: str) -> str:
    return f"{path}.pages"


def _stamp_of(info: os.stat_result) -> list[int]:
    return [info.st_size, info.st_ctime_ns, info.st_ino]


def identity(path: str) -> list[int] | None:
    """What tells this file from one made anew at the same path (an inode number is soon reused,
    its change time is not); None when there is no file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return [info.st_ino, info.st_ctime_ns]


def write_stamp(path: str) -> None:
    """Record the main file as it is now as checked. Skipped (so the next open checks it) when the
    coarse clock does not pass the file's change time in time, or the stamp cannot be written."""
    with contextlib.suppress(OSError):
        info = os.stat(path)
        deadline = time.monotonic() + _STAMP_WAIT_S
        while time.clock_gettime_ns(_FILE_CLOCK) - _FILE_CLOCK_MARGIN_NS <= info.st_ctime_ns:
            if time.monotonic() > deadline:
                return
            time.sleep(0.001)
        aside = f"{_stamp_path(path)}.{os.getpid()}.{threading.get_ident()}"
        with open(aside, "w", encoding="utf-8") as handle:
            json.dump(_stamp_of(info), handle)
        os.replace(aside, _stamp_path(path))


def _stamped(path: str, info: os.stat_result) -> bool:
    try:
        with open(_stamp_path(path), encoding="utf-8") as handle:
            return bool(json.load(handle) == _stamp_of(info))
    except (OSError, ValueError):
        return False


def unchanged(path: str) -> bool:
    """Whether the index file is as it was last written or checked here (False when there is none)."""
    try:
        return _stamped(path, os.stat(path))
    except FileNotFoundError:
        return False


def damage(path: str) -> str | None:
    """Why the index file at `path` is not as written here, or None (also when there is none). The
    caller holds the file (`holding_main_file`)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    if _stamped(path, info):
        return None
    with open(path, "rb") as handle:
        found = _shape_damage(handle.read(100), info.st_size) or page_damage(handle, info.st_size)
    if found is None:
        write_stamp(path)
    return found


def _shape_damage(header: bytes, size: int) -> str | None:
    """A header and length that no index written here has."""
    if len(header) < 100 or not header.startswith(_HEADER):
        return "no SQLite header"
    (page_size,) = struct.unpack(">H", header[16:18])
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"page size {page_size}"
    if header[20] != RESERVED_BYTES:
        return f"{header[20]} reserved bytes per page"
    (pages,) = struct.unpack(">I", header[28:32])
    if size % page_size or pages > size // page_size:
        return f"{size} bytes for {pages} pages of {page_size}"
    return None


def page_damage(handle: BinaryIO, size: int) -> str | None:
    """The first page whose CRC does not match its bytes (`size`: the file's, in whole pages)."""
    handle.seek(16)
    (page_size,) = struct.unpack(">H", handle.read(2))
    page_size = 65536 if page_size == 1 else page_size
    handle.seek(0)
    number = 0
    while chunk := handle.read(max(page_size, _CHUNK - _CHUNK % page_size)):
        view = memoryview(chunk)
        for start in range(0, len(view), page_size):
            page = view[start : start + page_size]
            if page[-RESERVED_BYTES:] != _crc(page):
                return f"page {number + 1} fails its check"
            number += 1
    return None
