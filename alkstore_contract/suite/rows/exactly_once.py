"""Row exactly_once (contract C1, C3, C4, P1, P2): each job handed out once, its lease judged by its own stamp.

Part of the suite.

Legs: concurrent tasks on one store (every engine); separate stores on one
location (``shared_location``); separate OS processes (``multi_process``).
Every handout and ack is recorded and the history checker classifies every job:
the row fails on any lost, duplicated (two overlapping unexpired leases) or
unexpected job, naming them.

Two legs, on every clock, open handles of one queue with different visibility
timeouts (1 tick and 100 ticks): a job's lease is ``now + its own stamp``
(C3) whichever handle claims it, so a short-timeout handle never takes a job
whose long lease still runs (C4), and a long-timeout handle takes a job whose
short lease lapsed (C1). An engine that judges a lease by the claiming
handle's timeout instead of the job's stamped lease fails them.

When it fails, check that a claim picks and marks its rows in ONE atomic step
(a single ``UPDATE … RETURNING``, ``FOR UPDATE SKIP LOCKED``, or a critical
section with no ``await`` in it), that a second store or process cannot see a
row as claimable between another's read and write, and that an ack deletes.
For the mixed-timeout legs: that a claim compares the stored
``lease_expires_at`` with now, never ``claimed_at`` plus the claiming handle's
visibility timeout, and stamps the lease from the job's own timeout.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.adapter import CAPABILITY_CLAUSES, Capability
from alkstore_contract.suite.checks import expect, expect_equal, expect_ids, expect_nothing_handed_out
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.history import Handout, Release, check_history, handout_from_event, handout_from_job
from alkstore_contract.suite.processes import finish, spawn_drainers
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


MIXED_LONG_UNITS = 100
"""The long handle's visibility timeout in ticks: far beyond anything the row waits for."""


async def _claim_stamped(ctx: RowContext, queue: Queue, worker: str, job_id: JobId, lease_s: float) -> datetime:
    """Claim exactly ``job_id`` through ``queue``; its lease must be now + ``lease_s`` (the job's stamp, C3)."""
    handles, before, after = await ctx.timed(queue.claim_batch(worker, 2))
    expect_ids(handles, [job_id], "C3", f"the ids claim_batch({worker!r}, 2) handed out")
    lease = handles[0].job.lease_expires_at
    ctx.expect_during(
        None if lease is None else lease - timedelta(seconds=lease_s),
        before,
        after,
        "C3",
        f"lease_expires_at - {lease_s} s (the job's stamped timeout) of job {job_id!r} claimed through a handle "
        f"with visibility_timeout_s={queue.opts.visibility_timeout_s}",
    )
    assert lease is not None
    return lease


@dataclass
class MixedLease:
    """One job of queue ``name``, enqueued through one of its two handles and claimed through the other.

    The handles differ only in their visibility timeout (1 tick, ``MIXED_LONG_UNITS`` ticks), so what the
    job's lease does next shows whose timeout decides: the job's stamp (C3), never the claimer's.
    """

    short: Queue
    long: Queue
    job_id: JobId
    lease: datetime
    """The claim's ``lease_expires_at``, checked to be the claim's instant plus the job's stamp."""

    @classmethod
    async def claimed(cls, ctx: RowContext, name: str, *, stamped_long: bool) -> MixedLease:
        """Enqueue through the long handle and claim through the short one (``stamped_long``), or the reverse."""
        store = await ctx.open_store()
        unit = ctx.unit_s
        short = store.queue(name, QueueOpts(visibility_timeout_s=unit))
        long = store.queue(name, QueueOpts(visibility_timeout_s=MIXED_LONG_UNITS * unit))
        if stamped_long:
            job_id = await long.enqueue({"lease": f"{MIXED_LONG_UNITS} ticks"})
            lease = await _claim_stamped(ctx, short, "holder", job_id, MIXED_LONG_UNITS * unit)
        else:
            job_id = await short.enqueue({"lease": "1 tick"})
            lease = await _claim_stamped(ctx, long, "holder", job_id, unit)
        return cls(short, long, job_id, lease)


async def _leg_long_lease_short_claimer(ctx: RowContext) -> None:
    """C4: a job leased for 100 ticks is not handed out by a 1-tick handle of its queue after 1 tick."""
    mixed = await MixedLease.claimed(ctx, "exactly-once-long-lease", stamped_long=True)
    await ctx.advance(ctx.unit_s + ctx.tolerance_s)
    expect_nothing_handed_out(
        await mixed.short.claim_batch("short-claimer", 2),
        "C4",
        when=f"through a handle with a 1-tick visibility timeout, 1 tick after job {mixed.job_id!r} was claimed "
        f"under its own {MIXED_LONG_UNITS}-tick lease",
        demands="no second lease while the job's own lease runs (the job's stamp decides, not the claimer's)",
    )


async def _leg_short_lease_long_claimer(ctx: RowContext) -> None:
    """C1: a job leased for 1 tick is reclaimable through a 100-tick handle of its queue once that tick passed."""
    mixed = await MixedLease.claimed(ctx, "exactly-once-short-lease", stamped_long=False)
    job_id, lease = mixed.job_id, mixed.lease
    await ctx.wait_until(lease)
    got = await mixed.long.claim_batch("long-claimer", 2)
    expect(
        [h.job.id for h in got] == [job_id],
        "C1",
        did=f"handed out {[h.job.id for h in got]} through a handle with a {MIXED_LONG_UNITS}-tick visibility "
        f"timeout once job {job_id!r}'s own 1-tick lease (to {lease}) had lapsed",
        demands="the lapsed job (its attempts left), whichever handle claims: the job's stamped lease decides",
    )


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
    processes = await spawn_drainers(
        ctx, location, "exactly-once-procs", LONG_LEASE_S, PROCESSES, STORES_PER_PROCESS, batch=lambda p: 1 + p % 2
    )
    events = [event for events in await asyncio.gather(*(finish(p) for p in processes)) for event in events]
    recorder = Recorder()
    recorder.handouts, recorder.releases = _handouts_from_events(events)
    _verdict(f"{PROCESSES} OS processes × {STORES_PER_PROCESS} stores", "P2", enqueued, recorder)
    expect_equal(await ctx.stored_jobs(location), 0, "P2", "jobs left at the location after every job was acked")


async def exactly_once(ctx: RowContext) -> None:
    """C3 stamps on every handout; C4 under tasks, stores (P1), processes (P2); C1/C4 under mixed timeouts."""
    await ctx.leg("one store", ("C3", "C4"), _leg_one_store)
    await ctx.leg("long lease, short-timeout claimer", ("C4", "C3"), _leg_long_lease_short_claimer)
    await ctx.leg("short lease, long-timeout claimer", ("C1", "C3"), _leg_short_lease_long_claimer)
    for capability, name, leg in (
        (Capability.SHARED_LOCATION, "stores on one location", _leg_shared_location),
        (Capability.MULTI_PROCESS, "processes", _leg_processes),
    ):
        clause_id = CAPABILITY_CLAUSES[capability]
        if ctx.has(capability):
            await ctx.leg(name, (clause_id, "C4"), leg)
        else:
            ctx.not_exercised((clause_id,), f"the engine does not declare {capability}", leg=name)


ROW = row("exactly_once", ("C1", "C3", "C4", "P1", "P2"))(exactly_once)
