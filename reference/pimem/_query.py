"""The four actions over the index: search, read, summaries and around.

Every text comes back from the journal itself: the stored pointer is followed, the line must parse
and carry the requested id (else `unavailable`, and the journal is reindexed), and the text is
redacted again. Callers pass the in-scope journals; nothing outside them is ever looked at, so an
out-of-scope id is indistinguishable from one that exists nowhere.
"""

from __future__ import annotations

import functools
import hashlib
import math
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._extract import Extracted, extract
from ._index import DAY_SHIFT, MAX_MS, Index, canonical_timestamp, day_rowids
from ._journals import parse_line, read_line_at
from ._redact import redact, redact_slices

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
    "scope_condition",
    "search",
    "summaries",
]

CANDIDATE_CAP = 400  # a search ranks at most the 400 newest in-scope entries that match
PAGE_CHARS = 16_000
_RECENCY_DAYS = 30.0  # an entry this old ranks half as high as an equally relevant one from now
_K1, _B = 1.2, 0.75  # BM25's saturation and length normalisation
_EXCERPT_CHARS = 240
_EXCERPT_LEAD = 60
_WORD_SLACK = 24  # how far an excerpt's edge moves to reach a space (a word boundary)
_CONTEXT_CHARS = 4_000
_CACHED_CHARS = 8 << 20  # redacted texts kept for paging through long entries
_DAY_MS = 86_400_000
_COLUMNS = (
    "e.rowid, e.entry_id, e.parent_id, e.timestamp, e.kind, e.offset, e.length, f.path, f.session_id,"
    " f.cwd, f.id, e.chars, e.ts"
)
_SUMMARY_KINDS = " AND e.kind IN ('compaction', 'branch_summary')"


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
    rowid: int  # orders by day (see _index)
    entry_id: str
    parent_id: str | None
    stored_timestamp: str | None  # only when the line's string is not the canonical one
    kind: str
    offset: int
    length: int
    path: str
    session_id: str
    cwd: str
    file_id: int
    chars: int
    ms: int

    @property
    def source(self) -> str:
        return f"{_path_tag(self.path)}:{self.entry_id}"

    @property
    def timestamp(self) -> str:
        """The line's `timestamp`, as it was written."""
        return canonical_timestamp(self.ms) if self.stored_timestamp is None else self.stored_timestamp

    @property
    def age(self) -> tuple[int, str, int]:
        """Sorts older first; equal times in an order that survives a rebuild (rowids do not)."""
        return (self.ms, self.path, self.offset)


def _newest_first(rows: Iterable[_Row]) -> list[_Row]:
    return sorted(rows, key=lambda row: row.age, reverse=True)


def scope_condition(index: Index, paths: list[str]) -> str:
    """The SQL condition for "in one of these journals" (file ids are integers, so they are inlined)."""
    known = index.known()
    ids = {known[path][0] for path in paths if path in known}
    if len(ids) == len(known):
        return "1"  # every indexed journal is in scope
    return f"e.file_id IN ({','.join(map(str, sorted(ids)))})"


@dataclass
class View:
    """What one call may see: the in-scope journal paths, plus how to reach back to the instance."""

    index: Index
    paths: list[str]
    current: str | None
    now: datetime
    stale: Callable[[str], None]  # reindex a journal whose pointer no longer lands on its entry
    condition: tuple[list[str], str] | None = None  # scope_condition of a paths list, if known

    @functools.cached_property
    def scope_sql(self) -> str:
        if self.condition is not None and self.condition[0] is self.paths:
            return self.condition[1]
        return scope_condition(self.index, self.paths)


@functools.lru_cache(maxsize=1 << 14)
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


def _rows(view: View, where: str, params: tuple[Any, ...], tail: str = "") -> list[Any]:
    """Entry rows in scope (`where` and `tail` say {rowid} for the entries' rowid)."""
    sql = (
        f"SELECT {_COLUMNS} FROM entries e JOIN files f ON f.id = e.file_id"
        f" WHERE e.kind IS NOT NULL AND {view.scope_sql} {where} {tail}"
    )
    return view.index.rows(sql.replace("{rowid}", "e.rowid"), params)


def _row(values: Any) -> _Row:
    return _Row(*values[:13])


def _load(view: View, row: _Row) -> Extracted | None:
    """The entry at the row's pointer, only if that line still carries the row's id."""
    raw = read_line_at(row.path, row.offset, row.length)
    obj = parse_line(raw) if raw is not None else None
    if not isinstance(obj, dict) or obj.get("id") != row.entry_id:
        view.stale(row.path)
        return None
    calls = view.index.rows("SELECT call_id FROM withheld_calls WHERE file_id=?", (row.file_id,))
    return extract(obj, {call_id for (call_id,) in calls})


_redacted: OrderedDict[str, str] = OrderedDict()  # text → redacted, most recently used last


def _redact_cached(text: str) -> str:
    """Redaction of a whole text, remembered for a while so paging through a long entry is cheap."""
    if text in _redacted:
        _redacted.move_to_end(text)
        return _redacted[text]
    _redacted[text] = redacted = redact(text)
    while sum(map(len, _redacted)) > _CACHED_CHARS and len(_redacted) > 1:
        _redacted.popitem(last=False)
    return redacted


def _text(view: View, row: _Row) -> str | None:
    entry = _load(view, row)
    return None if entry is None else _redact_cached(entry.text)


def _filters(
    kinds: tuple[str, ...] | None, since: int | None, until: int | None
) -> tuple[str, tuple[Any, ...]]:
    where = ""
    params: tuple[Any, ...] = ()
    if kinds is not None:
        where, params = where + f" AND e.kind IN ({', '.join('?' * len(kinds))})", (*params, *kinds)
    if since is not None or until is not None:
        first, last = since or 0, MAX_MS if until is None else until
        where += " AND {rowid} BETWEEN ? AND ? AND e.ts BETWEEN ? AND ?"
        params = (*params, *day_rowids(first, last), first, last)
    return where, params


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _first(text: str, terms: list[str]) -> int:
    """Where the first query term occurs (case-insensitively), or 0."""
    found = [at for term in terms if (at := text.find(term)) >= 0]
    if not found and terms:
        lower = text.lower()
        found = [at for term in terms if (at := lower.find(term.lower())) >= 0]
    return min(found, default=0)


def _word_start(flat: str, cut_word: bool) -> str:
    """`flat` from its first whole word: a word the slice cut into is dropped, unless it is a
    redaction marker or the text has no space near the start (scripts written without spaces)."""
    space = flat.find(" ", 0, _WORD_SLACK)
    if not cut_word or space < 0 or flat.startswith("[REDACTED:"):
        return flat
    return flat[space + 1 :]


def _word_end(flat: str) -> str:
    """`flat` cut to at most _EXCERPT_CHARS at the end of a word (or at a character where no space
    is near), and never inside a redaction marker."""
    if len(flat) <= _EXCERPT_CHARS:
        return flat
    cut = _EXCERPT_CHARS
    if flat[cut] != " ":
        space = flat.rfind(" ", cut - _WORD_SLACK, cut)
        cut = space if space > 0 else cut
    marker = flat.rfind("[REDACTED:", 0, cut)
    if marker >= 0 and flat.find("]", marker) >= cut:
        cut = marker
    return flat[:cut].rstrip()


def _excerpts(texts: list[str], terms: list[str]) -> list[str]:
    """A piece of each text's redacted form from just before the first query term (only those
    pieces are redacted), its runs of whitespace made single spaces, from word to word."""
    starts = [max(0, _first(text, terms) - _EXCERPT_LEAD) for text in texts]
    ends = [start + 2 * _EXCERPT_CHARS for start in starts]  # room for the whitespace that goes
    pieces = redact_slices(list(zip(texts, starts, ends, strict=True)))
    excerpts = []
    for text, start, end, piece in zip(texts, starts, ends, pieces, strict=True):
        cut_word = start > 0 and not text[start - 1].isspace() and not piece[:1].isspace()
        flat = _word_start(" ".join(piece.split()), cut_word)
        shown = _word_end(flat)
        more = len(shown) < len(flat) or end < len(text)
        excerpts.append(("…" if start else "") + shown + ("…" if more else ""))
    return excerpts


def _result(row: _Row, entry: Extracted, excerpt: str) -> dict[str, Any]:
    return {
        "entryId": row.entry_id,
        "source": row.source,
        "sessionId": row.session_id,
        "timestamp": row.timestamp,
        "kind": row.kind,
        "role": entry.role,
        "toolName": entry.tool_name,
        "cwd": row.cwd,
        "excerpt": excerpt,
    }


# -- search --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hit:
    """A search candidate: what ranking needs, before its row is fetched."""

    rowid: int
    chars: int
    ms: int
    path: str
    offset: int


def _newest(view: View, match: str, where: str, params: tuple[Any, ...]) -> list[_Hit]:
    """The newest in-scope entries that match, at most CANDIDATE_CAP (FTS5 walks newest first)."""
    where, tail = where.replace("{rowid}", "terms.rowid"), f"ORDER BY terms.rowid DESC LIMIT {CANDIDATE_CAP}"
    sql = (
        "SELECT e.rowid, e.chars, e.ts, e.file_id, e.offset"
        " FROM terms JOIN entries e ON e.rowid = terms.rowid"
        f" WHERE terms MATCH ? AND {view.scope_sql} {where} {tail}"
    )
    paths = view.index.paths()
    return [
        _Hit(rowid, chars, ms, paths[file_id], offset)
        for rowid, chars, ms, file_id, offset in view.index.rows(sql, (match, *params))
    ]


def _fetch(view: View, hits: list[_Hit]) -> list[_Row]:
    """The rows of some candidates, in their order."""
    rowids = ",".join(str(hit.rowid) for hit in hits)
    rows = {values[0]: _row(values) for values in _rows(view, f"AND e.rowid IN ({rowids})", ())}
    return [rows[hit.rowid] for hit in hits if hit.rowid in rows]


def _day(day: int) -> tuple[int, int]:
    return day << DAY_SHIFT, ((day + 1) << DAY_SHIFT) - 1


def _latest(view: View, where: str, params: tuple[Any, ...], count: int) -> list[_Row]:
    """The `count` newest in-scope entries. Rowids order by day only, so the oldest day among the
    newest rowids is fetched whole and everything is put in time order."""
    found = _rows(view, where, (*params, count), "ORDER BY {rowid} DESC LIMIT ?")
    if len(found) == count:
        day = found[-1][0] >> DAY_SHIFT
        found += _rows(view, where + " AND {rowid} BETWEEN ? AND ?", (*params, *_day(day)))
    return _newest_first({values[0]: _row(values) for values in found}.values())[:count]


def _ranked(view: View, hits: list[_Hit], weight: Callable[[_Hit], float]) -> list[_Hit]:
    """BM25 with one occurrence per term (FTS5 detail=none keeps no counts), halved over 30 days;
    equal scores newer first, then in an order that survives a rebuild (rowids do not)."""
    if not hits:
        return []
    now_ms = view.now.timestamp() * 1000
    average = max(1.0, sum(hit.chars for hit in hits) / len(hits))

    def score(hit: _Hit) -> float:
        length = (_K1 + 1) / (1 + _K1 * (1 - _B + _B * hit.chars / average))
        age = max(0.0, (now_ms - hit.ms) / _DAY_MS)
        return weight(hit) * length / (1 + age / _RECENCY_DAYS)

    return sorted(hits, key=lambda hit: (score(hit), hit.ms, hit.path, hit.offset), reverse=True)


def _search_once(
    view: View, terms: list[str] | None, where: str, params: tuple[Any, ...], limit: int
) -> tuple[str, list[_Row], int]:
    """(match, the first `limit` rows, how many there are)."""
    if terms is None:
        rows = _latest(view, where, params, limit + 1)
        return "list", rows[:limit], len(rows)
    if not terms:
        return "none", [], 0
    hits = _ranked(view, _newest(view, fts_all(terms), where, params), lambda hit: 1.0)
    match = "all"
    if not hits and len(terms) > 1:
        # any term: each term's newest candidates; rarer terms weigh more (an IDF from capped counts)
        found: dict[int, _Hit] = {}
        weights: dict[int, float] = {}
        for term in terms:
            candidates = _newest(view, fts_any([term]), where, params)
            for hit in candidates:
                found[hit.rowid] = hit
                weights[hit.rowid] = weights.get(hit.rowid, 0.0) + math.log(
                    1 + CANDIDATE_CAP / len(candidates)
                )
        hits, match = _ranked(view, list(found.values()), lambda hit: weights[hit.rowid]), "any"
    if not hits:
        return "none", [], 0
    return match, _fetch(view, hits[:limit]), len(hits)


def search(
    view: View,
    query: str | None,
    *,
    kind: tuple[str, ...] | None,
    since: int | None,
    until: int | None,
    limit: int,
) -> dict[str, Any]:
    terms = None if query is None or not query.strip() else query_terms(query)
    where, params = _filters(kind, since, until)
    match, rows, total = _search_once(view, terms, where, params, limit)
    loaded = [(row, entry) for row in rows if (entry := _load(view, row)) is not None]
    if len(loaded) < len(rows):  # a journal changed under its pointers and was just reindexed: again
        match, rows, total = _search_once(view, terms, where, params, limit)
        loaded = [(row, entry) for row in rows if (entry := _load(view, row)) is not None]
    excerpts = _excerpts([entry.text for _, entry in loaded], terms or [])
    results = [_result(row, entry, excerpt) for (row, entry), excerpt in zip(loaded, excerpts, strict=True)]
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
        "truncated": total > limit,
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
    return _newest_first({row.path: row for row in rows}.values())


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
    entry = _load(view, row)
    if entry is None:
        details["status"] = "unavailable"
        return details
    text = _redact_cached(entry.text)
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
        role=entry.role,
        toolName=entry.tool_name,
        cwd=row.cwd,
        text=text[offset:end],
        offset=offset,
        nextOffset=end if end < len(text) else None,
        totalChars=len(text),
    )
    return details


# -- summaries -----------------------------------------------------------------------------------


def summaries(view: View, *, since: int | None, until: int | None, limit: int) -> dict[str, Any]:
    where, params = _filters(None, since, until)
    where += _SUMMARY_KINDS
    results = []
    for row in _newest_first(_row(values) for values in _rows(view, where, params)):
        entry = _load(view, row)
        if entry is None:
            continue  # its journal is being reindexed; it never shows another line's text
        results.append(
            {
                "entryId": row.entry_id,
                "source": row.source,
                "sessionId": row.session_id,
                "timestamp": row.timestamp,
                "kind": row.kind,
                "tokensBefore": entry.tokens_before,
                "summary": _clip(_redact_cached(entry.text), _CONTEXT_CHARS),
            }
        )
        if len(results) == limit:
            break
    return {"action": "summaries", "results": results}


# -- around --------------------------------------------------------------------------------------


def _node(view: View, file_id: int, sql: str, key: str) -> Any:
    """One line of the journal's tree (an entry or not), as entry columns."""
    rows = view.index.rows(
        f"SELECT {_COLUMNS} FROM entries e JOIN files f ON f.id = e.file_id WHERE e.file_id=? AND {sql}",
        (file_id, key),
    )
    return rows[0] if rows else None


def _walk(view: View, hit: _Row, count: int, upward: bool) -> list[_Row]:
    """Up to `count` entries along parentId (upward) or the latest-written child (downward)."""
    found: list[_Row] = []
    seen = {hit.entry_id}
    key: str | None = hit.parent_id if upward else hit.entry_id
    while key is not None and len(found) < count:
        column = "entry_id" if upward else "parent_id"
        node = _node(view, hit.file_id, f"e.{column}=? ORDER BY e.offset DESC LIMIT 1", key)
        if node is None or node[1] in seen:
            break
        seen.add(node[1])
        if node[4] is not None:  # a line that is no entry is walked through, not shown
            found.append(_row(node))
        key = node[2] if upward else node[1]
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
