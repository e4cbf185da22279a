"""Leg "close and reopen" of row durability (contract P3): every committed write reads back after a reopen.

Part of the suite.

A store enqueues jobs, acks some, retries some (with an error and a delay),
dead-letters one by an exhausting retry, fails one, cancels some (ready,
processing, and the newest job), and leaves two processing. It is closed and a
new store is opened on the location: every surviving job must read back exactly
as it did before the close (state, attempts, run_at, last_error, lease,
claimed_by, died_at, stamps, payload), every acked or cancelled job must be
gone — also after a new enqueue on the reopened store, so a reused id cannot
bring it back — and the oracle must count the survivors and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from alkstore_contract.suite.checks import expect, expect_equal, expect_instant
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

CLAUSE = "P3"
LONG_LEASE_S = 3600.0
"""No lease lapses during the leg, so a processing job must come back processing."""
WORKER = "durability-worker"

GONE_ROLES = ("ack", "cancel-processing", "cancel-ready", "cancel-newest")
"""Roles whose job must not exist after the reopen."""
CLAIMED_ROLES = ("ack", "ack", "retry", "fail", "cancel-processing", "hold", "hold")
"""The jobs leg (a) enqueues in one batch and claims, one role each (plus ``exhaust``, with max_attempts=1)."""
RETRY_ERROR = "transient: upstream timed out"
EXHAUST_ERROR = "gave up: last attempt"
FAIL_ERROR = "broken: bad input"


@dataclass
class Planted:
    """One job of leg (a): its role, and what the row knows it must look like after the reopen."""

    role: str
    job_id: JobId
    handle: JobHandle | None = None
    retried_between: tuple[datetime, datetime] | None = None
    """The row's clock just before and after the retry call (the engine's now lies in between)."""


async def _settle(ctx: RowContext, queue: Queue, planted: Planted, retry_delay_s: float) -> None:
    """Do to a claimed job what its role says; every op must report success."""
    handle = planted.handle
    assert handle is not None
    if planted.role == "ack":
        done = await handle.ack()
    elif planted.role == "retry":
        before = ctx.now()
        done = await handle.retry(error=RETRY_ERROR, delay=retry_delay_s)
        planted.retried_between = (before, ctx.now())
    elif planted.role == "exhaust":
        done = await handle.retry(error=EXHAUST_ERROR)
    elif planted.role == "fail":
        done = await handle.fail(error=FAIL_ERROR)
    elif planted.role == "cancel-processing":
        done = await queue.cancel(planted.job_id)
    else:
        return
    expect(
        done,
        CLAUSE,
        did=f"returned False for the {planted.role} of job {planted.job_id} on a fresh claim",
        demands="the write to succeed before it is checked for durability",
    )


def _check_survivor(ctx: RowContext, planted: Planted, before: Job | None, after: Job, retry_delay_s: float) -> None:
    """One surviving job after the reopen: as it was before the close, and as its role demands."""
    where = f"job {planted.job_id} ({planted.role}) after close and reopen"
    expect(
        after == before,
        CLAUSE,
        did=f"read back {where} as {after!r}, but before the close it was {before!r}",
        demands="every committed write intact after a reopen",
    )
    if planted.role == "retry":
        expect(
            after.state == JobState.READY and after.last_error == RETRY_ERROR and after.attempts == 1,
            CLAUSE,
            did=f"read back {where} as state={after.state}, last_error={after.last_error!r}, attempts={after.attempts}",
            demands=f"the committed retry intact: ready, last_error {RETRY_ERROR!r}, attempts 1",
        )
        assert planted.retried_between is not None
        start, end = planted.retried_between
        expect_instant(
            after.run_at,
            start + (end - start) / 2 + timedelta(seconds=retry_delay_s),
            CLAUSE,
            f"run_at of {where}",
            tolerance_s=ctx.tolerance_s + (end - start).total_seconds(),
        )
    elif planted.role in ("exhaust", "fail"):
        error = EXHAUST_ERROR if planted.role == "exhaust" else FAIL_ERROR
        expect(
            after.state == JobState.DEAD and after.last_error == error and after.died_at is not None,
            CLAUSE,
            did=f"read back {where} as state={after.state}, last_error={after.last_error!r}, died_at={after.died_at}",
            demands=f"the committed dead letter intact: dead, last_error {error!r}, died_at set",
        )
    elif planted.role == "hold":
        assert planted.handle is not None
        claimed = planted.handle.job
        expect(
            after.state == JobState.PROCESSING
            and after.claimed_by == WORKER
            and after.lease_expires_at == claimed.lease_expires_at
            and after.attempts == 1,
            CLAUSE,
            did=f"read back {where} as state={after.state}, claimed_by={after.claimed_by!r}, "
            f"lease_expires_at={after.lease_expires_at}, attempts={after.attempts}",
            demands=f"the committed claim intact: processing, claimed_by {WORKER!r}, "
            f"lease_expires_at {claimed.lease_expires_at}, attempts 1",
        )
    else:
        expect(
            after.state == JobState.READY and after.attempts == 0 and after.last_error is None,
            CLAUSE,
            did=f"read back {where} as state={after.state}, attempts={after.attempts}",
            demands="the committed enqueue intact: ready, never attempted",
        )


async def leg_close_and_reopen(ctx: RowContext) -> None:
    """Leg (a): a store writes every kind of op, closes; a reopened store must read back exactly that."""
    location = await ctx.new_location()
    store = await ctx.open_store(location)
    opts = QueueOpts(
        visibility_timeout_s=LONG_LEASE_S, max_attempts=3, backoff_base_s=7.5, dead_letter_retention_s=86_400
    )
    name = "durability-close"
    queue = store.queue(name, opts)
    retry_delay_s = 100 * ctx.unit_s

    ids = await queue.enqueue_many([{"role": r, "n": i} for i, r in enumerate(CLAIMED_ROLES)])
    planted = [Planted(r, job_id) for r, job_id in zip(CLAIMED_ROLES, ids, strict=True)]
    planted.append(Planted("exhaust", await queue.enqueue({"role": "exhaust"}, max_attempts=1)))
    by_id = {p.job_id: p for p in planted}
    handles = await queue.claim_batch(WORKER, len(planted))
    expect_equal(
        sorted(map(repr, (h.job.id for h in handles))),
        sorted(map(repr, by_id)),
        CLAUSE,
        "the ids a claim_batch of every ready job returned (setup)",
    )
    for handle in handles:
        by_id[handle.job.id].handle = handle
    for job in planted:
        await _settle(ctx, queue, job, retry_delay_s)

    planted.append(Planted("ready", await queue.enqueue({"role": "ready", "text": "ünïcode ✓", "x": [1.5, None]})))
    planted.append(
        Planted("ready", await queue.enqueue({"role": "later"}, delay=50 * ctx.unit_s, expires=500 * ctx.unit_s))
    )
    planted.append(Planted("ready", await queue.enqueue({"role": "urgent"}, priority=9)))
    cancel_ready = Planted("cancel-ready", await queue.enqueue({"role": "cancel-ready"}))
    newest = Planted("cancel-newest", await queue.enqueue({"role": "cancel-newest"}))
    planted += [cancel_ready, newest]
    for job in (cancel_ready, newest):
        expect(
            await queue.cancel(job.job_id),
            CLAUSE,
            did=f"returned False for cancel({job.job_id!r}) of a ready job",
            demands="the write to succeed before it is checked for durability",
        )

    snapshots = {p.job_id: await queue.get_job(p.job_id) for p in planted}
    survivors = [p for p in planted if p.role not in GONE_ROLES]
    await store.close()

    reopened = await ctx.open_store(location)
    queue = reopened.queue(name, opts)
    for job in planted:
        after = await queue.get_job(job.job_id)
        if job.role in GONE_ROLES:
            expect(
                after is None,
                CLAUSE,
                did=f"brought back job {job.job_id} ({job.role}, committed before the close) as {after!r}",
                demands="an acked or cancelled job to stay gone after a reopen",
            )
        else:
            expect(
                after is not None,
                CLAUSE,
                did=f"lost job {job.job_id} ({job.role}) across close and reopen",
                demands="every committed job intact after a reopen",
            )
            assert after is not None
            _check_survivor(ctx, job, snapshots[job.job_id], after, retry_delay_s)
    expect_equal(await ctx.stored_jobs(location), len(survivors), CLAUSE, "jobs stored after close and reopen")

    fresh = await queue.enqueue({"role": "after-reopen"})
    expect(
        fresh not in snapshots,
        CLAUSE,
        did=f"gave a job enqueued after the reopen the id {fresh!r} of a job enqueued before it",
        demands="ids never reused, so no acked or cancelled job comes back under its old id",
    )
    for job in planted:
        if job.role in GONE_ROLES:
            found = await queue.get_job(job.job_id)
            expect(
                found is None,
                CLAUSE,
                did=f"answered get_job({job.job_id!r}) of a {job.role} job with {found!r} after a new enqueue",
                demands="an acked or cancelled job to stay gone",
            )
