"""Row transactional_enqueue (contract W1–W4, capability ``transactional_enqueue``): a job lives iff its caller commits.

Part of the suite.

The adapter opens a transaction as the application would
(``TransactionalAdapter.begin_transaction``), outside every store. Legs: a job
``enqueue_in`` that transaction is invisible to claims and ``get_job`` of a
store until the caller commits (W1), then stored as ``enqueue`` stores it at
the op's clock read — ready, its payload, priority, attempts and stamps,
``enqueued_at`` during the ``enqueue_in`` although the caller's transaction
began earlier, ``run_at`` and ``expires_at`` from it — and claimable once due
(W3); after the
caller's rollback it is gone (W2); other ops of the store run between the
``enqueue_in`` and the rollback (an enqueue, a claim and its ack, a sweep)
leave the rollback whole: the store committed nothing of the caller's (W4).
An engine that declares the capability while its adapter has no
``begin_transaction`` fails W1: a declaration the suite cannot check is never
certified.

When it fails, check that ``enqueue_in`` runs its INSERT on the caller's own
connection (not on one of the store's, which commits by itself, nor in a
transaction of the store's committed when the caller's ends, whichever way),
issues no COMMIT, and that no other op of the store touches the caller's
connection; and that it reads the op's time as ``enqueue`` does, not the
caller's transaction start (Postgres: ``statement_timestamp()``, not
``now()``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from alkstore_contract.adapter import CallerTransaction, Capability, TransactionalAdapter
from alkstore_contract.suite.checks import expect, expect_equal, expect_nothing_handed_out, expect_stored
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue, TransactionalQueue
from alkstore_contract.types import JobState, QueueOpts

OPTS = QueueOpts(visibility_timeout_s=3600.0)
WORK_UNITS = 3
"""Ticks the caller works in its transaction before it enqueues: on the system clock more than the tolerance,
so a job stamped when the caller's transaction began, not at the enqueue's clock read, stands out."""
EXPIRES_S = 3600.0
MAX_ATTEMPTS = 7


async def _begin(ctx: RowContext) -> CallerTransaction:
    adapter = ctx.adapter
    expect(
        isinstance(adapter, TransactionalAdapter),
        "W1",
        did=f"declares 'transactional_enqueue', but its adapter {type(adapter).__name__} has no begin_transaction",
        demands="an adapter hook that opens a caller's transaction on the location, so the suite can check it",
    )
    return await cast(TransactionalAdapter, adapter).begin_transaction(ctx.location)


def _transactional(queue: Queue) -> TransactionalQueue:
    return cast(TransactionalQueue, queue)


async def _leg_commit(ctx: RowContext) -> None:
    """W1 then W3: invisible until the caller commits, then stored as enqueue stores it at the op's clock read."""
    queue = _transactional((await ctx.open_store()).queue("tx-commit", OPTS))
    delay_s = ctx.unit_s
    caller = await _begin(ctx)
    try:
        await ctx.advance(WORK_UNITS * ctx.unit_s)
        job_id, before, after = await ctx.timed(
            queue.enqueue_in(
                caller.transaction,
                {"order": 17},
                priority=3,
                delay=delay_s,
                expires=EXPIRES_S,
                max_attempts=MAX_ATTEMPTS,
            )
        )
        expect(
            await queue.get_job(job_id) is None,
            "W1",
            did=f"showed job {job_id!r} through get_job before the caller committed",
            demands="a job enqueued in the caller's transaction invisible outside it until the commit",
        )
        expect_nothing_handed_out(
            await queue.claim_batch("early", 2),
            "W1",
            when="before the caller committed its transaction",
            demands="no claim of a job the caller has not committed",
        )
    except BaseException:
        await caller.rollback()
        raise
    await caller.commit()
    job = await expect_stored(queue, job_id, "W3")
    expect(
        (job.state, job.payload, job.priority, job.attempts, job.max_attempts, job.visibility_timeout_s)
        == (JobState.READY, {"order": 17}, 3, 0, MAX_ATTEMPTS, OPTS.visibility_timeout_s),
        "W3",
        did=f"stored job {job_id!r} as {job!r} once the caller committed",
        demands=f"the job as enqueue stores it: ready, its payload, priority 3, no attempt, max_attempts "
        f"{MAX_ATTEMPTS}, the queue's stamps",
    )
    ctx.expect_during(
        job.enqueued_at,
        before,
        after,
        "W3",
        f"enqueued_at of job {job_id!r}, enqueued {WORK_UNITS * ctx.unit_s:g} s into the caller's transaction",
    )
    expect(
        job.run_at == job.enqueued_at + timedelta(seconds=delay_s)
        and job.expires_at == job.enqueued_at + timedelta(seconds=EXPIRES_S),
        "W3",
        did=f"stored enqueued_at={job.enqueued_at!r}, run_at={job.run_at!r}, expires_at={job.expires_at!r}",
        demands=f"run_at = enqueued_at + {delay_s:g} s (the delay) and expires_at = enqueued_at + {EXPIRES_S:g} s, "
        "from the op's one clock read",
    )
    await ctx.wait_until(job.run_at)
    handle = await queue.claim_one("after-commit")
    expect_equal(None if handle is None else handle.job.id, job_id, "W3", "the job claimed after the commit")


async def _leg_rollback(ctx: RowContext, *, other_ops: bool) -> None:
    """W2 (and W4 with ``other_ops``): after the caller's rollback the job is gone, whatever the store did between."""
    clause = "W4" if other_ops else "W2"
    store = await ctx.open_store()
    queue = _transactional(store.queue(f"tx-rollback-{clause}", OPTS))
    before = await ctx.stored_jobs()
    caller = await _begin(ctx)
    try:
        job_id = await queue.enqueue_in(caller.transaction, {"rolled": "back"})
        if other_ops:
            kept = await queue.enqueue({"kept": True})
            handle = await queue.claim_one("between")
            expect_equal(None if handle is None else handle.job.id, kept, "W4", "the job claimed between")
            assert handle is not None
            expect_equal(await handle.ack(), True, "W4", "ack() between the enqueue_in and the rollback")
            await queue.enqueue({"kept": "too"})
            await queue.sweep_expired()
    finally:
        await caller.rollback()
    expect(
        await queue.get_job(job_id) is None,
        clause,
        did=f"kept job {job_id!r} after the caller rolled its transaction back",
        demands="a job enqueued in the caller's transaction gone with its rollback",
    )
    expect_nothing_handed_out(
        [h for h in await queue.claim_batch("after", 3) if h.job.id == job_id],
        clause,
        when="after the caller rolled back",
        demands="no handout of a job the caller rolled back",
    )
    expected = before + (1 if other_ops else 0)
    expect_equal(await ctx.stored_jobs(), expected, clause, "jobs stored at the location after the rollback")


async def transactional_enqueue(ctx: RowContext) -> None:
    """W1–W4 on every clock."""

    async def rolled_back(ctx: RowContext) -> None:
        await _leg_rollback(ctx, other_ops=False)

    async def others_between(ctx: RowContext) -> None:
        await _leg_rollback(ctx, other_ops=True)

    await ctx.leg("committed", ("W1", "W3"), _leg_commit)
    await ctx.leg("rolled back", ("W2",), rolled_back)
    await ctx.leg("store ops between, then rolled back", ("W4",), others_between)


ROW = row(
    "transactional_enqueue",
    ("W1", "W2", "W3", "W4"),
    requires=(Capability.TRANSACTIONAL_ENQUEUE,),
)(transactional_enqueue)
