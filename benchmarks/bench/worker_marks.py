"""What every benchmarked worker's handler does, whatever the library: maybe sleep, then leave a mark.

The parent of ``benchmarks/worker.py`` counts finished jobs by the lines of
one marks file, so every library is judged by the same evidence, written by
its own handler in its own worker process (``started`` says what a line
holds; enqueue and start instants are both this host's ``time.time()``).
The settings come from the environment the parent sets.
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
    """The mark of one job, taken when its handler starts.

    ``l I SECONDS`` for latency job ``I`` (it carries its enqueue instant ``t``; numbered, since two
    samples' latencies may be equal to the microsecond and the parent counts distinct lines),
    ``d N`` for throughput job ``N``, ``w N`` for a warm-up job: numbered, so
    the parent counts each job once and sees a job run twice.
    """
    if isinstance(payload, dict):
        if isinstance(payload.get("t"), float):
            return f"l {payload.get('i')} {time.time() - payload['t']:.6f}\n"
        if isinstance(payload.get("n"), int):
            return f"d {payload['n']}\n"
        if isinstance(payload.get("warm"), int):
            return f"w {payload['warm']}\n"
    return f"? {payload!r}\n"


def mark(line: str) -> None:
    """Append ``line`` to the marks file (one small O_APPEND write: whole, whatever the processes)."""
    fd = os.open(os.environ[MARKS_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("ascii"))
    finally:
        os.close(fd)
