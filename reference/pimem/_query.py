"""The four actions over the index: search, read, summaries and around.

Every text comes back from the journal itself: the stored pointer is followed, the line must parse
and carry the requested id (else `unavailable`, and the journal is reindexed), and the text is
redacted again. Callers pass the in-scope journals; nothing outside them is ever looked at, so an
out-of-scope id is indistinguishable from one that exists nowhere.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from ._extract import Extracted, extract
from ._index import Index
from ._journals import parse_line, read_line_at
from ._redact import redact

__all__ = [
    "CANDIDATE_CAP",
    "PAGE_CHARS",
    "ToolError",
    "View",
    "around",
    "fts_all",
    "fts_any",
    "query_terms",
    "read",
    "search",
    "summaries",
]

CANDIDATE_CAP = 400
PAGE_CHARS = 16_000
_RECENCY_DAYS = 30.0  # an entry this old ranks half as high as an equally relevant one from now
_EXCERPT_CHARS = 240
_EXCERPT_LEAD = 60
_CONTEXT_CHARS = 4_000
_COLUMNS = (
    "e.rowid, e.entry_id, e.parent_id, e.timestamp, e.ts_key, e.kind, e.role, e.tool_name, e.offset,"
    " e.length, e.tokens_before, f.path, f.session_id, f.cwd, f.id"
)


class ToolError(Exception):
    """A clear error with a stable code; its message may echo the caller's input, so it is redacted."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def response(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": redact(self.message)}}


@dataclass(frozen=True)
class _Row:
    rowid: int
    entry_id: str
    parent_id: str | None
    timestamp: str
    ts_key: str
    kind: str
    role: str | None
    tool_name: str | None
    offset: int
    length: int
    tokens_before: int | None
    path: str
    session_id: str
    cwd: str
    file_id: int

    @property
    def source(self) -> str:
        return f"{_path_tag(self.path)}:{self.entry_id}"


@dataclass
class View:
    """What one call may see: the in-scope journal paths, plus how to reach back to the instance."""

    index: Index
    paths: list[str]
    current: str | None
    now: datetime
    stale: Callable[[str], None]  # reindex a journal whose pointer no longer lands on its entry

    @property
    def scope_json(self) -> str:
        return orjson.dumps(self.paths).decode()


def _path_tag(path: str) -> str:
    return hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()


# -- query text ----------------------------------------------------------------------------------


def _token_char(char: str) -> bool:
    """The characters FTS5's unicode61 tokenizer keeps in a token (categories L*, N*, Co)."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"


def query_terms(query: str) -> list[str]:
    """Letter/digit runs of the query, in order, without repeats: the query is literal text."""
    terms: list[str] = []
    run: list[str] = []
    for char in unicodedata.normalize("NFC", query) + " ":
        if _token_char(char):
            run.append(char)
        elif run:
            term = "".join(run)
            if term.casefold() not in (known.casefold() for known in terms):
                terms.append(term)
            run = []
    return terms


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_all(terms: list[str]) -> str:
    return " ".join(_quote(term) for term in terms)


def fts_any(terms: list[str]) -> str:
    return " OR ".join(_quote(term) for term in terms)


# -- rows and lines ------------------------------------------------------------------------------


def _rows(
    view: View, where: str, params: tuple[Any, ...], tail: str = "", match: str | None = None
) -> list[Any]:
    scope = "f.path IN (SELECT value FROM json_each(?))"
    if match is None:
        sql = (
            f"SELECT {_COLUMNS} FROM entries e JOIN files f ON f.id = e.file_id WHERE {scope} {where} {tail}"
        )
        return view.index.rows(sql, (view.scope_json, *params))
    sql = (
        f"SELECT {_COLUMNS}, bm25(terms) FROM terms JOIN entries e ON e.rowid = terms.rowid"
        f" JOIN files f ON f.id = e.file_id WHERE terms MATCH ? AND {scope} {where} {tail}"
    )
    return view.index.rows(sql, (match, view.scope_json, *params))


def _row(values: Any) -> _Row:
    return _Row(*values[:15])


def _load(view: View, row: _Row) -> Extracted | None:
    """The entry at the row's pointer, only if that line still carries the row's id."""
    raw = read_line_at(row.path, row.offset, row.length)
    obj = parse_line(raw) if raw is not None else None
    if not isinstance(obj, dict) or obj.get("id") != row.entry_id:
        view.stale(row.path)
        return None
    calls = view.index.rows("SELECT call_id FROM withheld_calls WHERE file_id=?", (row.file_id,))
    return extract(obj, {call_id for (call_id,) in calls})


def _text(view: View, row: _Row) -> str | None:
    entry = _load(view, row)
    return None if entry is None else redact(entry.text)


def _filters(kind: str | None, since: str | None, until: str | None) -> tuple[str, tuple[Any, ...]]:
    where = ""
    params: tuple[Any, ...] = ()
    if kind is not None:
        where, params = where + " AND e.kind = ?", (*params, kind)
    if since is not None:
        where, params = where + " AND e.ts_key >= ?", (*params, since)
    if until is not None:
        where, params = where + " AND e.ts_key <= ?", (*params, until)
    return where, params


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _excerpt(text: str, terms: list[str]) -> str:
    flat = " ".join(text.split())
    positions = [
        match.start() for term in terms if (match := re.search(re.escape(term), flat, re.IGNORECASE))
    ]
    start = max(0, min(positions) - _EXCERPT_LEAD) if positions else 0
    piece = flat[start : start + _EXCERPT_CHARS]
    return ("…" if start else "") + piece + ("…" if start + _EXCERPT_CHARS < len(flat) else "")


def _age_days(view: View, ts: str) -> float:
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return 0.0
    return max(0.0, (view.now - moment).total_seconds() / 86400)


def _result(row: _Row, excerpt: str) -> dict[str, Any]:
    return {
        "entryId": row.entry_id,
        "source": row.source,
        "sessionId": row.session_id,
        "timestamp": row.timestamp,
        "kind": row.kind,
        "role": row.role,
        "toolName": row.tool_name,
        "cwd": row.cwd,
        "excerpt": excerpt,
    }


# -- search --------------------------------------------------------------------------------------


def _ranked(view: View, match: str, where: str, params: tuple[Any, ...]) -> list[_Row]:
    hits = _rows(view, where, params, f"ORDER BY bm25(terms) LIMIT {CANDIDATE_CAP}", match=match)
    scored = [(-values[15] / (1 + _age_days(view, values[4]) / _RECENCY_DAYS), values) for values in hits]
    # ties: newer first, then a stable order that survives a rebuild (rowids do not)
    scored.sort(key=lambda item: (item[0], item[1][4], item[1][11], item[1][8]), reverse=True)
    return [_row(values) for _, values in scored]


def _search_once(view: View, terms: list[str] | None, where: str, params: tuple[Any, ...], limit: int) -> Any:
    if terms is None:
        newest = _rows(
            view, where, (*params, limit + 1), "ORDER BY e.ts_key DESC, f.path DESC, e.offset DESC LIMIT ?"
        )
        return "list", [_row(values) for values in newest]
    if not terms:
        return "none", []
    rows = _ranked(view, fts_all(terms), where, params)
    if rows:
        return "all", rows
    if len(terms) > 1:
        rows = _ranked(view, fts_any(terms), where, params)
        if rows:
            return "any", rows
    return "none", []


def search(
    view: View, query: str | None, *, kind: str | None, since: str | None, until: str | None, limit: int
) -> dict[str, Any]:
    terms = None if query is None or not query.strip() else query_terms(query)
    where, params = _filters(kind, since, until)
    for retry in (True, False):
        match, rows = _search_once(view, terms, where, params, limit)
        results = []
        for row in rows[:limit]:
            text = _text(view, row)
            if text is not None:
                results.append(_result(row, _excerpt(text, terms or [])))
            elif retry:
                break  # a journal changed under its pointers and was just reindexed: search again
        else:
            break
    hints = {
        "any": "No entry has every term; these have at least one. Try fewer or different words.",
        "none": "Nothing matched. Try other words, a wider date range, or no kind filter.",
    }
    return {
        "action": "search",
        "query": query,
        "match": match,
        "hint": hints.get(match),
        "limit": limit,
        "truncated": len(rows) > limit,
        "results": results,
    }


# -- read ----------------------------------------------------------------------------------------


def _lookup(view: View, entry_id: str | None, source: str | None) -> list[_Row]:
    """In-scope rows for an id or a source handle, one per journal (its latest line for that id)."""
    if source is not None:
        tag, _, entry_id = source.partition(":")
        paths = [path for path in view.paths if _path_tag(path) == tag]
        view = View(view.index, paths, view.current, view.now, view.stale)
    rows = [_row(v) for v in _rows(view, "AND e.entry_id = ?", (entry_id,), "ORDER BY e.offset")]
    latest = {row.path: row for row in rows}
    return sorted(latest.values(), key=lambda row: (row.ts_key, row.path), reverse=True)


def _resolve(view: View, entry_id: str | None, source: str | None) -> tuple[str, Any]:
    """("ok", row) | ("ambiguous", candidates) | ("not_found", None)."""
    rows = _lookup(view, entry_id, source)
    current = [row for row in rows if row.path == view.current]
    if current or len(rows) == 1:
        return "ok", (current or rows)[0]
    if not rows:
        return "not_found", None
    candidates = [
        {
            "source": r.source,
            "sessionId": r.session_id,
            "timestamp": r.timestamp,
            "kind": r.kind,
            "cwd": r.cwd,
        }
        for r in rows
    ]
    return "ambiguous", candidates


def read(view: View, entry_id: str | None, source: str | None, offset: int) -> dict[str, Any]:
    status, found = _resolve(view, entry_id, source)
    details: dict[str, Any] = {"action": "read", "status": status, "entryId": entry_id}
    if status == "ambiguous":
        details["candidates"] = found
    if status != "ok":
        return details
    row: _Row = found
    text = _text(view, row)
    if text is None:
        details["status"] = "unavailable"
        return details
    if offset > len(text):
        raise ToolError(
            "bad_offset",
            f"offset {offset} is past the end of entry {row.entry_id} ({len(text)} characters); "
            f"use an offset from 0 to {len(text)}, e.g. nextOffset from the previous page",
        )
    end = offset + PAGE_CHARS
    details.update(
        entryId=row.entry_id,
        source=row.source,
        sessionId=row.session_id,
        timestamp=row.timestamp,
        kind=row.kind,
        role=row.role,
        toolName=row.tool_name,
        cwd=row.cwd,
        text=text[offset:end],
        offset=offset,
        nextOffset=end if end < len(text) else None,
        totalChars=len(text),
    )
    return details


# -- summaries -----------------------------------------------------------------------------------


def summaries(view: View, *, since: str | None, until: str | None, limit: int) -> dict[str, Any]:
    where, params = _filters(None, since, until)
    where += " AND e.kind IN ('compaction', 'branch_summary')"
    results = []
    for values in _rows(view, where, params, "ORDER BY e.ts_key DESC, f.path DESC, e.offset DESC"):
        row = _row(values)
        text = _text(view, row)
        if text is None:
            continue  # its journal is being reindexed; it never shows another line's text
        results.append(
            {
                "entryId": row.entry_id,
                "source": row.source,
                "sessionId": row.session_id,
                "timestamp": row.timestamp,
                "kind": row.kind,
                "tokensBefore": row.tokens_before,
                "summary": _clip(text, _CONTEXT_CHARS),
            }
        )
        if len(results) == limit:
            break
    return {"action": "summaries", "results": results}


# -- around --------------------------------------------------------------------------------------


def _node(view: View, file_id: int, sql: str, key: str) -> tuple[str, str | None, int] | None:
    rows = view.index.rows(
        f"SELECT entry_id, parent_id, offset FROM links WHERE file_id=? AND {sql}", (file_id, key)
    )
    return (rows[0][0], rows[0][1], rows[0][2]) if rows else None


def _entry_at(view: View, hit: _Row, offset: int) -> _Row | None:
    rows = view.index.rows(
        f"SELECT {_COLUMNS} FROM entries e JOIN files f ON f.id = e.file_id WHERE e.file_id=? AND e.offset=?",
        (hit.file_id, offset),
    )
    return _row(rows[0]) if rows else None


def _walk(view: View, hit: _Row, count: int, upward: bool) -> list[_Row]:
    """Up to `count` entries along parentId (upward) or the latest-written child (downward)."""
    found: list[_Row] = []
    seen = {hit.entry_id}
    key: str | None = hit.parent_id if upward else hit.entry_id
    while key is not None and len(found) < count:
        column = "entry_id" if upward else "parent_id"
        node = _node(view, hit.file_id, f"{column}=? ORDER BY offset DESC LIMIT 1", key)
        if node is None or node[0] in seen:
            break
        seen.add(node[0])
        row = _entry_at(view, hit, node[2])
        if row is not None:
            found.append(row)
        key = node[1] if upward else node[0]
    return found


def around(view: View, entry_id: str | None, source: str | None, before: int, after: int) -> dict[str, Any]:
    status, found = _resolve(view, entry_id, source)
    details: dict[str, Any] = {"action": "around", "status": status, "entryId": entry_id, "entries": []}
    if status == "ambiguous":
        details["candidates"] = found
    if status != "ok":
        return details
    hit: _Row = found
    details["entryId"] = hit.entry_id
    placed = [(row, "before") for row in reversed(_walk(view, hit, before, upward=True))]
    placed += [(hit, "hit")] + [(row, "after") for row in _walk(view, hit, after, upward=False)]
    for row, position in placed:
        text = _text(view, row)
        if text is None:
            if position == "hit":
                return {**details, "status": "unavailable", "entries": []}
            continue
        details["entries"].append(
            {
                "entryId": row.entry_id,
                "source": row.source,
                "sessionId": row.session_id,
                "timestamp": row.timestamp,
                "kind": row.kind,
                "text": _clip(text, _CONTEXT_CHARS),
                "position": position,
            }
        )
    return details
