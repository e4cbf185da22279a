"""Leg "close and reopen" of row durability (contract P3): every committed write reads back after a reopen.

Part of the suite.

A store enqueues jobs, acks some, retries some (with an error and a delay),
dead-letters one by an exhausting retry, fails one, cancels some (ready,
processing, and the newest job), and leaves two processing; then it reads every
job back (``get_job``). It is closed and a new store is opened on the location:
every job must read back exactly as the engine showed it before the close
(every field: state, attempts, run_at, last_error, lease, claimed_by, died_at,
stamps, payload), every job it showed gone must stay gone — also after a new
enqueue on the reopened store, so a reused id cannot bring it back — and the
oracle must count the jobs it showed and nothing else.

The expectation is the engine's own read before the close, never what the
ops should have done: an op the engine refused (returned ``False``), or one
whose outcome differs from the contract's (a retry that keeps no error, a
cancel that cannot take a processing job), is judged by the clauses that
define it (R1, D1, B2... in other rows). P3 asks only whether what the engine
showed it had committed is still there.
"""

from __future__ import annotations

from dataclasses import dataclass

from alkstore_contract.suite.checks import expect, expect_equal
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import JobId, QueueOpts

CLAUSE = "P3"
LONG_LEASE_S = 3600.0
"""No lease lapses during the leg, so a processing job must come back processing."""
WORKER = "durability-worker"

CLAIMED_ROLES = ("ack", "ack", "retry", "fail", "cancel-processing", "hold", "hold")
"""The jobs leg (a) enqueues in one batch and claims, one role each (plus ``exhaust``, with max_attempts=1)."""
RETRY_ERROR = "transient: upstream timed out"
EXHAUST_ERROR = "gave up: last attempt"
FAIL_ERROR = "broken: bad input"


@dataclass
class Planted:
    """One job of leg (a): its role, and what the engine answered to the op its role says."""

    role: str
    job_id: JobId
    handle: JobHandle | None = None
    refused: bool = False
    """The engine returned False for the role's op (or never handed the job out): noted, not a P3 failure."""


async def _settle(queue: Queue, planted: Planted, retry_delay_s: float) -> bool:
    """Do to a job what its role says; whether the engine did it (False: refused, or the job never handed out)."""
    if planted.role.startswith("cancel"):
        return await queue.cancel(planted.job_id)
    if planted.role == "ready":
        return True
    handle = planted.handle
    if handle is None:
        return False
    if planted.role == "ack":
        return await handle.ack()
    if planted.role == "retry":
        return await handle.retry(error=RETRY_ERROR, delay=retry_delay_s)
    if planted.role == "exhaust":
        return await handle.retry(error=EXHAUST_ERROR)
    if planted.role == "fail":
        return await handle.fail(error=FAIL_ERROR)
    return True


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
    for handle in await queue.claim_batch(WORKER, len(planted)):
        if handle.job.id in by_id:
            by_id[handle.job.id].handle = handle

    planted.append(Planted("ready", await queue.enqueue({"role": "ready", "text": "ünïcode ✓", "x": [1.5, None]})))
    planted.append(
        Planted("ready", await queue.enqueue({"role": "later"}, delay=50 * ctx.unit_s, expires=500 * ctx.unit_s))
    )
    planted.append(Planted("ready", await queue.enqueue({"role": "urgent"}, priority=9)))
    planted.append(Planted("cancel-ready", await queue.enqueue({"role": "cancel-ready"})))
    planted.append(Planted("cancel-newest", await queue.enqueue({"role": "cancel-newest"})))
    for job in planted:
        job.refused = not await _settle(queue, job, retry_delay_s)
    refused = [f"{p.role} of job {p.job_id!r}" for p in planted if p.refused]
    if refused:
        ctx.note(f"close and reopen leg: the engine refused {', '.join(refused)}; each judged as it read before")

    before = {p.job_id: await queue.get_job(p.job_id) for p in planted}
    shown = sum(job is not None for job in before.values())
    await store.close()

    reopened = await ctx.open_store(location)
    queue = reopened.queue(name, opts)
    for job in planted:
        after = await queue.get_job(job.job_id)
        earlier = before[job.job_id]
        where = f"job {job.job_id!r} ({job.role}{', refused' if job.refused else ''}) after close and reopen"
        expect(
            after == earlier,
            CLAUSE,
            did=f"read back {where} as {after!r}, but before the close the engine showed it as {earlier!r}",
            demands="every committed write intact after a reopen: each job as the engine showed it before the close",
        )
    expect_equal(await ctx.stored_jobs(location), shown, CLAUSE, "jobs stored after close and reopen")

    fresh = await queue.enqueue({"role": "after-reopen"})
    expect(
        fresh not in before,
        CLAUSE,
        did=f"gave a job enqueued after the reopen the id {fresh!r} of a job enqueued before it",
        demands="ids never reused, so no acked or cancelled job comes back under its old id",
    )
    for job_id, earlier in before.items():
        if earlier is None:
            found = await queue.get_job(job_id)
            expect(
                found is None,
                CLAUSE,
                did=f"answered get_job({job_id!r}) of a job gone before the close with {found!r} after a new enqueue",
                demands="a job the engine showed gone (acked or cancelled) to stay gone",
            )
