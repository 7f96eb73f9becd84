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
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._extract import Extracted, extract
from ._index import DAY_SHIFT, MAX_MS, Index, canonical_timestamp, day_rowids
from ._journals import parse_line, read_line_at
from ._redact import redact, redact_slices
from ._terms import Term, atoms, contains_run, query_sequence, sequence_in, split_terms, stem_prefix
from ._terms import query_terms as analysed_terms

__all__ = [
    "ALL_CAP",
    "CHECK_CAP",
    "PAGE_CHARS",
    "TERM_CAP",
    "ToolError",
    "View",
    "around",
    "query_terms",
    "read",
    "scope_condition",
    "search",
    "summaries",
]

ALL_CAP = 2000  # entries holding every term that are ranked: the newest of them
TERM_CAP = 2000  # holders of each term in the any-term fallback: every one of a rarer term's
CHECK_CAP = 200  # best candidates whose lines are read (contiguity, the whole query in sequence)
_DF_CAP = 20_000  # a term's entries are counted up to this, for its IDF
PAGE_CHARS = 16_000
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


def query_terms(query: str) -> list[str]:
    """The query's terms as text, in order, without repeats (the query is literal text)."""
    return split_terms(query)


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
    length: int
    file_id: int


def _matching(view: View, match: str, where: str, params: tuple[Any, ...], cap: int) -> list[_Hit]:
    """The newest in-scope entries that match, at most `cap` (FTS5 walks newest first)."""
    where, tail = where.replace("{rowid}", "terms.rowid"), f"ORDER BY terms.rowid DESC LIMIT {cap}"
    sql = (
        "SELECT e.rowid, e.chars, e.ts, e.file_id, e.offset, e.length"
        " FROM terms JOIN entries e ON e.rowid = terms.rowid"
        f" WHERE terms MATCH ? AND {view.scope_sql} {where} {tail}"
    )
    paths = view.index.paths()
    return [
        _Hit(rowid, chars, ms, paths[file_id], offset, length, file_id)
        for rowid, chars, ms, file_id, offset, length in view.index.rows(sql, (match, *params))
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


def _words(view: View, hits: list[_Hit]) -> dict[int, list[tuple[str, ...]]]:
    """The words of candidates' entries (see `atoms`), through the same line check as every shown
    text; a candidate whose line no longer carries its entry is left out.

    The check reads the extracted text before redaction: it only narrows and orders candidates
    that the index (redacted terms only) already found, and nothing of it is shown."""
    words: dict[int, list[tuple[str, ...]]] = {}
    for row in _fetch(view, hits):
        entry = _load(view, row)
        if entry is not None:
            words[row.rowid] = atoms(entry.text)
    return words


def _length_weight(hit: _Hit, average: float) -> float:
    """BM25's length normalisation with one occurrence per term (FTS5 detail=none keeps no counts)."""
    return (_K1 + 1) / (1 + _K1 * (1 - _B + _B * hit.chars / average))


def _by_length_then_age(hits: list[_Hit]) -> list[_Hit]:
    """Shorter entries first (a focused answer), then newer, then in an order that survives a
    rebuild (rowids do not)."""
    average = max(1.0, sum(hit.chars for hit in hits) / max(1, len(hits)))
    return sorted(
        hits, key=lambda hit: (_length_weight(hit, average), hit.ms, hit.path, hit.offset), reverse=True
    )


def _unchecked(view: View, checks: list[Term], hits: Iterable[_Hit]) -> dict[int, list[Term]]:
    """rowid → the terms whose contiguity its line must show: every term that needs a check,
    except an identifier the entry holds as one whole token."""
    rowids = [hit.rowid for hit in hits]
    pending: dict[int, list[Term]] = {}
    for term in checks:
        whole = _holding(view, term.whole, rowids) if term.whole is not None else set()
        for rowid in rowids:
            if rowid not in whole:
                pending.setdefault(rowid, []).append(term)
    return pending


def _all_terms(
    view: View, terms: list[Term], sequence: list[str], where: str, params: tuple[Any, ...]
) -> tuple[list[_Hit], bool]:
    """Entries that hold every term, those holding the whole query as one sequence first; and
    whether more may exist than were ranked."""
    hits = _by_length_then_age(_matching(view, " AND ".join(t.match for t in terms), where, params, ALL_CAP))
    more = len(hits) == ALL_CAP
    pending = _unchecked(view, [term for term in terms if term.check], hits)
    if not hits or (not pending and len(terms) == 1):
        return hits, more
    read, unread = hits[:CHECK_CAP], hits[CHECK_CAP:]
    words = _words(view, read)
    exact: list[_Hit] = []
    apart: list[_Hit] = []
    for hit in read:
        line, needed = words.get(hit.rowid), pending.get(hit.rowid, [])
        if line is None:
            if not needed:
                apart.append(hit)
        elif all(contains_run(line, term.atoms, term.text.lower()) for term in needed):
            (exact if len(terms) > 1 and sequence_in(line, sequence) else apart).append(hit)
    # an entry whose line was not read cannot be said to match a term that needs its line
    shown = [hit for hit in unread if hit.rowid not in pending]
    return exact + apart + shown, more or len(shown) < len(unread)


def _document_frequency(view: View, match: str) -> int:
    """How many entries of the whole index match, counted up to _DF_CAP."""
    sql = f"SELECT count(*) FROM (SELECT rowid FROM terms WHERE terms MATCH ? LIMIT {_DF_CAP})"
    return int(view.index.rows(sql, (match,))[0][0])


_entry_counts: dict[tuple[int, int], int] = {}


def _entry_count(view: View) -> int:
    """Entries in the index, counted again only after a write (for IDF)."""
    key = (id(view.index), view.index.reads)
    if key not in _entry_counts:
        _entry_counts.clear()
        _entry_counts[key] = int(view.index.rows("SELECT count(*) FROM entries WHERE kind IS NOT NULL")[0][0])
    return _entry_counts[key]


def _holding(view: View, match: str, rowids: list[int]) -> set[int]:
    """Which of these entries match (for candidates a capped list may have missed)."""
    if not rowids:
        return set()
    listed = ",".join(map(str, rowids))
    sql = f"SELECT rowid FROM terms WHERE terms MATCH ? AND rowid IN ({listed})"
    return {rowid for (rowid,) in view.index.rows(sql, (match,))}


def _fallback_match(term: Term) -> str:
    """A term as the any-term fallback matches it: its own form, or any word with its Porter stem."""
    prefix = None if term.check else stem_prefix(term.text)
    return term.match if prefix is None else f'({term.match} OR "{prefix}" *)'


def _any_term(view: View, terms: list[Term], where: str, params: tuple[Any, ...]) -> tuple[list[_Hit], bool]:
    """Entries that hold some term, ranked by the summed IDF of the distinct terms they hold (stop
    words only when nothing else matches), then by length, then newest. Every term's rarest
    holders are candidates, so recency never decides which entries are ranked."""
    content = [term for term in terms if not term.stop_word]
    for chosen in (content, [term for term in terms if term.stop_word]):
        matches = [_fallback_match(term) for term in chosen]
        frequencies = [_document_frequency(view, match) for match in matches]
        weighted = [(f, t, m) for f, t, m in zip(frequencies, chosen, matches, strict=True) if f > 0]
        if weighted:
            break
    else:
        return [], False
    total = max(_entry_count(view), max(f for f, _, _ in weighted))
    found: dict[int, _Hit] = {}
    held: dict[int, set[int]] = {}
    capped: list[int] = []
    weights = [math.log(1 + total / frequency) for frequency, _, _ in weighted]
    for number, (_, _, match) in enumerate(weighted):
        listed = _matching(view, match, where, params, TERM_CAP)
        for hit in listed:
            found.setdefault(hit.rowid, hit)
            held.setdefault(hit.rowid, set()).add(number)
        if len(listed) == TERM_CAP:
            capped.append(number)
    for number in capped:  # older holders of a common term among the candidates of the others
        missing = [rowid for rowid, numbers in held.items() if number not in numbers]
        for rowid in _holding(view, weighted[number][2], missing):
            held[rowid].add(number)
    checked = [n for n, (_, term, _) in enumerate(weighted) if term.check]

    def ranked() -> list[_Hit]:
        average = max(1.0, sum(hit.chars for hit in found.values()) / max(1, len(found)))
        return sorted(
            (hit for hit in found.values() if held[hit.rowid]),
            key=lambda hit: (
                sum(weights[n] for n in held[hit.rowid]),
                _length_weight(hit, average),
                hit.ms,
                hit.path,
                hit.offset,
            ),
            reverse=True,
        )

    order = ranked()
    pending = _unchecked(view, [weighted[n][1] for n in checked], order)
    if pending:  # a term that needs its line checked counts only where the line holds it
        read = [hit for hit in order[:CHECK_CAP] if hit.rowid in pending]
        words = _words(view, read)
        number_of = {id(weighted[n][1]): n for n in checked}
        for rowid, needed in pending.items():
            line = words.get(rowid)
            for term in needed:
                if line is None or not contains_run(line, term.atoms, term.text.lower()):
                    held[rowid].discard(number_of[id(term)])
        order = ranked()
    return order, bool(capped)


def _search_once(
    view: View, query: str | None, where: str, params: tuple[Any, ...], limit: int
) -> tuple[str, list[_Row], bool]:
    """(match, the first `limit` rows, whether there are more)."""
    if query is None:
        rows = _latest(view, where, params, limit + 1)
        return "list", rows[:limit], len(rows) > limit
    terms = analysed_terms(query)
    if not terms:
        return "none", [], False
    hits, more = _all_terms(view, terms, query_sequence(query), where, params)
    match = "all"
    if not hits and len(terms) > 1:
        (hits, more), match = _any_term(view, terms, where, params), "any"
    if not hits:
        return "none", [], False
    return match, _fetch(view, hits[:limit]), more or len(hits) > limit


def search(
    view: View,
    query: str | None,
    *,
    kind: tuple[str, ...] | None,
    since: int | None,
    until: int | None,
    limit: int,
) -> dict[str, Any]:
    text = None if query is None or not query.strip() else query
    where, params = _filters(kind, since, until)
    match, rows, more = _search_once(view, text, where, params, limit)
    loaded = [(row, entry) for row in rows if (entry := _load(view, row)) is not None]
    if len(loaded) < len(rows):  # a journal changed under its pointers and was just reindexed: again
        match, rows, more = _search_once(view, text, where, params, limit)
        loaded = [(row, entry) for row in rows if (entry := _load(view, row)) is not None]
    excerpts = _excerpts([entry.text for _, entry in loaded], query_terms(query or ""))
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
        "truncated": more,
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
