"""Row exactly_once (contract C3, C4, P1, P2): many workers drain one queue, each job handed out once.

Part of the suite.

Legs: concurrent tasks on one store (every engine); separate stores on one
location (``shared_location``); separate OS processes (``multi_process``).
Every handout and ack is recorded and the history checker classifies every job:
the row fails on any lost, duplicated (two overlapping unexpired leases) or
unexpected job, naming them.

When it fails, check that a claim picks and marks its rows in ONE atomic step
(a single ``UPDATE … RETURNING``, ``FOR UPDATE SKIP LOCKED``, or a critical
section with no ``await`` in it), that a second store or process cannot see a
row as claimable between another's read and write, and that an ack deletes.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.adapter import CAPABILITY_CLAUSES, Capability
from alkstore_contract.suite.checks import expect, expect_equal
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.history import Handout, Release, check_history, handout_from_event, handout_from_job
from alkstore_contract.suite.processes import finish, spawn_worker
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

WORKERS = 6
JOBS_PER_WORKER = 40
PROCESSES = 3
STORES_PER_PROCESS = 2
LONG_LEASE_S = 3600.0
"""No lease may lapse during a drain: every second handout is then a duplicate."""


class Recorder:
    """Collects the history of one drain inside this process.

    C3 stamp problems are kept, not raised at once, so the row reports the C4
    verdict (lost, duplicated) first: a non-atomic claim shows up as both, and
    the duplicate is the headline.
    """

    def __init__(self) -> None:
        self.handouts: list[Handout] = []
        self.releases: list[Release] = []
        self.stamp_problems: list[str] = []

    def check_stamps(self, job: Job, worker: str, lease: datetime, tolerance_s: float) -> None:
        """C3: a first claim is processing, claimed by ``worker``, attempts 1, leased until ``lease``."""
        if job.state != JobState.PROCESSING or job.claimed_by != worker or job.attempts != 1:
            self.stamp_problems.append(
                f"job {job.id} as state={job.state}, claimed_by={job.claimed_by!r}, attempts={job.attempts} "
                f"(worker {worker!r})"
            )
        slack = timedelta(seconds=tolerance_s)
        if job.lease_expires_at is None or not lease - slack <= job.lease_expires_at <= lease + slack:
            self.stamp_problems.append(f"job {job.id} with lease_expires_at={job.lease_expires_at} (expected {lease})")


async def _drain(ctx: RowContext, queue: Queue, worker: str, batch: int, recorder: Recorder) -> None:
    sequence = 0
    while True:
        before = ctx.now()
        handles = await queue.claim_batch(worker, batch)
        after = ctx.now()
        if not handles:
            return
        for handle in handles:
            sequence += 1
            claim = f"{worker}#{sequence}"
            job = handle.job
            midpoint = before + (after - before) / 2
            recorder.check_stamps(
                job,
                worker,
                midpoint + timedelta(seconds=LONG_LEASE_S),
                ctx.tolerance_s + (after - before).total_seconds(),
            )
            if job.lease_expires_at is None:
                continue
            recorder.handouts.append(
                handout_from_job(job.id, worker, claim, job.lease_expires_at, job.visibility_timeout_s, job.attempts)
            )
            acked = await handle.ack()
            recorder.releases.append(Release(job.id, claim, "ack", acked))
            await asyncio.sleep(0)


def _verdict(leg: str, clause: str, enqueued: list[JobId], recorder: Recorder) -> None:
    verdict = check_history(enqueued, recorder.handouts, recorder.releases)
    expect(
        verdict.ok and verdict.handouts == len(enqueued),
        clause,
        did=f"({leg}) {verdict.describe()}",
        demands=f"each of the {len(enqueued)} jobs handed out exactly once and none lost",
    )
    problems = recorder.stamp_problems
    expect(
        not problems,
        "C3",
        did=f"({leg}) handed out {'; '.join(problems[:5])}"
        + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""),
        demands="a first claim: state processing, claimed_by the worker, attempts 1, lease = now + the stamp",
    )


async def _fill(queue: Queue, count: int) -> list[JobId]:
    return list(await queue.enqueue_many([{"job": i} for i in range(count)]))


async def _leg_one_store(ctx: RowContext) -> None:
    store = await ctx.open_store()
    queue = store.queue("exactly-once-tasks", QueueOpts(visibility_timeout_s=LONG_LEASE_S))
    enqueued = await _fill(queue, WORKERS * JOBS_PER_WORKER)
    recorder = Recorder()
    await asyncio.gather(*(_drain(ctx, queue, f"task{i}", 1 + i % 3, recorder) for i in range(WORKERS)))
    _verdict("tasks sharing one store", "C4", enqueued, recorder)
    expect_equal(await ctx.stored_jobs(), 0, "C4", "jobs left at the location after every job was acked")


async def _leg_shared_location(ctx: RowContext) -> None:
    location = await ctx.new_location()
    stores = [await ctx.open_store(location) for _ in range(WORKERS)]
    opts = QueueOpts(visibility_timeout_s=LONG_LEASE_S)
    enqueued = await _fill(stores[0].queue("exactly-once-stores", opts), WORKERS * JOBS_PER_WORKER)
    recorder = Recorder()
    await asyncio.gather(
        *(
            _drain(ctx, store.queue("exactly-once-stores", opts), f"store{i}", 1 + i % 3, recorder)
            for i, store in enumerate(stores)
        )
    )
    _verdict("separate stores on one location", "P1", enqueued, recorder)
    expect_equal(await ctx.stored_jobs(location), 0, "P1", "jobs left at the location after every job was acked")


def _handouts_from_events(events: list[dict[str, Any]]) -> tuple[list[Handout], list[Release]]:
    handouts: list[Handout] = []
    releases: list[Release] = []
    for event in events:
        if event["event"] == "handout":
            handouts.append(handout_from_event(event))
        elif event["event"] == "release":
            releases.append(Release(event["job"], event["claim"], event["op"], bool(event["ok"])))
    return handouts, releases


async def _leg_processes(ctx: RowContext) -> None:
    location = await ctx.new_location()
    store = await ctx.open_store(location)
    workers = PROCESSES * STORES_PER_PROCESS
    enqueued = await _fill(
        store.queue("exactly-once-procs", QueueOpts(visibility_timeout_s=LONG_LEASE_S)), workers * JOBS_PER_WORKER
    )
    processes = [
        await spawn_worker(
            ctx,
            "drain",
            location=location,
            queue="exactly-once-procs",
            opts={"visibility_timeout_s": LONG_LEASE_S},
            stores=STORES_PER_PROCESS,
            tasks_per_store=1,
            batch=1 + p % 2,
            worker_prefix=f"proc{p}",
        )
        for p in range(PROCESSES)
    ]
    events = [event for events in await asyncio.gather(*(finish(p) for p in processes)) for event in events]
    recorder = Recorder()
    recorder.handouts, recorder.releases = _handouts_from_events(events)
    _verdict(f"{PROCESSES} OS processes × {STORES_PER_PROCESS} stores", "P2", enqueued, recorder)
    expect_equal(await ctx.stored_jobs(location), 0, "P2", "jobs left at the location after every job was acked")


async def exactly_once(ctx: RowContext) -> None:
    """C3 stamps on every handout; C4 under concurrent tasks, stores (P1) and processes (P2)."""
    await ctx.leg("one store", ("C3", "C4"), _leg_one_store)
    for capability, name, leg in (
        (Capability.SHARED_LOCATION, "stores on one location", _leg_shared_location),
        (Capability.MULTI_PROCESS, "processes", _leg_processes),
    ):
        clause_id = CAPABILITY_CLAUSES[capability]
        if ctx.has(capability):
            await ctx.leg(name, (clause_id, "C4"), leg)
        else:
            ctx.not_exercised((clause_id,), f"the engine does not declare {capability}", leg=name)


ROW = row("exactly_once", ("C3", "C4", "P1", "P2"))(exactly_once)
