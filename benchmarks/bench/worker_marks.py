"""What every benchmarked worker's handler does, whatever the library: maybe sleep, then leave a mark.

The parent of ``benchmarks/worker.py`` counts finished jobs by the lines of
one marks file, so every library is judged by the same evidence, written by
its own handler in its own worker process (``started`` says what a line
holds; enqueue, start and end instants are all this host's ``time.time()``).
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
    """The start of one job's mark, taken when its handler starts; ``mark`` adds the end instant.

    ``l I SECONDS`` for latency job ``I`` (it carries its enqueue instant ``t``),
    ``d N START`` for drain job ``N``: each numbered, so the parent counts each
    job once by its number and sees a job run twice.
    """
    if isinstance(payload, dict):
        if isinstance(payload.get("t"), float):
            return f"l {payload.get('i')} {time.time() - payload['t']:.6f}"
        if isinstance(payload.get("n"), int):
            return f"d {payload['n']} {time.time():.6f}"
    return f"? {payload!r}"


def mark(line: str) -> None:
    """Append ``line`` and the handler's end instant to the marks file (one small O_APPEND write: whole)."""
    fd = os.open(os.environ[MARKS_ENV], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{line} {time.time():.6f}\n".encode("ascii"))
    finally:
        os.close(fd)
