"""Batch preparation: a batch of journal lines read, parsed, extracted, redacted and turned into
search terms, away from the index.

`prepare(Task)` is pure (no index), so during large passes it runs in worker processes (see
`_workers`) and the storing process only inserts what comes back; otherwise it runs in the caller's
process. Here too: the digests of the tiered rewrite detection (the prefix hash of a
journal prepared in pieces, in any order, and the hash of its last line).
"""

from __future__ import annotations

import functools
import hashlib
import operator
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from ._extract import WITHHELD, context_edit, extract, read_call_escapes, sensitive_call_ids, tool_call_id
from ._journals import parse_line, read_chunk, read_line_at
from ._redact import Policy, redact_many, redaction_policy
from ._store import Line
from ._terms import index_text
from ._time import DAY_MS, entry_ms, is_canonical

__all__ = [
    "Prepared",
    "Task",
    "as_withheld",
    "line_hash",
    "line_moved",
    "prefix_digest",
    "prepare",
]

# Lines per transaction: fewer commits (and FTS5 segments) against holding the write lock longer
_BATCH_BYTES = 4 << 20


def line_hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class Task(NamedTuple):
    """Prepare the complete lines of a journal from `start`, about _BATCH_BYTES of them."""

    path: str
    start: int
    max_line_bytes: int
    withheld: frozenset[str]  # sensitive call ids the index knows of
    redaction: Policy = Policy()  # the user's own patterns and allowlist


@dataclass
class Prepared:
    """A task's lines with an id, ready to store: extracted, redacted and given their search terms,
    not yet numbered."""

    start: int
    end: int
    lines: list[Line]
    sensitive: list[str]  # call ids of tool calls that read a sensitive file
    skipped: int  # overlong and malformed lines
    digest: int  # the prefix hash of these lines (see _line_digest)
    last: tuple[int, int, bytes] | None  # offset, length and hash of the last line


def _line_digest(offset: int, line: bytes) -> int:
    """A line's share of the prefix hash: the XOR of these over all lines, so that the prefix hash
    of a journal prepared in pieces, in any order, is the same. Its CRC times its offset, so that a
    line that moved counts as changed: CRCs alone are linear, and two equal-length lines that swap
    places would cancel out. The header, at offset 0, adds nothing: it has a hash of its own. It
    detects edits, not adversaries."""
    return zlib.crc32(line) * offset


def _digest(lines: Iterable[tuple[int, bytes]]) -> int:
    return functools.reduce(operator.xor, (_line_digest(offset, line) for offset, line in lines), 0)


def prefix_digest(path: str, end: int, max_line_bytes: int) -> str:
    """The prefix hash of a journal's complete lines before byte `end`, read again from the file, as
    the index keeps it: decimal digits (past 2 GiB of journal it outgrows SQLite's integers)."""
    digest = position = 0
    while (
        position < end and (chunk := read_chunk(path, position, max_line_bytes, _BATCH_BYTES)).end > position
    ):
        digest ^= _digest(line for line in chunk.lines if line[0] < end)
        position = chunk.end
    return str(digest)


def line_moved(path: str, offset: int, length: int, digest: bytes) -> bool:
    """Whether the line last indexed (at `offset`, `length` bytes, hashed `digest`) no longer has
    the bytes it had, or is gone."""
    line = read_line_at(path, offset, length)
    return line is None or line_hash(line) != digest


def _with_text(line: Line, text: str, terms_text: str | None = None) -> Line:
    """An entry's line with its redacted text's size and search terms (the text itself stays in the
    journal); `terms_text`: the redacted words search matches, when they are not the text's."""
    return line._replace(
        chars=len(text), terms=index_text(read_call_escapes(text if terms_text is None else terms_text))
    )


def _searchable(line: Line, redacted: list[str], place: int, own: dict[int, int]) -> Line:
    """An entry's line with the redacted text at `place` and, where it has one, its own search text."""
    return _with_text(line, redacted[place], redacted[own[place]] if place in own else None)


def as_withheld(line: Line) -> Line:
    """An entry's line as stored when its tool call read a sensitive file: only the marker."""
    return _with_text(line, WITHHELD)


def prepare(task: Task) -> Prepared:
    """Read, parse, extract, redact and make the search terms of one batch of lines. Pure (no
    index): it runs in a worker process during large passes, in this one otherwise."""
    chunk = read_chunk(task.path, task.start, task.max_line_bytes, _BATCH_BYTES)
    found = Prepared(task.start, chunk.end, [], [], chunk.overlong, _digest(chunk.lines), None)
    texts: list[str] = []
    own: dict[int, int] = {}  # a text's place → the place of its search text, when it has its own
    for offset, raw in chunk.lines:
        if offset == 0:
            continue  # the header
        obj = parse_line(raw)
        if not isinstance(obj, dict):
            found.skipped += 1
            continue
        # a result whose call is in this batch is withheld by the storer, as one whose call is in a
        # batch prepared meanwhile
        found.sensitive.extend(sensitive_call_ids(obj))
        entry_id = obj.get("id")
        if not isinstance(entry_id, str):
            continue
        try:
            entry = extract(obj, task.withheld)
        except RecursionError:  # tool-call arguments nested too deep to serialise
            found.skipped += 1
            continue
        parent, stamp = obj.get("parentId"), obj.get("timestamp")
        stamp = stamp if isinstance(stamp, str) else ""
        ms = entry_ms(stamp)
        shown = None if is_canonical(stamp, ms) else stamp
        parent = parent if isinstance(parent, str) else None
        line = Line(ms // DAY_MS, entry_id, parent, offset, len(raw), ms, shown)
        if entry is not None:
            call = tool_call_id(obj["message"]) if entry.kind == "tool_result" else None
            line = line._replace(kind=entry.kind, call_id=call)
            texts.append(entry.text)
            if entry.search_text is not None:
                own[len(texts) - 1] = len(texts)
                texts.append(entry.search_text)
        if (edit := context_edit(obj)) is not None:
            line = line._replace(edit=(edit.target_id, edit.replaced))
        found.lines.append(line)
    # redacted together: one scan per keyword for a batch of short texts
    with redaction_policy(task.redaction):
        redacted = redact_many(texts)
    places = iter(place for place in range(len(texts)) if place not in own.values())
    found.lines = [
        _searchable(line, redacted, next(places), own) if line.kind else line for line in found.lines
    ]
    if chunk.lines:
        offset, raw = chunk.lines[-1]
        found.last = (offset, len(raw), line_hash(raw))
    return found
