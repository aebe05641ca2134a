"""One function run in a forked process while the caller goes on, on a machine with two cores or more (issue 27:
the report's second process, the viewer's prediction index). Fork, not spawn: the function and what the caller
has read travel with the process, nothing is pickled on the way in."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any


def fork_pays() -> bool:
    """A second process pays and is safe: two cores or more, fork available, and no other Python thread running (a
    fork copies locks other threads hold, never released in the child: a report written by a pipeline with a server
    or progress thread once hung in matplotlib)."""
    return (
        (os.cpu_count() or 1) >= 2
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def fork_pool() -> ProcessPoolExecutor:
    """A pool of one forked process (call only where fork_pays())."""
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))


@contextlib.contextmanager
def in_fork(fn: Callable[..., Any], *args: Any) -> Iterator[Future | None]:
    """The future of ``fn(*args)`` computed in a forked process (None where fork_pays() is false: the caller computes
    it itself); the process is gone when the block ends. ``fn`` must open what it reads itself (a database connection
    must not cross a fork) and return something small to pickle."""
    if not fork_pays():
        yield None
        return
    pool = fork_pool()
    try:
        yield pool.submit(fn, *args)
    finally:
        pool.shutdown(cancel_futures=True)
