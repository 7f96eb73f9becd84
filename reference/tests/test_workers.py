"""Where batches are prepared: a pass through worker processes stores what a pass without them does,
and the storing process prepares a batch itself only while it waits for one."""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from pimem._index import Index
from pimem._journals import DEFAULT_MAX_LINE_BYTES, Journal, read_header
from pimem._store import Candidate, EntryRow, Filters
from pimem._workers import BULK_BYTES, INLINE, _Workers, outcome, preparing
from pimem_conformance.journals import entry_line, header_line, write_journal


def _held(release: threading.Event) -> int:
    release.wait(10)
    return threading.get_ident()


def test_a_task_beyond_the_backlog_waits_and_runs_here_only_when_awaited() -> None:
    release, here = threading.Event(), threading.get_ident()
    with ThreadPoolExecutor(1) as pool:
        workers = _Workers(pool, 1)
        given = [workers.submit(_held, release) for _ in range(workers.backlog)]  # one worked on
        beyond = workers.submit(threading.get_ident)
        assert not beyond.done(), "nobody waits for it yet: it waits for a worker"
        assert beyond.result() == here, "the workers are all busy: the waiter prepares it"
        assert not any(future.done() for future in given)
        release.set()
        assert here not in {future.result() for future in given}


def test_waiting_for_a_busy_worker_prepares_the_next_waiting_task_here() -> None:
    release, here = threading.Event(), threading.get_ident()
    with ThreadPoolExecutor(1) as pool:
        workers = _Workers(pool, 1)
        first = workers.submit(_held, release)
        given = [workers.submit(_held, release) for _ in range(workers.backlog - 1)]
        waiting = [workers.submit(threading.get_ident), workers.submit(threading.get_ident)]
        threading.Timer(0.5, release.set).start()
        assert first.result() != here
        assert waiting[0].done() and waiting[0].result() == here, "prepared here while waiting"
        assert all(future.result() != here for future in given)


def test_a_waiting_task_goes_to_the_workers_once_they_free_up() -> None:
    release, here = threading.Event(), threading.get_ident()
    with ThreadPoolExecutor(2) as pool:
        workers = _Workers(pool, 1)
        given = [workers.submit(_held, release) for _ in range(workers.backlog)]
        later = workers.submit(threading.get_ident)
        release.set()
        concurrent.futures.wait(given)  # waiting without asking for a result lends no hand
        assert later.result() != here, "the workers were free again when it was awaited"
        assert here not in {future.result() for future in given}


def test_a_task_given_below_the_backlog_goes_to_the_workers() -> None:
    release, here = threading.Event(), threading.get_ident()
    with ThreadPoolExecutor(2) as pool:
        workers = _Workers(pool, 2)
        given = [workers.submit(_held, release) for _ in range(workers.backlog - 1)]
        last = workers.submit(threading.get_ident)
        release.set()
        assert here not in {future.result() for future in [*given, last]}


class _Gone(ThreadPoolExecutor):
    """A pool whose processes are gone: every submit fails as a broken process pool does."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        raise BrokenProcessPool("the workers died")


def test_once_the_workers_are_gone_every_task_runs_here() -> None:
    here = threading.get_ident()
    workers = _Workers(_Gone(1), 1)
    futures = [workers.submit(threading.get_ident) for _ in range(workers.backlog + 2)]
    assert [future.result() for future in futures] == [here] * len(futures)
    assert workers.pool is INLINE


def test_a_batch_whose_worker_died_is_prepared_again_here() -> None:
    died: Future[int] = Future()
    died.set_exception(BrokenProcessPool("the worker died"))
    assert outcome(died, lambda: INLINE.submit(threading.get_ident)) == threading.get_ident()


# A storing process that starts its workers, has one prove it runs, and is then killed (as kill -9
# or the OOM killer end it): nothing of its own gets to shut the workers down.
_KILLED_STORER = """
import os, signal
from pimem._workers import BULK_BYTES, preparing
with preparing(BULK_BYTES) as pool:
    print(pool.submit(os.getpid).result(), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _running(pid: int) -> bool:
    """Whether the process exists and is no zombie (an orphan's zombie waits for whoever reaps it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def test_a_worker_ends_once_its_storing_process_has_died() -> None:
    if not Path("/proc/self/stat").exists():
        raise AssertionError("this test reads /proc: run it on Linux")
    # the worker holds the storer's stdout too: read its line, not up to the end
    argv = [sys.executable, "-c", _KILLED_STORER]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as storer:
        assert storer.stdout is not None
        worker = int(storer.stdout.readline())
        assert storer.wait(60) == -9
        assert worker != storer.pid
    deadline = time.monotonic() + 30
    while _running(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _running(worker):
        os.kill(worker, 9)
        raise AssertionError(f"worker {worker} outlived its storing process by 30 s")


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
    return index.store.entries(None, Filters()), list(found)


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
