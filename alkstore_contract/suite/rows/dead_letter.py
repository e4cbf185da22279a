"""Row dead_letter (contract R4, D1, D2, D3): how jobs die, what a dead job looks like, and that it stays dead.

Part of the suite.

Legs: ``retry()`` on the last attempt dead-letters with the given error or
``"max attempts exceeded"`` — even after an earlier retry left another error,
and even with an explicit ``delay`` (R4); ``fail(error)`` / ``fail()`` kill at
once with the error or ``"failed"``, with ``died_at`` the op's now (D1); dead
jobs are never handed out again, however much time passes, and ``get_job``
shows them dead with their error, ``died_at`` and attempts, no lease and no
claimant (D2); the ops of a handle whose job died by another path (a reclaim
then ``fail``, or a sweep), was cancelled or was acked all return ``False``
and change nothing (D3).

When it fails, check: the dead-letter strings come from
``alkstore_contract.resolution`` (``LAST_ERROR_MAX_ATTEMPTS``,
``LAST_ERROR_FAILED``) and the decision compares ``attempts >= max_attempts``
using the claim's attempts; the dead-letter ``UPDATE`` sets ``died_at`` to the
op's one ``now`` and clears ``lease_expires_at``, ``claimed_by`` and the token;
the claim predicate accepts only ``ready`` and lapsed ``processing`` rows (never
``dead``); every handle statement is fenced by id, token, ``state =
'processing'`` and ``lease_expires_at > now``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias

from alkstore_contract.suite.checks import expect, expect_equal, expect_ready
from alkstore_contract.suite.expected import LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.ledger import Gap
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

Dead: TypeAlias = tuple[Queue, JobId, Job]
HandleOp: TypeAlias = Callable[[], Awaitable[bool]]
"""A handle op not yet started: ``_expect_killed`` reads the clock right before it starts."""
"""A job a leg killed: the queue to read it through, its id, and its snapshot once dead."""

ONE_SHOT_OPS = ("ack", "retry", "fail")
LONG_TIME_S = 400 * 24 * 3600.0
"""How far the manual clock jumps to show a dead job stays dead (longer than any lease or backoff)."""


async def _dead_job(queue: Queue, job_id: JobId, clause: str, leg: str) -> Job:
    """The job must be stored and dead, with no lease and no claimant (DEC-unclaimed-fields)."""
    job = await queue.get_job(job_id)
    expect(job is not None, clause, did=f"({leg}) lost job {job_id}", demands="a dead job to stay visible to get_job")
    assert job is not None
    expect(
        job.state == JobState.DEAD and job.lease_expires_at is None and job.claimed_by is None,
        clause,
        did=f"({leg}) showed job {job_id} as state={job.state}, lease_expires_at={job.lease_expires_at!r}, "
        f"claimed_by={job.claimed_by!r}",
        demands="state dead with lease_expires_at None and claimed_by None",
    )
    return job


async def _expect_killed(
    ctx: RowContext,
    queue: Queue,
    job_id: JobId,
    operation: HandleOp,
    clause: str,
    leg: str,
    *,
    last_error: str,
    attempts: int,
) -> Dead:
    """``operation`` returns True and leaves the job dead with ``last_error``, ``attempts`` and died_at = its now."""
    ok, before, after = await ctx.timed(operation())
    expect(ok is True, clause, did=f"returned {ok!r} from {leg} on job {job_id}", demands="True")
    job = await _dead_job(queue, job_id, clause, leg)
    expect_equal(job.last_error, last_error, clause, f"last_error of job {job_id} after {leg}")
    expect_equal(job.attempts, attempts, clause, f"attempts of job {job_id} after {leg}")
    ctx.expect_during(job.died_at, before, after, clause, f"died_at of job {job_id} after {leg}")
    return (queue, job_id, job)


def _by_id(handles: list[JobHandle]) -> dict[JobId, JobHandle]:
    return {handle.job.id: handle for handle in handles}


async def _claim_exactly(queue: Queue, worker: str, ids: list[JobId], clause: str, leg: str) -> dict[JobId, JobHandle]:
    """Claim and expect exactly ``ids`` (in any order)."""
    handles = await queue.claim_batch(worker, len(ids) + 1)
    got = _by_id(handles)
    expect(
        set(got) == set(ids),
        clause,
        did=f"({leg}) handed out {sorted(map(str, got))} to {worker!r}",
        demands=f"exactly the claimable jobs {sorted(map(str, ids))}",
    )
    return got


async def _leg_retry_exhausted(ctx: RowContext, store: Store) -> list[Dead]:
    """R4: the last attempt's retry dead-letters, with the given error or "max attempts exceeded"."""
    opts = QueueOpts(visibility_timeout_s=4 * ctx.unit_s, max_attempts=2)
    once = store.queue("dead-retry-once", opts)
    single = await once.enqueue({"leg": "max_attempts=1 override"}, max_attempts=1)
    handle = await _claim_exactly(once, "w1", [single], "R4", "the claim of a job with one attempt")
    only_attempt = "retry() on the only attempt (max_attempts=1 given)"
    killed = await _expect_killed(
        ctx, once, single, handle[single].retry, "R4", only_attempt, last_error=LAST_ERROR_MAX_ATTEMPTS, attempts=1
    )
    dead = [killed]

    queue = store.queue("dead-retry", opts)
    given = await queue.enqueue({"leg": "error given"})
    default = await queue.enqueue({"leg": "no error"})
    delayed = await queue.enqueue({"leg": "explicit delay"})
    first = await _claim_exactly(queue, "w1", [given, default, delayed], "R4", "first claims")
    for job_id in (given, default, delayed):
        ok = await first[job_id].retry("transient", delay=0)
        expect(ok is True, "R4", did=f"refused a valid retry of job {job_id} (got {ok!r})", demands="True")
        await expect_ready(
            queue,
            job_id,
            1,
            "R4",
            after="retry on attempt 1 of 2",
            demands="an attempt left to put the job back to ready (R1), not to kill it",
        )
    second = await _claim_exactly(queue, "w2", [given, default, delayed], "R4", "second claims")
    last_retries: list[tuple[JobId, HandleOp, str]] = [
        (given, lambda: second[given].retry("boom: é 💥"), "boom: é 💥"),
        (default, second[default].retry, LAST_ERROR_MAX_ATTEMPTS),
        (delayed, lambda: second[delayed].retry(delay=ctx.unit_s), LAST_ERROR_MAX_ATTEMPTS),
    ]
    leg = "retry() on the last attempt"
    for job_id, operation, expected_error in last_retries:
        dead.append(
            await _expect_killed(ctx, queue, job_id, operation, "R4", leg, last_error=expected_error, attempts=2)
        )
    return dead


async def _leg_fail(ctx: RowContext, store: Store) -> list[Dead]:
    """D1: fail() kills at once, attempts left or not."""
    queue = store.queue("dead-fail", QueueOpts(visibility_timeout_s=2 * ctx.unit_s, max_attempts=5))
    given = await queue.enqueue({"leg": "fail(error)"})
    default = await queue.enqueue({"leg": "fail()"})
    handles = await _claim_exactly(queue, "w", [given, default], "D1", "claims")
    await ctx.advance(ctx.unit_s)
    fails: list[tuple[JobId, HandleOp, str]] = [
        (given, lambda: handles[given].fail("bad input: é 💥"), "bad input: é 💥"),
        (default, handles[default].fail, LAST_ERROR_FAILED),
    ]
    leg = "fail() under a live lease, 4 attempts left"
    return [
        await _expect_killed(ctx, queue, job_id, operation, "D1", leg, last_error=expected_error, attempts=1)
        for job_id, operation, expected_error in fails
    ]


async def _leg_stays_dead(ctx: RowContext, dead: list[Dead]) -> None:
    """D2: no claim ever hands out a dead job, and get_job keeps showing it unchanged."""
    queues = list({job_queue.name: job_queue for job_queue, _, _ in dead}.values())
    live = await queues[0].enqueue({"leg": "a live job beside the dead ones"})
    if ctx.manual:
        await ctx.advance(LONG_TIME_S)
    else:
        await ctx.advance(ctx.unit_s)
        ctx.not_exercised(
            ("D2",),
            "a year later: on the real clock the row waits one tick, past every lease, not a year",
            leg="dead a year later",
            kind=Gap.CLOCK,
        )
    for index, queue in enumerate(queues):
        got = [h.job.id for h in await queue.claim_batch("late", 100)]
        expect_equal(got, [live] if index == 0 else [], "D2", f"the ids claimed from queue {queue.name!r}")
        swept = await queue.sweep_expired()
        expect_equal(swept, 0, "D2", f"jobs moved by sweeping queue {queue.name!r} (only dead or held jobs)")
        expect(
            await queue.claim_one("later") is None,
            "D2",
            did=f"handed out a job of queue {queue.name!r} after a sweep, with only dead or held jobs stored",
            demands="None",
        )
    for job_queue, job_id, at_death in dead:
        now = await _dead_job(job_queue, job_id, "D2", "long after death")
        expect_equal(now, at_death, "D2", f"the snapshot of dead job {job_id} long after it died")


async def _refuse_all(handles: list[JobHandle], queue: Queue, gone: bool, leg: str) -> list[Dead]:
    """Each handle's heartbeat, then one of ack/retry/fail, must return False and change nothing."""
    dead: list[Dead] = []
    for handle, op in zip(handles, ONE_SHOT_OPS, strict=True):
        job_id = handle.job.id
        before = await queue.get_job(job_id)
        beat = await handle.heartbeat()
        expect(beat is False, "D3", did=f"({leg}) returned {beat!r} from heartbeat() on job {job_id}", demands="False")
        result = await getattr(handle, op)()
        expect(result is False, "D3", did=f"({leg}) returned {result!r} from {op}() on job {job_id}", demands="False")
        after = await queue.get_job(job_id)
        expect_equal(after, before, "D3", f"({leg}) job {job_id} after refused handle ops")
        expect(not gone or after is None, "D3", did=f"({leg}) brought back job {job_id}", demands="it stays gone")
        if after is not None:
            dead.append((queue, job_id, after))
    return dead


async def _leg_refused(ctx: RowContext, store: Store) -> list[Dead]:
    """D3: handles on jobs that died by another path, were cancelled, or were acked."""
    u = ctx.unit_s
    margin = 0.0 if ctx.manual else u / 2

    stale_q = store.queue("dead-stale", QueueOpts(visibility_timeout_s=2 * u, max_attempts=3))
    stale_ids = [await stale_q.enqueue({"stale": i}) for i in range(3)]
    old = await _claim_exactly(stale_q, "w1", stale_ids, "D3", "first claims")

    swept_q = store.queue("dead-swept", QueueOpts(visibility_timeout_s=20 * u))
    swept_ids = [await swept_q.enqueue({"swept": i}, expires=2 * u) for i in range(3)]
    swept = await _claim_exactly(swept_q, "w1", swept_ids, "D3", "claims of expiring jobs")

    await ctx.advance(2 * u + margin)
    new = await _claim_exactly(stale_q, "w2", stale_ids, "D3", "reclaims after the lease lapsed")
    for job_id, handle in new.items():
        ok = await handle.fail("taken over")
        expect(ok is True, "D3", did=f"refused the new holder's fail() of job {job_id} (got {ok!r})", demands="True")
    dead = await _refuse_all([old[i] for i in stale_ids], stale_q, False, "old handles of jobs the new holder failed")

    moved = await swept_q.sweep_expired()
    expect_equal(moved, 3, "D3", "jobs moved to dead by the sweep of expired processing jobs (X2)")
    dead += await _refuse_all([swept[i] for i in swept_ids], swept_q, False, "handles of jobs a sweep killed")

    live_q = store.queue("dead-gone", QueueOpts(visibility_timeout_s=20 * u))
    cancelled_ids = [await live_q.enqueue({"cancelled": i}) for i in range(3)]
    cancelled = await _claim_exactly(live_q, "w", cancelled_ids, "D3", "claims of jobs to cancel")
    for job_id in cancelled_ids:
        expect(await live_q.cancel(job_id) is True, "D3", did=f"did not cancel job {job_id}", demands="True (B2)")
    await _refuse_all([cancelled[i] for i in cancelled_ids], live_q, True, "handles of cancelled jobs")

    acked_ids = [await live_q.enqueue({"acked": i}) for i in range(3)]
    acked = await _claim_exactly(live_q, "w", acked_ids, "D3", "claims of jobs to ack_batch")
    count = await live_q.ack_batch(acked_ids)
    expect_equal(count, 3, "B1", "the count of ack_batch over 3 held jobs (the set-up of the next D3 check)")
    await _refuse_all([acked[i] for i in acked_ids], live_q, True, "handles of jobs acked by ack_batch")
    return dead


async def dead_letter(ctx: RowContext) -> None:
    """R4: last-attempt retry dead-letters. D1: fail kills at once. D2: dead stays dead. D3: late ops refused."""
    store = await ctx.open_store()
    dead: list[Dead] = []

    async def collect(leg: Callable[[RowContext, Store], Awaitable[list[Dead]]], leg_ctx: RowContext) -> None:
        dead.extend(await leg(leg_ctx, store))

    await ctx.leg("fail", ("D1",), lambda c: collect(_leg_fail, c))
    await ctx.leg("retry on the last attempt", ("R4",), lambda c: collect(_leg_retry_exhausted, c))
    await ctx.leg("late ops refused", ("D3",), lambda c: collect(_leg_refused, c))
    await ctx.leg(
        "dead stays dead",
        ("D2",),
        lambda c: _leg_stays_dead(c, dead),
        after=("fail", "retry on the last attempt", "late ops refused"),
    )


ROW = row("dead_letter", ("R4", "D1", "D2", "D3"))(dead_letter)
