"""Where batches are prepared during a pass: in this process, or in worker processes with this
process lending a hand.

A pass over less than BULK_BYTES prepares each batch in the process that stores it (INLINE). A
larger pass starts worker processes; the storing process gives them batches ahead and inserts what
comes back. When it would only wait (the workers already have a backlog), it prepares the batch
itself, so that on a machine with as many cores as processes no core sits idle. What a pass stores,
and in which order, is the same every way: only where `prepare` runs differs.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ._prepare import Prepared

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


class _Workers(Executor):
    """Worker processes, helped by this process: a task given while every worker still has one
    waiting behind the one it is on runs here at once, since this process would otherwise wait for
    them. Once the workers are gone (a sandbox may not let them live), everything runs here."""

    def __init__(self, pool: Executor, workers: int) -> None:
        self.pool: Executor = pool
        self.backlog = 4 * workers  # tasks given to the workers that are not done yet
        self.given: list[Future[Any]] = []

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        self.given = [future for future in self.given if not future.done()]
        if len(self.given) >= self.backlog:
            return INLINE.submit(fn, *args, **kwargs)
        try:
            future = self.pool.submit(fn, *args, **kwargs)
        except BrokenProcessPool:
            self.pool = INLINE
            return self.pool.submit(fn, *args, **kwargs)
        self.given.append(future)
        return future


def outcome(batch: Future[Prepared], again: Callable[[], Future[Prepared]]) -> Prepared:
    """A batch's result; prepared once more (here) if the worker preparing it died."""
    try:
        return batch.result()
    except BrokenProcessPool:
        return again().result()


@contextlib.contextmanager
def preparing(pending_bytes: int) -> Iterator[Executor | None]:
    """Worker processes to prepare batches in, when a pass has enough to do to repay starting them
    (a fresh interpreter each: the caller may have threads, which a fork would copy mid-step)."""
    if pending_bytes < BULK_BYTES:
        yield None
        return
    try:
        pool = ProcessPoolExecutor(_WORKERS, mp_context=multiprocessing.get_context("spawn"))
    except OSError:  # no processes to be had here (a sandbox): this one prepares everything
        yield None
        return
    with pool:
        yield _Workers(pool, _WORKERS)
