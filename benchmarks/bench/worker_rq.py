"""The function ``benchmarks/worker.py`` enqueues on RQ, run by ``rq worker`` or ``rq worker-pool``."""

from __future__ import annotations

import time

from bench.worker_marks import SLEEP_S, mark, sleeps, started


def bench(payload: object) -> None:
    line = started(payload)
    if sleeps():
        time.sleep(SLEEP_S)
    mark(line)
