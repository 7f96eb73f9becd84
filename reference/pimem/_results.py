"""The shapes of the tool's answers: what `_query` finds, `_tool` completes and renders, and the
viewer and the command line show (the `details` of spec/schemas/details-*.schema.json).

Keys keep the spec's camelCase, and the order in which the answers build them is the order they
are written in; these types only name what each answer holds.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from ._scope import ScopeName

__all__ = [
    "AroundAnswer",
    "AroundEntry",
    "ContextEdit",
    "Details",
    "Indexing",
    "Marked",
    "Match",
    "Position",
    "ReadAnswer",
    "ReadCandidate",
    "ReadStatus",
    "ResultMatch",
    "SearchAnswer",
    "SearchFound",
    "SearchResult",
    "Summaries",
    "SummariesAnswer",
    "Summary",
]

Match = Literal["list", "none", "all", "any"]  # how a search matched (`match` in its details)
ResultMatch = Literal["all", "any"]  # how one result of a search with terms matched
ReadStatus = Literal["ok", "ambiguous", "not_found", "unavailable"]
Position = Literal["before", "hit", "after"]  # of an entry shown around another


class Indexing(TypedDict):
    """How far the journals in view are indexed (`indexing` in an answer's details)."""

    complete: bool
    indexedJournals: int
    totalJournals: int
    checkedAt: str  # when every journal in view was last compared with the index (UTC, ms)


class ContextEdit(TypedDict):
    """A context_edit entry that replaced or omitted an entry in the agent's context."""

    state: Literal["replaced", "omitted"]
    editEntryId: str


class Marked(TypedDict, total=False):
    """An entry shown in an answer, which carries its context edit when it has one."""

    contextEdit: ContextEdit


class SearchResult(Marked):
    entryId: str
    source: str
    sessionId: str
    timestamp: str
    kind: str | None  # the stored kind (None only for a line that is no entry, which no answer shows)
    role: str | None
    toolName: str | None
    cwd: str
    excerpt: str
    match: NotRequired[ResultMatch]  # not in a listing
    repeats: NotRequired[int]  # only when it stands for later restatements of the query (JM-SEARCH-352)


class SearchFound(TypedDict):
    """What a search found, before the tool adds its scope and the indexing state."""

    action: Literal["search"]
    query: str | None
    match: Match
    hint: str | None
    limit: int
    truncated: bool
    results: list[SearchResult]
    inContext: int  # matching entries left out because they are in the model's context (since 0.3.0)


class SearchAnswer(SearchFound):
    scope: ScopeName
    indexing: Indexing


class ReadCandidate(TypedDict):
    """One of the entries an ambiguous id names, to be read again by its source."""

    source: str
    sessionId: str
    timestamp: str
    kind: str | None
    cwd: str


class ReadAnswer(Marked):
    """A read: the status and the asked id, then the candidates (ambiguous) or the page (ok)."""

    action: Literal["read"]
    status: ReadStatus
    entryId: str | None
    candidates: NotRequired[list[ReadCandidate]]
    source: NotRequired[str]
    sessionId: NotRequired[str]
    timestamp: NotRequired[str]
    kind: NotRequired[str | None]
    role: NotRequired[str | None]
    toolName: NotRequired[str | None]
    cwd: NotRequired[str]
    text: NotRequired[str]
    offset: NotRequired[int]
    nextOffset: NotRequired[int | None]
    totalChars: NotRequired[int]


class Summary(Marked):
    entryId: str
    source: str
    sessionId: str
    timestamp: str
    kind: str | None
    tokensBefore: int | None
    summary: str


class Summaries(TypedDict):
    """What a summaries call found, before the tool adds its scope and the indexing state."""

    action: Literal["summaries"]
    results: list[Summary]


class SummariesAnswer(Summaries):
    scope: ScopeName
    indexing: Indexing


class AroundEntry(Marked):
    entryId: str
    source: str
    sessionId: str
    timestamp: str
    kind: str | None
    text: str
    position: Position


class AroundAnswer(TypedDict):
    action: Literal["around"]
    status: ReadStatus
    entryId: str | None
    entries: list[AroundEntry]
    candidates: NotRequired[list[ReadCandidate]]


Details = SearchAnswer | ReadAnswer | SummariesAnswer | AroundAnswer  # a tool answer's `details`
