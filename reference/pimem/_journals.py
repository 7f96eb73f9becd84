"""Pi journals on disk: discovery, header validation, chunked line reading and tolerant parsing.

Journals are only ever read here. A journal is keyed by its absolute path; its session id and cwd
come from its header line, never from the folder name (Pi's cwd encoding is lossy).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "CHUNK_BYTES",
    "DEFAULT_MAX_LINE_BYTES",
    "Discovery",
    "HeaderCache",
    "Journal",
    "LineChunk",
    "discover",
    "parse_line",
    "read_chunk",
    "read_header",
    "read_line_at",
]

CHUNK_BYTES = 1 << 20
DEFAULT_MAX_LINE_BYTES = 16 << 20
_HEADER_LIMIT = 1 << 20  # a header longer than this is not a Pi header
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Journal:
    path: str
    session_id: str
    cwd: str
    started: str
    size: int
    mtime_ns: int


@dataclass
class Discovery:
    journals: list[Journal] = field(default_factory=list)
    skipped_files: int = 0


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
    (lone surrogates, invalid UTF-8, integers beyond 64 bits). Nesting deeper than either parser
    goes (orjson stops at 1,024 levels, json at the recursion limit) counts as not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return _clean(json.loads(raw.decode("utf-8", "replace")))
    except (ValueError, RecursionError):
        return None


def _valid_header(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") == "session"
        and isinstance(value.get("id"), str)
        and isinstance(value.get("cwd"), str)
    )


def read_header(path: str) -> tuple[dict[str, Any], bytes] | None:
    """The header object and its raw line, or None when the first line is not a valid header."""
    with open(path, "rb") as handle:
        first = handle.readline(_HEADER_LIMIT)
    if not first.endswith(b"\n"):
        return None
    header = parse_line(first[:-1])
    return (header, first) if _valid_header(header) else None


def _inside(real: str, roots: list[str]) -> bool:
    return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)


def _candidates(agent_dir: str | None, session_dirs: list[str]) -> Iterator[tuple[str, list[str]]]:
    """Each candidate file with the real roots it may live under."""
    if agent_dir:
        sessions = os.path.join(agent_dir, "sessions")
        roots = [os.path.realpath(sessions)]
        for path in sorted(Path(sessions).glob("*/*.jsonl")):
            yield str(path), roots
    for flat in session_dirs:
        roots = [os.path.realpath(flat)]
        for path in sorted(Path(flat).glob("*.jsonl")):
            yield str(path), roots


HeaderCache = dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]]


def discover(agent_dir: str | None, session_dirs: list[str], cache: HeaderCache | None = None) -> Discovery:
    """Every journal under the default layout and the flat dirs whose first line is a valid header.

    `cache` remembers headers by (inode, size, mtime), so a pass over unchanged files only stats them.
    """
    cache = {} if cache is None else cache
    found = Discovery()
    seen: set[str] = set()
    for path, roots in _candidates(agent_dir, session_dirs):
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if not _inside(real, roots):
            found.skipped_files += 1  # a symlink leading outside the roots is never followed
            continue
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                found.skipped_files += 1  # FIFOs and devices would block or never end
                continue
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            cached = cache.get(path)
            if cached is None or cached[0] != key:
                header = read_header(path)
                cached = cache[path] = (key, header[0] if header else None)
        except OSError:
            found.skipped_files += 1
            continue
        obj = cached[1]
        if obj is None:
            continue
        started = obj.get("timestamp")
        found.journals.append(
            Journal(
                path=os.path.abspath(path),
                session_id=obj["id"],
                cwd=obj["cwd"],
                started=started if isinstance(started, str) else "",
                size=info.st_size,
                mtime_ns=info.st_mtime_ns,
            )
        )
    return found


@dataclass
class LineChunk:
    """Complete lines read from one position: (byte offset, raw line without newline)."""

    lines: list[tuple[int, bytes]]
    end: int  # offset just after the last complete line consumed (including skipped long lines)
    overlong: int  # lines skipped unparsed because they exceed max_line_bytes


def read_chunk(path: str, start: int, max_line_bytes: int, chunk_bytes: int = CHUNK_BYTES) -> LineChunk:
    """Read complete lines from `start`, about one chunk's worth; a partial last line is left for later.

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
    if len(data) != length + 1 or not data.endswith(b"\n"):
        return None
    return data[:-1]
