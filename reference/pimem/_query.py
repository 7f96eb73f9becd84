"""The four actions over the index: search, read, summaries and around.

Every text comes back from the journal itself: the stored pointer is followed, the line must parse
and carry the requested id (else `unavailable`, and the journal is reindexed), and the text is
redacted again. Callers pass the in-scope journals; nothing outside them is ever looked at, so an
out-of-scope id is indistinguishable from one that exists nowhere. The answers' shapes are the
types of `_results.py`.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ._context import in_context
from ._echo import echo
from ._errors import ToolError
from ._extract import MEMORY_TOOL, Extracted, Kind, extract
from ._index import Index
from ._journals import Journal, parse_line, read_line_at
from ._memo import Memo, SizedCache
from ._redact import Policy, current_policy, marker_names, redact, redact_slices
from ._results import (
    AroundAnswer,
    AroundEntry,
    ContextEdit,
    Indexing,
    Marked,
    Match,
    Position,
    ReadAnswer,
    ReadCandidate,
    ReadStatus,
    ResultMatch,
    SearchFound,
    SearchResult,
    Summaries,
    Summary,
)
from ._store import Candidate, Candidates, ContextEditRow, EntryRow, Filters, Scope, Store
from ._terms import (
    STOP_WORDS,
    Term,
    holds_sequence,
    holds_term,
    iter_terms,
    nfc,
    places,
    query_sequence,
    split_terms,
    stem_forms,
    stem_prefix,
)
from ._terms import query_terms as analysed_terms

__all__ = [
    "ALL_CAP",
    "CHECK_CAP",
    "PAGE_CHARS",
    "SUMMARY_KINDS",
    "TERM_CAP",
    "View",
    "around",
    "context_of",
    "query_terms",
    "read",
    "scope_of",
    "search",
    "summaries",
]

ALL_CAP = 2000  # entries holding every term that are ranked: the newest of them
TERM_CAP = 2000  # holders of each term in the any-term fallback: every one of a rarer term's
_RESTATE_HEAD = 200  # characters of a text looked at first, when judging whether it restates the query
CHECK_CAP = 200  # best candidates whose lines are read (contiguity, the whole query in sequence)
CHECK_CHARS = 1 << 20  # ... and at most this much of their text, so long entries bound the work too
_DF_CAP = 20_000  # a term's entries are counted up to this, for its IDF
PAGE_CHARS = 16_000
_EXCERPT_CHARS = 240
_EXCERPT_LEAD = 60
_WORD_SLACK = 24  # how far an excerpt's edge moves to reach a space (a word boundary)
_CONTEXT_CHARS = 4_000
SUMMARY_KINDS = ("compaction", "branch_summary")


def _newest_first(rows: Iterable[EntryRow]) -> list[EntryRow]:
    return sorted(rows, key=lambda row: row.age, reverse=True)


def scope_of(index: Index, paths: list[str], whole: bool = False) -> Scope:
    """The file ids of these journals, or None for `whole`: every journal, indexed now or later.

    Only a whole scope (global, not narrowed) may be None. A project whose journals happen to be
    every journal indexed so far is not: a journal of another project indexed in the background
    after this is computed would otherwise be searched with it.
    """
    if whole:
        return None
    known = index.known()
    return tuple(sorted(known[path][0] for path in paths if path in known))


def _source(row: EntryRow) -> str:
    return f"{_path_tag(row.path)}:{row.entry_id}"


@dataclass(frozen=True)
class View:
    """What one call sees: the journals in its scope as they are now, their file ids in the index,
    how far they are indexed, and how to reach back to the instance (`Memory.before_answer`)."""

    index: Index
    journals: list[Journal]
    paths: list[str]
    scope: Scope  # the file ids in scope (see scope_of)
    indexing: Indexing
    current: str | None  # the current session's journal
    stale: Callable[[str], None]  # reindex a journal whose pointer no longer lands on its entry
    redacted: SizedCache[tuple[Policy, str]]  # the instance's redacted texts, for paging

    def narrowed(self, paths: list[str]) -> View:
        """The same view over some of its journals."""
        return replace(self, paths=paths, scope=scope_of(self.index, paths))


@functools.lru_cache(maxsize=1 << 14)
def _path_tag(path: str) -> str:
    return hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()


# -- query text ----------------------------------------------------------------------------------


def query_terms(query: str) -> list[str]:
    """The query's terms as text, in order, without repeats (the query is literal text)."""
    return split_terms(query)


# -- rows and lines ------------------------------------------------------------------------------


def _load(view: View, row: EntryRow, withheld: dict[int, set[str]] | None = None) -> Extracted | None:
    """The entry at the row's pointer, only if that line still carries the row's id (`withheld`:
    the journals' withheld calls, as far as they were looked up already)."""
    raw = read_line_at(row.path, row.offset, row.length)
    obj = parse_line(raw) if raw is not None else None
    if not isinstance(obj, dict) or obj.get("id") != row.entry_id:
        view.stale(row.path)
        return None
    if withheld is None:
        return extract(obj, view.index.store.withheld(row.file_id))
    if row.file_id not in withheld:
        withheld[row.file_id] = view.index.store.withheld(row.file_id)
    return extract(obj, withheld[row.file_id])


def _redact_cached(view: View, text: str) -> str:
    """Redaction of a whole text, remembered for a while so paging through a long entry is cheap
    (by policy too: the user's patterns change what is masked)."""
    return view.redacted.get((current_policy(), text), len(text), lambda: redact(text))


def _text(view: View, row: EntryRow) -> str | None:
    entry = _load(view, row)
    return None if entry is None else _redact_cached(view, entry.text)


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


def _context_edits(view: View, rows: Iterable[EntryRow]) -> dict[tuple[int, str], ContextEdit]:
    """(file id, entry id) → the `contextEdit` of each row that the last context_edit of it on its
    journal's current branch replaced or omitted (rows without one are absent)."""
    targets: dict[int, set[str]] = {}
    paths: dict[int, str] = {}
    for row in rows:
        paths[row.file_id] = row.path
        targets.setdefault(row.file_id, set()).add(row.entry_id)
    found: dict[tuple[int, str], ContextEdit | None] = {}
    for file_id, entry_ids in targets.items():
        edits = view.index.store.context_edits(file_id, sorted(entry_ids))
        if not edits:
            continue
        branch = view.index.store.current_branch(file_id, min(edit.offset for edit in edits))
        for edit in edits:  # the last written first: the first on the branch decides
            if edit.offset not in branch or (file_id, edit.target_id) in found:
                continue
            if _still_there(paths[file_id], edit):
                found[file_id, edit.target_id] = {
                    "state": "replaced" if edit.replaced else "omitted",
                    "editEntryId": edit.edit_id,
                }
            else:  # the journal changed under the index: no mark now, and it is reindexed
                found[file_id, edit.target_id] = None
                view.stale(paths[file_id])
    return {key: mark for key, mark in found.items() if mark is not None}


def _still_there(path: str, edit: ContextEditRow) -> bool:
    """Whether the line at the edit's pointer is still that context_edit (the read's id check)."""
    raw = read_line_at(path, edit.offset, edit.length)
    obj = parse_line(raw) if raw is not None else None
    return (
        isinstance(obj, dict)
        and obj.get("type") == "context_edit"
        and obj.get("id") == edit.edit_id
        and obj.get("targetId") == edit.target_id
        and (obj.get("replacement") is not None) == edit.replaced
    )


_Shown = TypeVar("_Shown", bound=Marked)


def _marked(item: _Shown, row: EntryRow, edits: dict[tuple[int, str], ContextEdit]) -> _Shown:
    """The item, given the row's `contextEdit` (as its last key) when it has one."""
    edit = edits.get((row.file_id, row.entry_id))
    if edit is not None:
        item["contextEdit"] = edit
    return item


def _result(row: EntryRow, entry: Extracted, excerpt: str) -> SearchResult:
    return {
        "entryId": row.entry_id,
        "source": _source(row),
        "sessionId": row.session_id,
        "timestamp": row.timestamp,
        "kind": row.kind,
        "role": entry.role,
        "toolName": entry.tool_name,
        "cwd": row.cwd,
        "excerpt": excerpt,
    }


# -- search --------------------------------------------------------------------------------------


def _matching(view: View, match: str, filters: Filters, cap: int, shortest_first: bool = False) -> Candidates:
    """The newest in-scope entries that match, at most `cap`: newest first, or shortest first."""
    return view.index.store.candidates(match, view.scope, filters, cap, shortest_first=shortest_first)


def _fetch(view: View, hits: Sequence[Candidate]) -> list[EntryRow]:
    """The rows of some candidates, in their order."""
    rows = {row.rowid: row for row in view.index.store.entries_at(view.scope, [hit.rowid for hit in hits])}
    return [rows[hit.rowid] for hit in hits if hit.rowid in rows]


def _latest(view: View, filters: Filters, count: int) -> list[EntryRow]:
    """The `count` newest in-scope entries, in time order."""
    return _newest_first(view.index.store.newest_entries(view.scope, filters, count))[:count]


def _candidate_texts(view: View, hits: Sequence[Candidate]) -> dict[int, str]:
    """rowid → the extracted text of candidates' entries, best first until CHECK_CHARS of text are
    read, through the same line check as every shown text; a candidate whose line no longer
    carries its entry, or that lies past the budget, is left out. Only `_Checks` looks at these
    texts: they are not redacted yet."""
    texts: dict[int, str] = {}
    withheld: dict[int, set[str]] = {}
    budget = CHECK_CHARS
    for row in _fetch(view, hits):
        if budget <= 0:
            break
        entry = _load(view, row, withheld)
        if entry is not None:
            texts[row.rowid] = entry.terms_text
            budget -= len(entry.terms_text)
    return texts


@functools.lru_cache(maxsize=8)
def _marker_atoms(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(atom for name in names for atom in query_sequence(f"[REDACTED:{name}]"))


class _Checks:
    """A search's checks of candidates' texts (contiguity, the query in sequence), each judged on
    the text as redacted, like the text whose terms the index holds: a term never matches, and an
    entry never holds the query in sequence, through text the redactor removes (JM-SEARCH-140).

    Redacting every candidate's whole text would cost most of a search, so the places that may
    hold the atoms are found in the text first (a necessary condition: redaction only replaces
    text, with a marker), and only the words around them are redacted (`redact_slices`, which
    shows there what redacting the whole text would) and checked. When an atom of the query could
    be a marker's word, whole texts are redacted instead: a marker can complete a sequence.
    """

    def __init__(self, terms: list[Term], sequence: list[str]) -> None:
        markers = _marker_atoms(marker_names())
        self.whole = any(atom in markers for atom in sequence) or any(
            atom in markers for term in terms for atom in term.atoms
        )
        self.redacted: dict[str, str] = {}

    def _pieces(self, text: str, wanted: tuple[str, ...], apart: bool) -> list[str]:
        spans = None if self.whole else places(text, wanted, apart)
        if spans is None:
            if text not in self.redacted:
                self.redacted[text] = redact(text)
            return [self.redacted[text]]
        return redact_slices([(text, start, end) for start, end in spans]) if spans else []

    def term(self, text: str, term: Term) -> bool:
        return any(holds_term(piece, term) for piece in self._pieces(nfc(text), term.atoms, False))

    def sequence(self, text: str, wanted: list[str]) -> bool:
        return any(holds_sequence(piece, wanted) for piece in self._pieces(nfc(text), tuple(wanted), True))


def _unchecked(view: View, checks: list[Term], hits: Iterable[Candidate]) -> dict[int, list[Term]]:
    """rowid → the terms whose contiguity its line must show: every term that needs a check,
    except an identifier the entry holds as one whole token."""
    if not checks:
        return {}
    rowids = [hit.rowid for hit in hits]
    pending: dict[int, list[Term]] = {}
    for term in checks:
        whole = view.index.store.holding(term.whole, rowids) if term.whole is not None else set()
        for rowid in rowids:
            if rowid not in whole:
                pending.setdefault(rowid, []).append(term)
    return pending


def _all_terms(
    view: View, terms: list[Term], sequence: list[str], filters: Filters
) -> tuple[Sequence[Candidate], bool]:
    """Entries that hold every term, those holding the whole query as one sequence first; and
    whether more may exist than were ranked."""
    hits = _matching(view, " AND ".join(t.match for t in terms), filters, ALL_CAP, shortest_first=True)
    more = len(hits) == ALL_CAP
    pending = _unchecked(view, [term for term in terms if term.check], hits)
    if not hits or (not pending and len(terms) == 1):
        return hits, more
    texts = _candidate_texts(view, hits[:CHECK_CAP])
    checks = _Checks(terms, sequence)
    exact: list[Candidate] = []
    apart: list[Candidate] = []
    unread: list[Candidate] = []
    for hit in hits:
        text, needed = texts.get(hit.rowid), pending.get(hit.rowid, [])
        if text is None:
            unread.append(hit)
        elif all(checks.term(text, term) for term in needed):
            (exact if len(terms) > 1 and checks.sequence(text, sequence) else apart).append(hit)
    # an entry whose line was not read cannot be said to match a term that needs its line
    shown = [hit for hit in unread if hit.rowid not in pending]
    return exact + apart + shown, more or len(shown) < len(unread)


_ENTRY_TOTAL: Memo[int] = Memo()


def _entry_total(view: View) -> int:
    """Entries in the index, counted again only after a write (for IDF)."""
    return _ENTRY_TOTAL.get((id(view.index), view.index.generation), view.index.store.entry_total)


def _fallback_match(term: Term) -> str:
    """A term as the any-term fallback matches it: its own form, or a word of its Porter stem (any
    word that starts with the stem, when it differs from the term; else the term's inflected forms)."""
    if term.check:
        return term.match
    prefix = stem_prefix(term.text)
    if prefix is not None:
        return f'({term.match} OR "{prefix}" *)'
    forms = [term.match, *(f'"{form}"' for form in stem_forms(term.text))]
    return f"({' OR '.join(forms)})" if len(forms) > 1 else term.match


def _any_term(view: View, terms: list[Term], filters: Filters, limit: int) -> tuple[Candidates, bool]:
    """Entries that hold some term: those holding a term that is no stop word first (JM-RANK-002),
    then, if there are not more than `limit` of those, the newest holders of stop words."""
    content = [term for term in terms if not term.stop_word]
    order, more = _ranked_holders(view, content, filters, TERM_CAP) if content else (Candidates([]), False)
    stop = [term for term in terms if term.stop_word]
    if len(order) <= limit and stop:
        extra, more_extra = _ranked_holders(view, stop, filters, limit + 1)
        listed = {row[0] for row in order.rows}
        order = Candidates(order.rows + extra.without(listed).rows)
        more = more or more_extra
    return order, more


def _ranked_holders(view: View, terms: list[Term], filters: Filters, cap: int) -> tuple[Candidates, bool]:
    """Entries that hold some of these terms, ranked by the summed IDF of the distinct terms they
    hold, then by length, then newest; and whether a term had more holders than `cap`. Every
    term's holders are candidates (up to `cap` each), so recency never decides which rare entries
    are ranked."""
    store = view.index.store
    matches = [_fallback_match(term) for term in terms]
    frequencies = [store.document_frequency(match, _DF_CAP) for match in matches]
    weighted = [(f, t, m) for f, t, m in zip(frequencies, terms, matches, strict=True) if f > 0]
    if not weighted:
        return Candidates([]), False
    total = max(_entry_total(view), max(f for f, _, _ in weighted))
    weights = [math.log(1 + total / frequency) for frequency, _, _ in weighted]
    found: dict[int, tuple[Any, ...]] = {}  # rowid → its candidate's row, made a Candidate when read
    held: dict[int, set[int]] = {}
    listed_by: list[list[int]] = []  # per term, the rowids its own list gave
    for number, (_, _, match) in enumerate(weighted):
        rows = _matching(view, match, filters, cap).rows
        listed_by.append([row[0] for row in rows])
        for row in rows:
            found.setdefault(row[0], row)
            held.setdefault(row[0], set()).add(number)
    capped = [number for number, rowids in enumerate(listed_by) if len(rowids) == cap]
    _complete_capped(store, [match for _, _, match in weighted], listed_by, capped, held)

    def ranked() -> Candidates:
        # among equal scores shorter first, as BM25's length normalisation orders them whatever the
        # average length, then newer (a row: rowid, chars, ms, path, offset)
        scores = {rowid: sum(weights[n] for n in numbers) for rowid, numbers in held.items() if numbers}
        return Candidates(
            sorted(
                (found[rowid] for rowid in scores),
                key=lambda row: (scores[row[0]], -row[1], row[2], row[3], row[4]),
                reverse=True,
            )
        )

    order = ranked()
    checked = {id(term): n for n, (_, term, _) in enumerate(weighted) if term.check}
    pending = _unchecked(view, [weighted[n][1] for n in checked.values()], order)
    if pending:  # a term that needs its line checked counts only where the line holds it
        texts = _candidate_texts(
            view, Candidates([row for row in order.rows if row[0] in pending][:CHECK_CAP])
        )
        checks = _Checks([weighted[n][1] for n in checked.values()], [])
        for rowid, needed in pending.items():
            text = texts.get(rowid)
            for term in needed:
                if text is None or not checks.term(text, term):
                    held[rowid].discard(checked[id(term)])
        order = ranked()
    return order, bool(capped)


def _complete_capped(
    store: Store, matches: list[str], listed_by: list[list[int]], capped: list[int], held: dict[int, set[int]]
) -> None:
    """Add each cut term to the held sets of the other terms' candidates that hold it (older than
    its own list reaches). Every such candidate holds the term whose list gave it, so the two are
    intersected in FTS5 (`store.holding_both`), which skips through the longer doclist, over the
    span of that list's rowids: seeking each candidate in a common term's doclist instead cost
    tens of microseconds apiece, 150 ms for 1,500 candidates of a natural question."""
    shortest_first = sorted(range(len(matches)), key=lambda number: len(listed_by[number]))
    for number in capped:
        asked: set[int] = set()
        for other in shortest_first:
            if other == number:
                continue
            rowids = [rowid for rowid in listed_by[other] if rowid not in asked and number not in held[rowid]]
            asked.update(rowids)
            for rowid in store.holding_both(matches[number], matches[other], rowids):
                held[rowid].add(number)


@dataclass
class _Hit:
    """One result of a page: its row and entry, how it matched, and how many later entries that
    only restate the query it stands for."""

    row: EntryRow
    entry: Extracted
    match: ResultMatch | None  # None in a listing
    repeats: int = 0


class _Page:
    """A search's page, filled from ranked candidates in order. Every entry that only restates the
    query after the first is folded into that first one's result (JM-SEARCH-352) instead of taking
    a place; when it holds every term, that result goes after the others. Only the first CHECK_CAP
    entries taken are judged so: the rest count as saying more."""

    def __init__(self, view: View, query: str, limit: int) -> None:
        self.view, self.limit = view, limit
        self.allowed = {term.casefold() for term in split_terms(query)} | STOP_WORDS
        self.shown: list[_Hit] = []
        self.restating: _Hit | None = None
        self.judged = 0
        self.stale = False
        self.withheld: dict[int, set[str]] = {}

    def full(self) -> bool:
        """Whether the page holds one more result than it shows (so more exist)."""
        return len(self.shown) > self.limit

    def ordered(self) -> list[_Hit]:
        """The results in the page's order: the query asked again (a restatement that holds every
        term) after every entry that says more (JM-SEARCH-352), so it never ranks above an answer."""
        again = self.restating
        if again is None or again.match != "all":
            return self.shown
        return [*(hit for hit in self.shown if hit is not again), again]

    def take(self, hits: Sequence[Candidate], match: ResultMatch) -> None:
        """Take these candidates in order until the page is full (so a candidate is left only when
        the page is full, which says that more exist)."""
        at = 0
        while at < len(hits) and not self.full():
            batch = hits[at : at + self.limit + 1 - len(self.shown)]
            at += len(batch)
            for row in _fetch(self.view, batch):
                entry = _load(self.view, row, self.withheld)
                if entry is None:
                    self.stale = True
                    continue
                hit = _Hit(row, entry, match)
                if self._restates(entry.terms_text):
                    if self.restating is not None:
                        self.restating.repeats += 1
                        continue
                    self.restating = hit
                self.shown.append(hit)

    def _restates(self, text: str) -> bool:
        """Whether every term of the text, as redacted, is a term of the query or a stop word (a
        redaction marker's words count only when the query holds one of them). Only a text whose
        own terms all are is redacted: a secret the query also holds says more once masked."""
        if self.judged >= CHECK_CAP:
            return False
        self.judged += 1
        allowed = self.allowed
        cut = text.find(" ", _RESTATE_HEAD)  # the terms before a space start the text's terms: most
        # texts hold another word early, and a long text need not be normalised whole to show it
        if cut > 0 and not all(term.casefold() in allowed for term in iter_terms(text[:cut])):
            return False
        if not all(term.casefold() in allowed for term in iter_terms(text)):
            return False
        return all(term.casefold() in allowed for term in iter_terms(_redact_cached(self.view, text)))


def _own_answer(entry: Extracted) -> bool:
    """Whether an entry is a result of the memory's own tool (never a search result, JM-SEARCH-340)."""
    return entry.kind == "tool_result" and entry.tool_name == MEMORY_TOOL


def _listing(view: View, filters: Filters, limit: int) -> tuple[Match, list[_Hit], bool, bool]:
    """The newest entries, newest first, without the memory's own answers (read more of the
    newest lines while some of them were such answers)."""
    count = limit + 1
    while True:
        rows = _latest(view, filters, count)
        loaded: list[_Hit] = []
        stale = False
        for row in rows:
            entry = _load(view, row)
            if entry is None:
                stale = True
            elif not _own_answer(entry):
                loaded.append(_Hit(row, entry, None))
                if len(loaded) > limit:
                    break
        if len(loaded) > limit or len(rows) < count:
            return "list", loaded[:limit], len(loaded) > limit, stale
        count *= 2


def _search_once(
    view: View, query: str | None, filters: Filters, limit: int
) -> tuple[Match, list[_Hit], bool, bool]:
    """(match, the page, whether more results exist, whether a line of a candidate no longer
    carried its entry: its journal changed under the index and is being reindexed)."""
    if query is None:
        return _listing(view, filters, limit)
    terms = analysed_terms(query)
    if not terms:
        return "none", [], False, False
    page = _Page(view, query, limit)
    hits, more = _all_terms(view, terms, query_sequence(query), filters)
    page.take(hits, "all")
    if not page.full() and (len(terms) > 1 or _fallback_match(terms[0]) != terms[0].match):
        # the any-term ranking fills the page (JM-SEARCH-350); one term's, with the words of its stem
        held = {hit.rowid for hit in hits}
        others, more_others = _any_term(view, terms, filters, limit)
        page.take(others.without(held), "any")
        more = more or more_others
    ordered = page.ordered()
    if not ordered:
        return "none", [], False, page.stale
    holds_every_term = any(hit.match == "all" for hit in ordered)
    match: Match = "all" if holds_every_term else "any"
    return match, ordered[:limit], more or page.full(), page.stale


_HINTS: dict[Match, str] = {
    "any": "No entry has every term; these have at least one. Try fewer or different words.",
    "none": "Nothing matched. Try other words, a wider date range, or no kind filter.",
}


def search(
    view: View,
    query: str | None,
    *,
    kind: tuple[Kind, ...] | None,
    since: int | None,
    until: int | None,
    limit: int,
    hidden: frozenset[tuple[str, int]] = frozenset(),
) -> SearchFound:
    """`hidden`: the entries in the model's context (_context), left out as a filter leaves out."""
    text = None if query is None or not query.strip() else query
    filters = Filters(kind, since, until, hidden)
    match, shown, more, stale = _search_once(view, text, filters, limit)
    if stale:  # a journal changed under its pointers and was just reindexed: again
        match, shown, more, _ = _search_once(view, text, filters, limit)
    excerpts = _excerpts([item.entry.text for item in shown], query_terms(text or ""))
    edits = _context_edits(view, (item.row for item in shown))
    results = []
    for item, excerpt in zip(shown, excerpts, strict=True):
        result = _result(item.row, item.entry, excerpt)
        if item.match is not None:
            result["match"] = item.match
        if item.repeats:
            result["repeats"] = item.repeats
        results.append(_marked(result, item.row, edits))
    left_out = _in_context_matches(view, text, filters)
    hint = _HINTS.get(match)
    if match == "none" and left_out:
        hint = (
            f"Every match ({left_out}) is in your context already, so none is shown; "
            "pass includeContext: true to list them anyway."
        )
    return {
        "action": "search",
        "query": text,  # an empty query is no query (JM-SEARCH-020)
        "match": match,
        "hint": hint,
        "limit": limit,
        "truncated": more,
        "results": results,
        "inContext": left_out,
    }


def context_of(view: View, leaf_id: str | None) -> frozenset[tuple[str, int]]:
    """The entries in the model's context at this leaf of the current journal (none without one)."""
    known = view.index.known().get(view.current or "") if leaf_id is not None else None
    file_id = None if known is None else known[0]
    return in_context(view.index.store, file_id, leaf_id, view.index.generation)


def _in_context_matches(view: View, query: str | None, filters: Filters) -> int:
    """How many entries the search left out because they are in the model's context: those that
    pass the filters and hold some term of the query (every one, in a listing). A term that needs
    its line checked (contiguity, JM-SEARCH-040/042) counts only where the line holds it; those
    lines are read only for entries that hold no other term, and they are few (the context's)."""
    if not filters.hidden:
        return 0
    store = view.index.store
    rowids = store.entries_among(view.scope, filters, filters.hidden)
    if query is None or not rowids:
        return len(rowids)
    terms = analysed_terms(query)
    if not terms:
        return 0
    holders = store.holding(" OR ".join(f"({term.match})" for term in terms), rowids)
    checked = [term for term in terms if term.check]
    plain = [term for term in terms if not term.check]
    if not checked:
        return len(holders)
    sure = store.holding(" OR ".join(f"({term.match})" for term in plain), holders) if plain else set()
    checks = _Checks(checked, [])
    held = {
        row.rowid
        for row in store.entries_at(view.scope, holders - sure)
        if (entry := _load(view, row)) is not None
        and any(checks.term(entry.terms_text, term) for term in checked)
    }
    return len(sure) + len(held)


# -- read ----------------------------------------------------------------------------------------


def _lookup(view: View, entry_id: str | None, source: str | None) -> list[EntryRow]:
    """In-scope rows for an id or a source handle, one per journal (its latest line for that id)."""
    if source is not None:
        tag, _, entry_id = source.partition(":")
        paths = [path for path in view.paths if _path_tag(path) == tag]
        view = view.narrowed(paths)
    rows = view.index.store.entries_with_id(view.scope, entry_id)
    return _newest_first({row.path: row for row in rows}.values())


def _resolve(view: View, entry_id: str | None, source: str | None) -> tuple[ReadStatus, Any]:
    """("ok", row) | ("ambiguous", candidates) | ("not_found", None)."""
    rows = _lookup(view, entry_id, source)
    current = [row for row in rows if row.path == view.current]
    if current or len(rows) == 1:
        return "ok", (current or rows)[0]
    if not rows:
        return "not_found", None
    candidates: list[ReadCandidate] = [
        {
            "source": _source(r),
            "sessionId": r.session_id,
            "timestamp": r.timestamp,
            "kind": r.kind,
            "cwd": r.cwd,
        }
        for r in rows
    ]
    return "ambiguous", candidates


def read(view: View, entry_id: str | None, source: str | None, offset: int) -> ReadAnswer:
    status, found = _resolve(view, entry_id, source)
    details: ReadAnswer = {"action": "read", "status": status, "entryId": entry_id}
    if status == "ambiguous":
        details["candidates"] = found
    if status != "ok":
        return details
    row: EntryRow = found
    entry = _load(view, row)
    if entry is None:
        details["status"] = "unavailable"
        return details
    text = _redact_cached(view, entry.text)
    if offset > len(text):
        raise ToolError(
            "bad_offset",
            f"offset {echo(offset)} is past the end of entry {row.entry_id} ({len(text)} characters)",
            f"use an offset from 0 to {len(text)}, e.g. nextOffset from the previous page",
        )
    end = offset + PAGE_CHARS
    details.update(
        {
            "entryId": row.entry_id,
            "source": _source(row),
            "sessionId": row.session_id,
            "timestamp": row.timestamp,
            "kind": row.kind,
            "role": entry.role,
            "toolName": entry.tool_name,
            "cwd": row.cwd,
            "text": text[offset:end],
            "offset": offset,
            "nextOffset": end if end < len(text) else None,
            "totalChars": len(text),
        }
    )
    return _marked(details, row, _context_edits(view, [row]))


# -- summaries -----------------------------------------------------------------------------------


def summaries(view: View, *, since: int | None, until: int | None, limit: int) -> Summaries:
    results: list[Summary] = []
    shown: list[EntryRow] = []
    for row in _newest_first(view.index.store.entries(view.scope, Filters(SUMMARY_KINDS, since, until))):
        entry = _load(view, row)
        if entry is None:
            continue  # its journal is being reindexed; it never shows another line's text
        shown.append(row)
        results.append(
            {
                "entryId": row.entry_id,
                "source": _source(row),
                "sessionId": row.session_id,
                "timestamp": row.timestamp,
                "kind": row.kind,
                "tokensBefore": entry.tokens_before,
                "summary": _clip(_redact_cached(view, entry.text), _CONTEXT_CHARS),
            }
        )
        if len(results) == limit:
            break
    edits = _context_edits(view, shown)
    marked = [_marked(item, row, edits) for item, row in zip(results, shown, strict=True)]
    return {"action": "summaries", "results": marked}


# -- around --------------------------------------------------------------------------------------


def _walk(view: View, hit: EntryRow, count: int, upward: bool) -> list[EntryRow]:
    """Up to `count` entries along parentId (upward) or the latest-written child (downward)."""
    found: list[EntryRow] = []
    seen = {hit.entry_id}
    key: str | None = hit.parent_id if upward else hit.entry_id
    store = view.index.store
    while key is not None and len(found) < count:
        if upward:
            node = store.node(hit.file_id, key)
        else:
            node = next(reversed(store.children(hit.file_id, key)), None)  # the latest written
        if node is None or node.entry_id in seen:
            break
        seen.add(node.entry_id)
        if node.kind is not None:  # a line that is no entry is walked through, not shown
            found.append(node)
        key = node.parent_id if upward else node.entry_id
    return found


def around(view: View, entry_id: str | None, source: str | None, before: int, after: int) -> AroundAnswer:
    status, found = _resolve(view, entry_id, source)
    details: AroundAnswer = {"action": "around", "status": status, "entryId": entry_id, "entries": []}
    if status == "ambiguous":
        details["candidates"] = found
    if status != "ok":
        return details
    hit: EntryRow = found
    details["entryId"] = hit.entry_id
    placed: list[tuple[EntryRow, Position]] = [
        *((row, "before") for row in reversed(_walk(view, hit, before, upward=True))),
        (hit, "hit"),
        *((row, "after") for row in _walk(view, hit, after, upward=False)),
    ]
    edits = _context_edits(view, (row for row, _ in placed))
    for row, position in placed:
        text = _text(view, row)
        if text is None:
            if position == "hit":
                return {**details, "status": "unavailable", "entries": []}
            continue
        item: AroundEntry = {
            "entryId": row.entry_id,
            "source": _source(row),
            "sessionId": row.session_id,
            "timestamp": row.timestamp,
            "kind": row.kind,
            "text": _clip(text, _CONTEXT_CHARS),
            "position": position,
        }
        details["entries"].append(_marked(item, row, edits))
    return details
