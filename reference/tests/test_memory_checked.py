"""`indexing.checkedAt` is kept honest without a stat of every journal on every call.

The common call compares only the journals written last with the index; once the last full
comparison is older than the bound, a call compares every journal of its own scope (and no other
project's) before it answers, and what grew meanwhile is then found (JM-INDEX-190, JM-INDEX-191).
"""

from __future__ import annotations

import os
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from memory_kit import memory_in
from pimem import _journals
from pimem._maintenance import index_all
from pimem._memory import RECHECK_AFTER, Memory
from pimem._tool import run_tool
from pimem_conformance.journals import JournalWriter, entry_line, header_line, line_bytes

APP, OTHER = "/home/u/app", "/home/u/other"
START = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
JOURNALS = 40  # per project: more than the reference looks at on every call


def _set_mtime(path: Path, day: int) -> None:
    moment = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=day)
    os.utime(path, (moment.timestamp(), moment.timestamp()))


def _memory(workspace: JournalWriter) -> tuple[Memory, dict[str, list[Path]]]:
    journals: dict[str, list[Path]] = {APP: [], OTHER: []}
    for cwd in journals:
        for number in range(JOURNALS):
            path = workspace.write(
                workspace.path_for(cwd, f"s{number:02d}"),
                [header_line(f"{cwd}-{number}", cwd), entry_line(f"e{number:03d}", None, "a plain line")],
            )
            _set_mtime(path, number)
            journals[cwd].append(path)
    current = journals[APP][-1]
    memory = memory_in(workspace, APP, current, START, allow_global=True)
    index_all(memory)  # as the backfill after session_start: every journal compared at START
    return memory, journals


def _stats(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often discovery stats each file."""
    counted: Counter[str] = Counter()
    stat = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        counted[str(path)] += 1
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(_journals.os, "stat", counting)
    return counted


def _grow(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(line_bytes(entry_line("g1", None, "okapi sighting")))


def _search(memory: Memory, query: str, scope: str = "project") -> dict[str, Any]:
    answer = run_tool(memory, {"action": "search", "query": query, "scope": scope})
    details: dict[str, Any] = answer["details"]
    return details


def test_a_call_within_the_bound_stats_only_the_journals_written_last(
    workspace: JournalWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, journals = _memory(workspace)
    oldest = journals[APP][0]
    _grow(oldest)  # while no process indexes it
    stats = _stats(monkeypatch)
    memory.clock = START + RECHECK_AFTER  # at the bound, not past it
    details = _search(memory, "okapi")
    assert details["indexing"]["checkedAt"] == "2026-11-29T12:00:00.000Z"
    assert details["indexing"]["complete"] and details["results"] == []  # complete as of 12:00:00
    looked_at = {path for path in stats if path.endswith(".jsonl")}
    assert str(oldest) not in looked_at
    assert len(looked_at) < JOURNALS  # nowhere near every journal, let alone both projects'


def test_past_the_bound_a_call_compares_its_scope_again_and_finds_what_grew(
    workspace: JournalWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, journals = _memory(workspace)
    oldest = journals[APP][0]
    _grow(oldest)
    stats = _stats(monkeypatch)
    memory.clock = START + RECHECK_AFTER + timedelta(seconds=1)
    details = _search(memory, "okapi")
    assert details["indexing"]["checkedAt"] == "2026-11-29T12:01:01.000Z"
    assert [result["entryId"] for result in details["results"]] == ["g1"]
    assert details["indexing"]["complete"]
    assert {str(path) for path in journals[APP]} <= set(stats)  # its own scope, every journal
    assert not {str(path) for path in journals[OTHER][:-16]} & set(stats)  # not the other project's
    stats.clear()
    again = _search(memory, "okapi")  # the comparison is fresh: the next call is a common one
    assert again["indexing"]["checkedAt"] == "2026-11-29T12:01:01.000Z"
    assert str(journals[APP][1]) not in stats  # (the grown one is among those written last now)


def test_a_clock_set_back_before_the_last_comparison_compares_again_once(
    workspace: JournalWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, journals = _memory(workspace)
    memory.clock = START - timedelta(seconds=5)
    details = _search(memory, "plain", scope="global")
    assert details["indexing"]["checkedAt"] == "2026-11-29T11:59:55.000Z"  # never later than the clock
    stats = _stats(monkeypatch)
    _search(memory, "plain", scope="global")  # that comparison counts from now on: no sweep again
    assert not {str(path) for path in journals[APP][:20]} & set(stats)
