"""Where batches are prepared: a pass through worker processes stores what a pass without them does,
and the storing process prepares a batch itself only while the workers have a backlog."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pimem._index import Index
from pimem._journals import DEFAULT_MAX_LINE_BYTES, Journal, read_header
from pimem._store import Candidate, EntryRow, Filters
from pimem._workers import BULK_BYTES, _Workers, preparing
from pimem_conformance.journals import entry_line, header_line, write_journal


def _held(release: threading.Event) -> int:
    release.wait(10)
    return threading.get_ident()


def test_a_task_given_while_the_workers_have_a_backlog_runs_here_at_once() -> None:
    release, here = threading.Event(), threading.get_ident()
    with ThreadPoolExecutor(1) as pool:
        workers = _Workers(pool, 1)
        given = [workers.submit(_held, release) for _ in range(workers.backlog)]  # one worked on
        third = workers.submit(threading.get_ident)
        assert third.done() and third.result() == here
        assert not any(future.done() for future in given)
        release.set()
        assert here not in {future.result() for future in given}
        # the backlog is gone: the workers take the next one again
        assert workers.submit(threading.get_ident).result() != here


def test_a_task_given_below_the_backlog_goes_to_the_workers() -> None:
    release, here = threading.Event(), threading.get_ident()
    with ThreadPoolExecutor(2) as pool:
        workers = _Workers(pool, 2)
        given = [workers.submit(_held, release) for _ in range(workers.backlog - 1)]
        fourth = workers.submit(threading.get_ident)
        release.set()
        assert here not in {future.result() for future in [*given, fourth]}


def _journals(tmp_path: Path) -> list[Journal]:
    journals = []
    for number in range(6):
        lines = [header_line(f"s{number}", "/home/u/app")]
        parent = None
        for entry in range(40):
            text = f"journal {number} entry {entry} retryBackoff 数据库"
            lines.append(entry_line(f"e{entry}", parent, text))
            parent = f"e{entry}"
        path = write_journal(tmp_path / "sessions" / f"s{number}.jsonl", lines)
        header = read_header(str(path), DEFAULT_MAX_LINE_BYTES)
        assert header is not None
        journals.append(Journal.from_header(str(path), header[0], os.stat(path)))
    return journals


def _stored(index: Index) -> tuple[list[EntryRow], list[Candidate]]:
    """Every entry row, and the entries the index finds for a part of an identifier."""
    found = index.store.candidates('"backoff"', None, Filters(), 1000, shortest_first=False)
    return index.store.entries(None, Filters()), found


def test_a_pass_through_worker_processes_stores_what_a_pass_without_them_does(tmp_path: Path) -> None:
    journals = _journals(tmp_path)
    stored = []
    for name, pending in (("inline", 0), ("workers", BULK_BYTES)):
        index = Index(str(tmp_path / f"{name}.sqlite"), 1 << 20)
        with preparing(pending) as pool:
            assert (pool is None) == (name == "inline")
            added = index.sync_many(journals, verify=lambda journal: False, pool=pool)
        stored.append((added, _stored(index)))
        index.close()
    assert stored[0] == stored[1]
    assert stored[0][0] == 240 and len(stored[0][1][1]) == 240
