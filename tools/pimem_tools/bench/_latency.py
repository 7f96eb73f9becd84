"""Latencies through the tool: search, read, append → searchable, and the call that re-checks.

Every figure is one `memory_context` call end to end (request in, response out, excerpts and
redaction included), timed with `perf_counter` around the whole call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from pimem_tools.bench._queries import Query
from pimem_tools.bench._reference import ToolClient

__all__ = [
    "APPEND_SAMPLES",
    "RECHECK_SAMPLES",
    "AppendTimes",
    "RecheckTimes",
    "SearchTimes",
    "build_large_journal",
    "time_appends",
    "time_reads",
    "time_rechecks",
    "time_searches",
]

READ_PAGE_CHARS = 16_000
APPEND_SAMPLES = 50
_MAX_READS = 300
_PAGES_PER_ENTRY = 4
RECHECK_SAMPLES = 40
# One step of the instance's clock past the spec's bound on `indexing.checkedAt` (60 s, JM-INDEX-191):
# the next call must compare every journal of its scope with the index before it answers.
PAST_THE_BOUND = timedelta(seconds=61)


def _timed(client: ToolClient, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    response = client.tool(arguments)
    return (time.perf_counter() - started) * 1000, response


@dataclass
class SearchTimes:
    samples_ms: list[float] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    matches: dict[str, int] = field(default_factory=dict)
    # (entryId, source) of every result, in order of appearance: what the read measurement reads.
    hits: dict[tuple[str, str], None] = field(default_factory=dict)


def time_searches(client: ToolClient, queries: list[Query], into: SearchTimes | None = None) -> SearchTimes:
    times = SearchTimes() if into is None else into
    for query in queries:
        elapsed, response = _timed(client, {**query.arguments, "limit": 10})
        details = response["details"]
        times.samples_ms.append(elapsed)
        times.categories.append(query.category)
        times.matches[details["match"]] = times.matches.get(details["match"], 0) + 1
        for result in details["results"]:
            times.hits.setdefault((result["entryId"], result["source"]), None)
    return times


def time_reads(client: ToolClient, hits: list[tuple[str, str]]) -> list[float]:
    """Read the first page of each hit and, for long entries, the pages after it."""
    samples: list[float] = []
    for entry_id, source in hits:
        offset: int | None = 0
        pages = 0
        while offset is not None and pages < _PAGES_PER_ENTRY and len(samples) < _MAX_READS:
            arguments = {
                "action": "read",
                "entryId": entry_id,
                "source": source,
                "offset": offset,
                "scope": "global",
            }
            elapsed, response = _timed(client, arguments)
            details = response["details"]
            if details["status"] != "ok":
                raise RuntimeError(f"read of a search hit {entry_id} returned {details['status']}")
            samples.append(elapsed)
            offset = details["nextOffset"]
            pages += 1
        if len(samples) >= _MAX_READS:
            break
    return samples


def _corpus_lines(journals: list[Path]) -> Iterator[dict[str, Any]]:
    """The corpus's lines with an id, over and over (a small corpus still fills a large journal)."""
    while True:
        for path in journals:
            with path.open("rb") as handle:
                handle.readline()  # the header belongs to its own journal
                for raw in handle:
                    obj = orjson.loads(raw)
                    if isinstance(obj, dict) and "id" in obj:
                        yield obj


def build_large_journal(target: Path, journals: list[Path], size: int, cwd: str) -> str:
    """A journal of at least `size` bytes made of the corpus's own lines, re-chained with fresh ids.

    Returns the id of its last entry (the parent of the first appended one).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "type": "session",
        "version": 3,
        "id": "0190bench-0000-7000-8000-append000050",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    lines = _corpus_lines(journals)
    entry_id = ""
    with target.open("wb") as handle:
        written = handle.write(orjson.dumps(header) + b"\n")
        number = 0
        while written < size:
            obj, parent = next(lines), entry_id or None
            entry_id = f"{number:08x}"
            obj["id"], obj["parentId"] = entry_id, parent
            written += handle.write(orjson.dumps(obj) + b"\n")
            number += 1
    return entry_id


@dataclass(frozen=True)
class AppendTimes:
    samples_ms: list[float]
    found: int


def time_appends(client: ToolClient, journal: Path, parent: str, now: datetime) -> AppendTimes:
    """Append one user entry with a unique word, then search for it in the session: end to end."""
    samples: list[float] = []
    found = 0
    for number in range(APPEND_SAMPLES):
        entry_id = f"a99e{number:04x}"
        word = f"appendprobe{number:04d}zq"
        moment = now + timedelta(seconds=number)
        line = {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": f"where is the {word} flag?"}],
                "timestamp": int(moment.timestamp() * 1000),
            },
        }
        started = time.perf_counter()
        with journal.open("ab") as handle:
            handle.write(orjson.dumps(line) + b"\n")
        response = client.tool({"action": "search", "query": word, "scope": "session"})
        samples.append((time.perf_counter() - started) * 1000)
        found += any(result["entryId"] == entry_id for result in response["details"]["results"])
        parent = entry_id
    return AppendTimes(samples, found)


def utc(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(UTC)


@dataclass(frozen=True)
class RecheckTimes:
    """Pairs of the same search: a common call, then one that must first compare every journal of
    its scope with the index (the clock moved past the bound in between)."""

    journals: int  # in the scope each re-checking call compares
    common_ms: list[float]
    recheck_ms: list[float]


def _checked_at(response: dict[str, Any]) -> str:
    return str(response["details"]["indexing"]["checkedAt"])


def time_rechecks(client: ToolClient, queries: list[Query], now: datetime) -> RecheckTimes:
    """Each query asked twice: at the clock of the last comparison (a common call, which must not
    compare again), then with the clock moved past the bound (which must: its `checkedAt` is the new
    time). Raises when either call is not the kind it stands for, so the figure measures the sweep."""
    if not queries:
        raise ValueError("time_rechecks needs at least one query")
    moment = now
    warm = client.tool(queries[0].arguments)  # the first call of a client pays for cold caches
    journals = int(warm["details"]["indexing"]["totalJournals"])
    last = _checked_at(warm)
    common: list[float] = []
    rechecked: list[float] = []
    for query in queries:
        elapsed, response = _timed(client, query.arguments)
        if _checked_at(response) != last:
            raise RuntimeError(f"a call within the bound compared again: checkedAt {_checked_at(response)}")
        common.append(elapsed)
        moment += PAST_THE_BOUND
        last = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        client.set_clock(last)
        elapsed, response = _timed(client, query.arguments)
        if _checked_at(response) != last:
            raise RuntimeError(f"a call past the bound did not compare again: {_checked_at(response)}")
        rechecked.append(elapsed)
    return RecheckTimes(journals, common, rechecked)
