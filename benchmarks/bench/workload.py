"""The four paths, run the same way against every implementation.

An implementation is a ``Driver`` on a fresh location: the engine through the
contract surface, or the bare driver running the engine's own SQL. ``run_path``
times ``workers`` concurrent tasks (one event loop, one store or one connection
per worker for the bare asyncpg driver) doing one path until ``jobs`` jobs are
through, and checks afterwards that every job was stored or consumed exactly
as the path says. An op, whose latency is recorded, is one iteration of a
worker's loop:

- ``enqueue``: one ``enqueue`` of one job;
- ``enqueue_many``: one ``enqueue_many`` of ``BATCH`` jobs;
- ``claim_one+ack``: one ``claim_one`` and the ``ack`` of its job;
- ``claim_batch+ack_batch``: one ``claim_batch(BATCH)`` and one ``ack_batch`` of its jobs.

The consume paths start from a backlog of ``jobs`` jobs, loaded (untimed) with
``enqueue_many``; a consumer decodes every payload, as any real one must.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from bench.model import BATCH, Counts, Sample

Payload = dict[str, object]


def payload(n: int) -> Payload:
    """A small JSON job, the same for every implementation."""
    return {"n": n, "kind": "email", "to": f"user{n}@example.com"}


class Driver(Protocol):
    """One implementation of the four paths, open on a fresh location of its own.

    ``worker`` is the index of the calling worker (0 for the untimed backlog):
    the claimant's name, and on drivers with a connection per worker, which one.
    """

    async def enqueue(self, worker: int, item: Payload) -> None: ...

    async def enqueue_many(self, worker: int, items: list[Payload]) -> None: ...

    async def claim_one_ack(self, worker: int) -> int:
        """Claim one job, decode its payload, ack it; 1, or 0 when nothing was claimable."""
        ...

    async def claim_batch_ack(self, worker: int, n: int) -> int:
        """Claim up to ``n`` jobs, decode their payloads, ack them all in one call; how many."""
        ...

    async def warm_up(self, workers: int) -> None:
        """Open what ``workers`` concurrent workers need (pool connections) before the clock starts."""
        ...

    async def stored(self) -> int:
        """How many jobs the location holds (the check after a run)."""
        ...

    async def close(self) -> None: ...


DriverFactory = Callable[[], Awaitable[Driver]]


class Probe(Protocol):
    """What watches the timed part of a run: ``bench.counting.Tally``, or ``bench.profile``'s probes."""

    def start(self) -> None: ...

    def stop(self, jobs: int) -> Counts | None: ...


def batches(jobs: int) -> list[list[Payload]]:
    """``jobs`` payloads in batches of ``BATCH``: what ``enqueue_many`` sends, made before the clock starts."""
    return [[payload(n) for n in range(start, min(start + BATCH, jobs))] for start in range(0, jobs, BATCH)]


async def _enqueue_worker(driver: Driver, jobs: int, worker: int, workers: int, latencies: list[float]) -> int:
    done = 0
    for n in range(worker, jobs, workers):
        item = payload(n)
        started = time.perf_counter_ns()
        await driver.enqueue(worker, item)
        latencies.append((time.perf_counter_ns() - started) / 1000)
        done += 1
    return done


async def _enqueue_many_worker(
    driver: Driver, payloads: list[list[Payload]], worker: int, workers: int, latencies: list[float]
) -> int:
    done = 0
    for batch in payloads[worker::workers]:
        started = time.perf_counter_ns()
        await driver.enqueue_many(worker, batch)
        latencies.append((time.perf_counter_ns() - started) / 1000)
        done += len(batch)
    return done


async def _claim_one_worker(driver: Driver, worker: int, latencies: list[float]) -> int:
    done = 0
    while True:
        started = time.perf_counter_ns()
        got = await driver.claim_one_ack(worker)
        if not got:
            return done
        latencies.append((time.perf_counter_ns() - started) / 1000)
        done += got


async def _claim_batch_worker(driver: Driver, worker: int, latencies: list[float]) -> int:
    done = 0
    while True:
        started = time.perf_counter_ns()
        got = await driver.claim_batch_ack(worker, BATCH)
        if not got:
            return done
        latencies.append((time.perf_counter_ns() - started) / 1000)
        done += got


async def drive(
    driver: Driver, path: str, workers: int, jobs: int, payloads: list[list[Payload]], latencies: list[float]
) -> int:
    """``workers`` concurrent workers doing ``path`` on ``driver`` until ``jobs`` jobs are through; how many went.

    ``payloads`` is ``batches(jobs)``, which ``enqueue_many`` sends; the
    consume paths need their backlog of ``jobs`` already stored. Each op's
    latency (µs) is appended to ``latencies``.
    """
    workers_done: list[Awaitable[int]]
    if path == "enqueue":
        workers_done = [_enqueue_worker(driver, jobs, k, workers, latencies) for k in range(workers)]
    elif path == "enqueue_many":
        workers_done = [_enqueue_many_worker(driver, payloads, k, workers, latencies) for k in range(workers)]
    elif path == "claim_one+ack":
        workers_done = [_claim_one_worker(driver, k, latencies) for k in range(workers)]
    else:
        workers_done = [_claim_batch_worker(driver, k, latencies) for k in range(workers)]
    return sum(await asyncio.gather(*workers_done))


async def load_backlog(driver: Driver, payloads: list[list[Payload]]) -> None:
    """Store the backlog the consume paths start from, ``batches(jobs)``, with ``enqueue_many`` (untimed)."""
    for batch in payloads:
        await driver.enqueue_many(0, batch)


async def run_path(
    factory: DriverFactory,
    path: str,
    workers: int,
    jobs: int,
    tally: Probe | None = None,
    settle: Callable[[], Awaitable[None]] | None = None,
) -> tuple[Sample, Counts | None]:
    """Time one run of ``path``; with ``tally``, also count (or profile) the timed part.

    ``settle``, when given, runs before the backlog is stored and the clock
    starts (Postgres: ``bench.checkpoint``).
    """
    driver = await factory()
    try:
        payloads = batches(jobs)
        if settle is not None:
            await settle()
        consuming = path.startswith("claim")
        if consuming:
            await load_backlog(driver, payloads)
        await driver.warm_up(workers)
        latencies: list[float] = []
        if tally is not None:
            tally.start()
        started = time.perf_counter()
        done = await drive(driver, path, workers, jobs, payloads, latencies)
        seconds = time.perf_counter() - started
        counts = None if tally is None else tally.stop(done)
        stored = await driver.stored()
        expected = 0 if consuming else jobs
        if done != jobs or stored != expected:
            raise RuntimeError(f"{path}: {done} of {jobs} jobs went through and {stored} are stored, not {expected}")
    finally:
        await driver.close()
    return Sample(jobs=done, seconds=seconds, latencies_us=tuple(latencies)), counts
