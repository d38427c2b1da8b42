"""Where many independent runs execute: this machine's cores (a process pool) or a Dask cluster
(dask.distributed). `mmpath sweep` and `mmpath reproduce` hand their runs here as (function,
arguments) tasks of plain, picklable data, and put the results back in their own order, so what
they report does not depend on where or in which order the runs finished.

Dask is optional (``pip install "mmpath[dask]"``); its workers need mmpath installed.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from .cliargs import print_error
from .errors import MmpathError

# How long to wait for a Dask scheduler before giving up with a message.
DASK_CONNECT_TIMEOUT_S = 10


class ExecutorError(MmpathError):
    """--dask given but dask.distributed is missing, or no scheduler answers at the address."""


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group: the parent handles it and stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _failure(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


def map_unordered(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], workers: int | None = None,
                  dask: str | None = None) -> Iterator[tuple[int, Any, str | None]]:
    """Runs fn(*task) for every task; yields (task index, result, None) or (task index, None,
    error message) as each finishes. ``dask``: a scheduler address (tcp://host:port), else
    ``workers`` local processes (default one per CPU; 1 runs in this process)."""
    if dask:
        yield from _on_dask(fn, tasks, dask)
        return
    n = workers or os.cpu_count() or 1
    if n <= 1 or len(tasks) <= 1:
        for i, t in enumerate(tasks):
            try:
                yield i, fn(*t), None
            except Exception as e:  # noqa: BLE001 - as in the pool: reported per task
                yield i, None, _failure(e)
        return
    pool = ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)
    try:
        futures = {pool.submit(fn, *t): i for i, t in enumerate(tasks)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                yield i, fut.result(), None
            except Exception as e:  # noqa: BLE001
                yield i, None, _failure(e)
    except BaseException:
        # Ctrl-C (or a broken pool): drop the queued runs, and stop the ones in progress too:
        # the workers ignore SIGINT, so they would otherwise finish their runs (a long scenario:
        # minutes) before this process could exit.
        procs = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
        pool.shutdown(wait=False, cancel_futures=True)
        _terminate(procs)
        raise
    pool.shutdown()


def _terminate(procs: list[Any]) -> None:
    for proc in procs:
        try:
            proc.terminate()
        except (OSError, ValueError):  # already gone, or closed
            pass


def _dask_workers(client: Any) -> int:
    """How many workers the scheduler knows now (assume some if it cannot say)."""
    try:
        return len(client.scheduler_info().get("workers", {}))
    except Exception:  # noqa: BLE001 - only a hint depends on it
        return 1


def _on_dask(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]],
             address: str) -> Iterator[tuple[int, Any, str | None]]:
    try:
        # Optional (`mmpath[dask]`), and heavy: imported only for --dask.
        from distributed import Client, as_completed as dask_completed
    except ImportError:
        raise ExecutorError('--dask needs dask.distributed: pip install "mmpath[dask]" (or "dask[distributed]")') \
            from None
    try:
        client = Client(address, timeout=DASK_CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as e:
        raise ExecutorError(f"--dask {address}: cannot reach a Dask scheduler there ({_failure(e)})") from None
    try:
        if not _dask_workers(client):
            # Tasks would wait silently for a worker that may never come: say so once.

            print_error(f"the Dask cluster at {address} has no workers yet; the runs wait until one joins "
                        "(start one with `dask worker ADDRESS`; Ctrl-C stops)")
        # pure=False: two runs are never merged into one task, whatever their arguments hash to.
        futures = [client.submit(fn, *t, pure=False) for t in tasks]
        index = {f.key: i for i, f in enumerate(futures)}
        for fut in dask_completed(futures):
            i = index[fut.key]
            try:
                yield i, fut.result(), None
            except Exception as e:  # noqa: BLE001
                yield i, None, _failure(e)
    finally:
        client.close()
