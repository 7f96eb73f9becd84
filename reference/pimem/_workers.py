"""Where batches are prepared during a pass: in this process, or in worker processes with this
process lending a hand.

A pass over less than BULK_BYTES prepares each batch in the process that stores it (INLINE). A
larger pass starts worker processes; the storing process gives them batches ahead and inserts what
comes back. When it would only wait for a batch, it prepares one of those waiting for a worker
itself, so that on a machine with as many cores as processes no core sits idle. What a pass stores,
and in which order, is the same every way: only where `prepare` runs differs.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import multiprocessing
import multiprocessing.connection
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

__all__ = ["BULK_BYTES", "INLINE", "outcome", "preparing"]

BULK_BYTES = 64 << 20  # a foreground pass over more is prepared by workers, and compacted after
_WORKERS = min(2, max(1, (os.cpu_count() or 2) - 1))  # the storing process inserts meanwhile
T = TypeVar("T")


class _Inline(Executor):
    """Runs each task at once, in this process: a pass without workers."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:
            future.set_exception(error)
        return future


INLINE = _Inline()


class _Lent(Future[Any]):
    """A task's future from `_Workers`: waiting for its result puts the waiter to work."""

    def __init__(self, workers: _Workers, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> None:
        super().__init__()
        self.workers, self.call = workers, functools.partial(fn, *args, **kwargs)

    def result(self, timeout: float | None = None) -> Any:
        self.workers.help_until(self)
        return super().result(timeout)

    def run_here(self) -> None:
        try:
            self.set_result(self.call())
        except Exception as error:
            self.set_exception(error)


class _Workers(Executor):
    """Worker processes, helped by this process. The workers are given tasks up to a backlog;
    the rest wait here, and go to the workers as they free up. Only while this process waits for a
    result does it prepare a waiting task itself (the awaited one first), so it prepares just as much
    as it would otherwise spend idle. Once the workers are gone (a sandbox may not let them live),
    everything runs here."""

    def __init__(self, pool: Executor, workers: int) -> None:
        self.pool: Executor = pool
        # tasks with the workers, not done: one worked on, and two more, so that none sits idle
        # while this process prepares one
        self.backlog = 3 * workers
        self.given: list[_Lent] = []
        self.waiting: deque[_Lent] = deque()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future = _Lent(self, fn, args, kwargs)
        self.waiting.append(future)
        self._hand_out()
        return future

    def help_until(self, future: _Lent) -> None:
        """Prepare waiting tasks here until `future` is done: it first, if it is still waiting."""
        while not future.done():
            self._hand_out()
            if self.waiting:
                task = future if future in self.waiting else self.waiting[0]
                self.waiting.remove(task)
                task.run_here()
            else:
                concurrent.futures.wait(self.given, return_when=concurrent.futures.FIRST_COMPLETED)

    def _hand_out(self) -> None:
        self.given = [future for future in self.given if not future.done()]
        while self.waiting and len(self.given) < self.backlog:
            future = self.waiting.popleft()
            try:
                handed = self.pool.submit(future.call)
            except BrokenProcessPool:
                self.pool = INLINE
                handed = self.pool.submit(future.call)
            handed.add_done_callback(functools.partial(_settle, future))
            self.given.append(future)


def _settle(future: Future[Any], handed: Future[Any]) -> None:
    """Give `future` the outcome of the task the workers ran for it."""
    error = handed.exception()
    if error is None:
        future.set_result(handed.result())
    else:
        future.set_exception(error)


def outcome(batch: Future[T], again: Callable[[], Future[T]]) -> T:
    """A batch's result; prepared once more (here) if the worker preparing it died."""
    try:
        return batch.result()
    except BrokenProcessPool:
        return again().result()


def _end_with_the_storing_process() -> None:
    """In a worker, first thing: end this process once the process that started it has ended. A
    worker left alone would wait for tasks forever: it holds the writing end of its task queue too."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_once_ready, args=(parent.sentinel,), daemon=True).start()


def _end_once_ready(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(1)  # nothing of a task is worth keeping: the storing process is gone


@contextlib.contextmanager
def preparing(pending_bytes: int) -> Iterator[Executor | None]:
    """Worker processes to prepare batches in, when a pass has enough to do to repay starting them
    (a fresh interpreter each: the caller may have threads, which a fork would copy mid-step)."""
    if pending_bytes < BULK_BYTES:
        yield None
        return
    try:
        pool = ProcessPoolExecutor(
            _WORKERS,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_end_with_the_storing_process,
        )
    except OSError:  # no processes to be had here (a sandbox): this one prepares everything
        yield None
        return
    with pool:
        yield _Workers(pool, _WORKERS)
