"""The job handler of every Python runner: the ledger records around a real sleep (docs/runtime-faults.md).

A runner's task function calls ``perform`` with the job's arguments; it appends ``start``, sleeps the job's
duration (a killed or paused process stops in it), appends ``end``, and raises ``JobFailed`` when the job was
told to fail, so the library sees its ordinary failure. A runner that can see what the library did with a
completed run's acknowledgement appends ``ack`` with ``record_ack``; one whose library cancels a run (a job
timeout, a lost lease) appends ``cancelled`` with ``record_cancelled`` instead of ``end`` (``perform_async`` does
it itself when its task is cancelled). Each record is one ``write`` of one line to a file
opened in append mode, flushed at once: records of the processes of one worker interleave whole.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any


class JobFailed(Exception):
    """The failure a job told to fail raises, after its ``end`` record."""


def record(
    ev: str,
    job: str,
    attempt: int | None = None,
    ok: bool | None = None,
    accepted: bool | None = None,
    by: str | None = None,
    reason: str | None = None,
    tick: float | None = None,
    library_job: str | None = None,
) -> None:
    """Append one ledger record: ``start``, ``end`` (with ``ok``), ``ack`` (with ``accepted``) or ``cancelled``
    (with ``by``, ``library`` or ``worker``, and the library's ``reason``); ``tick``, for a periodic run of the
    ``schedule`` workload, the scheduled wall time of the tick it runs, and ``library_job`` the library's id of the
    job running it, when the library gives one (so a second run of one job tells from a second job)."""
    line: dict[str, Any] = {
        "ev": ev,
        "job": job,
        "worker": os.environ["ALKSTORE_FAULTS_WORKER"],
        "pid": os.getpid(),
        "attempt": attempt,
        "mono": time.monotonic(),
        "wall": time.time(),
    }
    if ev == "end":
        line["ok"] = ok
    if ev == "ack":
        line["accepted"] = accepted
    if ev == "cancelled":
        line["by"], line["reason"] = by, reason
    if tick is not None:
        line["tick"] = tick
    if library_job is not None:
        line["library_job"] = library_job
    with open(os.environ["ALKSTORE_FAULTS_LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(json.dumps(line) + "\n")
        ledger.flush()


def perform(job: str, duration_s: float, fail: bool, attempt: int | None = None) -> str:
    """Run one job's handler: ``start``, the sleep, ``end``; ``JobFailed`` when told to fail."""
    record("start", job, attempt)
    time.sleep(duration_s)
    record("end", job, attempt, ok=not fail)
    if fail:
        raise JobFailed(f"job {job} was told to fail")
    return job


TICK_S = 0.5
"""How long a periodic run of the ``schedule`` workload sleeps: long enough that a fault finds one in flight."""


def tick_job(tick: float) -> str:
    """The ledger's job name for the run of the tick scheduled at ``tick`` (epoch seconds)."""
    return f"tick-{tick:.3f}"


def perform_tick(tick: float, attempt: int | None = None, library_job: str | None = None) -> None:
    """Run one tick's periodic handler (the ``schedule`` workload): ``start``, a real sleep, ``end``, each record
    carrying the tick's scheduled wall time, which the library gives the handler."""
    record("start", tick_job(tick), attempt, tick=tick, library_job=library_job)
    time.sleep(TICK_S)
    record("end", tick_job(tick), attempt, ok=True, tick=tick, library_job=library_job)


async def perform_tick_async(tick: float, attempt: int | None = None, library_job: str | None = None) -> None:
    """``perform_tick`` for an asyncio runtime; a cancellation is recorded as ``perform_async`` does."""
    job = tick_job(tick)
    record("start", job, attempt, tick=tick, library_job=library_job)
    try:
        await asyncio.sleep(TICK_S)
    except asyncio.CancelledError:
        record("cancelled", job, attempt, by="library", reason="CancelledError", tick=tick, library_job=library_job)
        raise
    record("end", job, attempt, ok=True, tick=tick, library_job=library_job)


def record_ack(job: str, attempt: int | None, accepted: bool) -> None:
    """After the library settled the completion of a run of ``job`` in this process: whether it accepted it."""
    record("ack", job, attempt, accepted=accepted)


def record_cancelled(job: str, attempt: int | None, reason: str, by: str = "library") -> None:
    """The library (or its worker, ``by="worker"``) cancelled this process's run of ``job``: its ``reason`` in the
    library's words (``job_timeout``); written instead of ``end``, so the run ends here, not ok."""
    record("cancelled", job, attempt, by=by, reason=reason)


def read_jobs(path: str) -> list[dict[str, Any]]:
    """The jobs of an ``enqueue`` call: one JSON object a line (``id``, ``duration_s``, ``fail``)."""
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


async def perform_async(job: str, duration_s: float, fail: bool, attempt: int | None = None) -> str:
    """``perform`` for an asyncio runtime: the sleep yields to the loop, and the library may cancel it; a
    cancellation is recorded (``cancelled``, reason ``CancelledError``) and goes on to the library."""
    record("start", job, attempt)
    try:
        await asyncio.sleep(duration_s)
    except asyncio.CancelledError:
        record_cancelled(job, attempt, "CancelledError")
        raise
    record("end", job, attempt, ok=not fail)
    if fail:
        raise JobFailed(f"job {job} was told to fail")
    return job
