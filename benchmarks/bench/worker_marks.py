"""What every benchmarked worker's handler does, whatever the library: maybe sleep, then leave a mark.

The parent of ``benchmarks/worker.py`` counts finished jobs by the lines of
one marks file, so every library is judged by the same evidence, written by
its own handler in its own worker process: ``d`` for a throughput job, the
seconds from enqueue to start for a latency job (both clocks are this host's
``time.time()``). The settings come from the environment the parent sets.
"""

from __future__ import annotations

import os
import time

MARKS_ENV = "BENCH_WORKER_MARKS"
HANDLER_ENV = "BENCH_WORKER_HANDLER"
SLEEP_S = 0.010
"""The sleeping handler's wait: 10 ms, a stand-in for a call to another service."""


def sleeps() -> bool:
    """Whether this run's handler sleeps (``sleep``) or returns at once (``noop``)."""
    return os.environ.get(HANDLER_ENV, "noop") == "sleep"


def started(payload: object) -> str:
    """The mark of one job, taken when its handler starts (latency jobs carry their enqueue time ``t``)."""
    if isinstance(payload, dict) and isinstance(payload.get("t"), float):
        return f"{time.time() - payload['t']:.6f}\n"
    return "d\n"


def mark(line: str) -> None:
    """Append ``line`` to the marks file (one small O_APPEND write: whole, whatever the processes)."""
    fd = os.open(os.environ[MARKS_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("ascii"))
    finally:
        os.close(fd)
