"""Row crash_recovery (contract C1, C3, C7, X2): a worker process is killed holding leases.

Part of the suite.

Two worker processes (``worker.py hold``) claim jobs and are killed with
SIGKILL while holding them: one on a queue with ``max_attempts=3`` (4 of its 6
jobs held), one on a queue with ``max_attempts=1`` (all 3 held, each on its
last attempt). The parent then checks, on its own store:

- before the leases lapse: the held jobs show the dead worker's claim
  (processing, claimed_by, lease, attempts 1), are NOT claimable (C1) — the
  unheld ones are — and a sweep moves none of them (X2);
- under the manual clock, at 1 µs before the lease's end nothing is
  claimable yet, at the lease's end exactly the leases have lapsed (C1:
  ``lease_expires_at <= now``);
- after the lapse: the held jobs of the first queue are claimable again, each
  with one attempt consumed (attempts 2), a fresh claimant and a lease of
  ``now + visibility_timeout_s`` (C1, C3), and a sweep leaves them alone (X2);
  the jobs killed on their last attempt are never handed out again (C7) and a
  sweep moves them to dead with ``"max attempts exceeded"`` and returns their
  count, once (X2);
- over the whole history (the dead workers' handouts, the parent's claims,
  reclaims and acks) no job is lost, duplicated or unexpected.

When it fails, check the claim's predicate: a processing row whose
``lease_expires_at <= now`` and whose ``attempts < max_attempts`` is claimable
exactly like a ready one (not only ``state = 'ready'``), a reclaim sets
``attempts = attempts + 1`` (not 1, not unchanged) and writes a fresh claimant,
token and lease; a lapsed lease with ``attempts >= max_attempts`` is excluded
from the claim and moved to dead by ``sweep_expired``; and nothing about a
claim may depend on the claiming process staying alive.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.checks import expect, expect_equal, expect_instant
from alkstore_contract.suite.expected import LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.suite.harness import HostTooSlow, RowContext
from alkstore_contract.suite.history import Handout, Release, check_history, handout_from_event, handout_from_job
from alkstore_contract.suite.processes import read_events, spawn_worker
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import JobId, JobState, QueueOpts

VT_UNITS = 3
"""The visibility timeout, in ``ctx.unit_s``: long enough to check before it lapses, short to wait out."""
RETRYING = "crash-recovery"
LAST_TRY = "crash-recovery-last-attempt"
RETRYING_JOBS = 6
HELD = 4
LAST_TRY_JOBS = 3
RESCUER = "rescuer"
HOLD_TIMEOUT_S = 60.0
ONE_US = timedelta(microseconds=1)


class Crashed:
    """A worker process that claimed jobs and was killed holding them."""

    def __init__(self, worker: str, events: list[dict[str, Any]], between: tuple[datetime, datetime]) -> None:
        self.worker = worker
        self.between = between
        """The row's clock before the spawn and after the claims were read: the child's claim lies in between."""
        self.events = [e for e in events if e["event"] == "handout"]
        self.handouts = [handout_from_event(e) for e in self.events]

    @property
    def ids(self) -> list[JobId]:
        return [h.job_id for h in self.handouts]

    def lease(self, job_id: JobId) -> datetime:
        return next(h.lease_expires_at for h in self.handouts if h.job_id == job_id)


async def _crash_holding(ctx: RowContext, queue: str, opts: QueueOpts, n: int, worker: str) -> Crashed:
    """Start a ``hold`` worker, wait until it holds its claims, then SIGKILL it and reap it."""
    spawned = ctx.now()
    process = await spawn_worker(
        ctx,
        "hold",
        queue=queue,
        opts={"visibility_timeout_s": opts.visibility_timeout_s, "max_attempts": opts.max_attempts},
        n=n,
        worker_prefix=worker,
    )
    try:
        events = await asyncio.wait_for(read_events(process, until="holding"), HOLD_TIMEOUT_S)
        holding = ctx.now()
    finally:
        stderr = await _kill(process)
    if not events or events[-1]["event"] != "holding":
        raise RuntimeError(f"hold worker {worker} exited with {process.returncode} before holding:\n{stderr}")
    return Crashed(worker, events, (spawned, holding))


async def _kill(process: asyncio.subprocess.Process) -> str:
    """SIGKILL, reap, drain both pipes (so their transports close inside this event loop); the stderr."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()
    assert process.stdout is not None
    assert process.stderr is not None
    _, stderr = await asyncio.gather(process.stdout.read(), process.stderr.read())
    return stderr.decode(errors="replace")[-4000:]


def _check_handouts(ctx: RowContext, crashed: Crashed, candidates: list[JobId], n: int, vt: float) -> None:
    """The dead worker's claims: n distinct jobs of its queue, first attempts, leases of now + vt (C3)."""
    expect(
        len(set(crashed.ids)) == n and set(crashed.ids) <= set(candidates),
        "C3",
        did=f"handed worker {crashed.worker} (claim_batch of {n}) the jobs {crashed.ids}",
        demands=f"{n} distinct jobs of its queue ({candidates})",
    )
    for handout in crashed.handouts:
        expect_equal(handout.attempts, 1, "C3", f"attempts of job {handout.job_id} on its first claim")
        start, end = crashed.between
        expect_instant(
            handout.lease_expires_at,
            start + (end - start) / 2 + timedelta(seconds=vt),
            "C3",
            f"lease_expires_at of job {handout.job_id} claimed by the worker process {crashed.worker}",
            tolerance_s=ctx.tolerance_s + (end - start).total_seconds() / 2,
        )


async def _check_held(queue: Queue, crashed: Crashed, attempts: int) -> None:
    """Every job of the dead worker still shows its claim: the claim outlived the process."""
    for job_id in crashed.ids:
        job = await queue.get_job(job_id)
        expect(
            job is not None
            and job.state == JobState.PROCESSING
            and job.claimed_by == crashed.worker
            and job.lease_expires_at == crashed.lease(job_id)
            and job.attempts == attempts,
            "C3",
            did=f"shows job {job_id}, claimed by the killed worker {crashed.worker}, as {job!r}",
            demands=f"processing, claimed_by {crashed.worker!r}, lease_expires_at {crashed.lease(job_id)}, "
            f"attempts {attempts} until the lease lapses and someone reclaims it",
        )


async def _claim_all(queue: Queue) -> list[JobHandle]:
    return await queue.claim_batch(RESCUER, 2 * RETRYING_JOBS)


async def _check_nothing_claimable(queue: Queue, moment: str, clause: str, demands: str) -> None:
    handles = await _claim_all(queue)
    expect(
        not handles,
        clause,
        did=f"handed out {[h.job.id for h in handles]} from queue {queue.name!r} {moment}",
        demands=demands,
    )


async def _sweep(queue: Queue, expected: int, moment: str) -> None:
    moved = await queue.sweep_expired()
    expect_equal(moved, expected, "X2", f"sweep_expired() of queue {queue.name!r} {moment}")


async def _before_lapse(
    ctx: RowContext, retrying: Queue, last_try: Queue, held: Crashed, doomed: Crashed, ids: list[JobId]
) -> list[tuple[Handout, JobHandle]]:
    """While the dead workers' leases run: only the unheld jobs are claimable, and the sweep moves nothing."""
    await _check_held(retrying, held, 1)
    await _check_held(last_try, doomed, 1)
    handles = await _claim_all(retrying)
    _still_before_lapse(ctx, held, doomed)
    free = [job_id for job_id in ids if job_id not in held.ids]
    expect(
        sorted(map(repr, (h.job.id for h in handles))) == sorted(map(repr, free)),
        "C1",
        did=f"handed out {[h.job.id for h in handles]} while a killed worker's unexpired leases held {held.ids}",
        demands=f"exactly the unheld ready jobs {free}: a processing job is claimable only once its lease lapsed",
    )
    await _check_nothing_claimable(
        last_try, "while a killed worker's leases ran", "C1", "nothing: every job is held under an unexpired lease"
    )
    await _sweep(retrying, 0, "before any lease lapsed")
    await _sweep(last_try, 0, "before any lease lapsed")
    _still_before_lapse(ctx, held, doomed)
    claims = [
        (
            handout_from_job(
                h.job.id, RESCUER, f"{RESCUER}#free{i}", _lease(h), h.job.visibility_timeout_s, h.job.attempts
            ),
            h,
        )
        for i, h in enumerate(handles)
    ]
    for _, handle in claims:
        expect(
            await handle.ack(),
            "C1",
            did=f"returned False for the ack of a fresh claim of job {handle.job.id}",
            demands="the holder of a live claim to finish its job",
        )
    return claims


def _still_before_lapse(ctx: RowContext, held: Crashed, doomed: Crashed) -> None:
    """On the real clock, refuse to judge "not claimable yet" once the first lease may have run out."""
    first_lease = min(h.lease_expires_at for h in held.handouts + doomed.handouts)
    if not ctx.manual and ctx.now() >= first_lease - timedelta(seconds=ctx.tolerance_s):
        raise HostTooSlow(
            f"the checks before the lapse ran too late to mean anything (now {ctx.now()}, first lease ends "
            f"{first_lease}); this host is too slow for a visibility timeout of {VT_UNITS} × {ctx.unit_s} s: "
            "rerun with a longer --alkstore-tick"
        )


def _lease(handle: JobHandle) -> datetime:
    lease = handle.job.lease_expires_at
    expect(lease is not None, "C3", did=f"gave the claim of job {handle.job.id} no lease", demands="a lease")
    assert lease is not None
    return lease


async def _let_leases_lapse(ctx: RowContext, retrying: Queue, last_try: Queue, held: Crashed, doomed: Crashed) -> None:
    """Move time past the dead workers' leases: to the exact instant under the manual clock."""
    last_lease = max(h.lease_expires_at for h in held.handouts + doomed.handouts)
    if ctx.manual:
        await ctx.advance((last_lease - ctx.now() - ONE_US).total_seconds())
        demands = "nothing claimable 1 µs before the leases end: a lease lapses at lease_expires_at <= now"
        await _check_nothing_claimable(retrying, "1 µs before the killed worker's leases end", "C1", demands)
        await _check_nothing_claimable(last_try, "1 µs before the killed worker's leases end", "C1", demands)
        await ctx.advance(ONE_US.total_seconds())
    else:
        await ctx.advance(max(0.0, (last_lease - ctx.now()).total_seconds()) + ctx.tolerance_s)


async def _reclaim(ctx: RowContext, retrying: Queue, held: Crashed, vt: float) -> list[tuple[Handout, JobHandle]]:
    """After the lapse: the dead worker's jobs come back, each with one more attempt and a new lease (C1, C3)."""
    await _sweep(retrying, 0, "after the lapse of leases with attempts to spare (1 of 3 used)")
    await _check_held(retrying, held, 1)
    before = ctx.now()
    handles = await _claim_all(retrying)
    after = ctx.now()
    got = [h.job.id for h in handles]
    expect(
        sorted(map(repr, got)) == sorted(map(repr, held.ids)),
        "C1",
        did=f"reclaimed {got} after the killed worker's leases on {held.ids} lapsed",
        demands="every job whose lease lapsed (attempts 1 of 3) claimable again, each exactly once",
    )
    for handle in handles:
        job = handle.job
        expect(
            job.state == JobState.PROCESSING and job.claimed_by == RESCUER and job.attempts == 2,
            "C3",
            did=f"reclaimed job {job.id} as state={job.state}, claimed_by={job.claimed_by!r}, attempts={job.attempts}",
            demands=f"processing, claimed_by {RESCUER!r}, attempts 2: a reclaim consumes an attempt",
        )
        expect_instant(
            _lease(handle),
            before + (after - before) / 2 + timedelta(seconds=vt),
            "C3",
            f"lease_expires_at of reclaimed job {job.id}",
            tolerance_s=ctx.tolerance_s + (after - before).total_seconds(),
        )
    return [
        (handout_from_job(h.job.id, RESCUER, f"{RESCUER}#re{i}", _lease(h), vt, h.job.attempts), h)
        for i, h in enumerate(handles)
    ]


async def _dead_letter(ctx: RowContext, last_try: Queue, doomed: Crashed) -> None:
    """Jobs killed on their last attempt: never handed out again (C7); the sweep makes them dead, once (X2)."""
    await _check_nothing_claimable(
        last_try,
        "after leases lapsed on jobs at attempts 1 of max_attempts 1",
        "C7",
        "a lapsed lease with attempts >= max_attempts never handed out again",
    )
    await _check_held(last_try, doomed, 1)
    before = ctx.now()
    await _sweep(last_try, len(doomed.ids), "after leases lapsed on jobs at attempts 1 of max_attempts 1")
    after = ctx.now()
    for job_id in doomed.ids:
        job = await last_try.get_job(job_id)
        expect(
            job is not None
            and job.state == JobState.DEAD
            and job.last_error == LAST_ERROR_MAX_ATTEMPTS
            and job.attempts == 1
            and job.lease_expires_at is None
            and job.claimed_by is None,
            "X2",
            did=f"left job {job_id} (lapsed on its last attempt) after the sweep as {job!r}",
            demands=f"dead, last_error {LAST_ERROR_MAX_ATTEMPTS!r}, attempts 1, lease and claimant cleared",
        )
        assert job is not None
        expect_instant(
            job.died_at,
            before + (after - before) / 2,
            "X2",
            f"died_at of job {job_id} moved to dead by the sweep",
            tolerance_s=ctx.tolerance_s + (after - before).total_seconds(),
        )
    await _sweep(last_try, 0, "a second time (its dead letters already moved)")
    await _check_nothing_claimable(last_try, "after its jobs were dead-lettered", "C7", "no dead job handed out")


async def crash_recovery(ctx: RowContext) -> None:
    """C1/C3/C7/X2 with workers in other OS processes killed by SIGKILL while holding leases."""
    vt = round(VT_UNITS * ctx.unit_s, 6)
    store = await ctx.open_store()
    retrying_opts = QueueOpts(visibility_timeout_s=vt, max_attempts=3)
    last_try_opts = QueueOpts(visibility_timeout_s=vt, max_attempts=1)
    retrying = store.queue(RETRYING, retrying_opts)
    last_try = store.queue(LAST_TRY, last_try_opts)
    retrying_ids = list(await retrying.enqueue_many([{"n": i} for i in range(RETRYING_JOBS)]))
    last_try_ids = list(await last_try.enqueue_many([{"last": i} for i in range(LAST_TRY_JOBS)]))

    held, doomed = await asyncio.gather(
        _crash_holding(ctx, RETRYING, retrying_opts, HELD, "crashed-a"),
        _crash_holding(ctx, LAST_TRY, last_try_opts, LAST_TRY_JOBS, "crashed-b"),
    )
    _check_handouts(ctx, held, retrying_ids, HELD, vt)
    _check_handouts(ctx, doomed, last_try_ids, LAST_TRY_JOBS, vt)

    free = await _before_lapse(ctx, retrying, last_try, held, doomed, retrying_ids)
    await _let_leases_lapse(ctx, retrying, last_try, held, doomed)
    reclaimed = await _reclaim(ctx, retrying, held, vt)
    await _dead_letter(ctx, last_try, doomed)

    releases: list[Release] = []
    for index, (_, handle) in enumerate(free):
        releases.append(Release(handle.job.id, f"{RESCUER}#free{index}", "ack", True))
    for index, (_, handle) in enumerate(reclaimed):
        acked = await handle.ack()
        expect(
            acked,
            "C1",
            did=f"returned False for the rescuer's ack of reclaimed job {handle.job.id}",
            demands="the holder of the reclaim to finish the job",
        )
        releases.append(Release(handle.job.id, f"{RESCUER}#re{index}", "ack", acked))
    verdict = check_history(
        retrying_ids + last_try_ids,
        held.handouts + doomed.handouts + [h for h, _ in free] + [h for h, _ in reclaimed],
        releases,
        still_present=last_try_ids,
    )
    expect(
        verdict.ok and sorted(map(repr, verdict.recovered)) == sorted(map(repr, held.ids)),
        "C1",
        did=f"produced the history: {verdict.describe()}",
        demands=f"nothing lost or duplicated across the crash, and exactly the killed worker's jobs {held.ids} "
        "recovered after their leases lapsed",
    )
    expect_equal(await ctx.stored_jobs(), LAST_TRY_JOBS, "C1", "jobs stored at the end (the dead letters only)")


ROW = row("crash_recovery", ("C1", "C3", "C7", "X2"), requires=(Capability.MULTI_PROCESS,))(crash_recovery)
