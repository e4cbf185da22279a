"""Row release (contract L1–L4, capability ``release``): a claim handed back keeps its job, id and attempt.

Part of the suite.

Legs: a release at once gives the claim's attempt back, keeps the id, the
payload and the last error, and the job is claimable again at once (L2, L3);
a release after a delay is not claimable before ``now + delay`` and is at it
(L3); a job released again and again is claimed with one attempt each time,
even with ``max_attempts=1`` (L2, L3); a stale handle's release — its lease
lapsed and another claim took the job, or the job was cancelled — returns
``False`` and changes nothing (L1); a bad ``delay`` is refused before the
handle is spent, and after a release every op of the handle raises
``HandleSpent``, as after ``ack`` a release does (L4).

When it fails, check that the release ``UPDATE`` is fenced exactly like
``ack``'s (id, token, ``state = 'processing'``, ``lease_expires_at > now``),
sets ``attempts = attempts - 1`` (the claim counted one; a release that keeps
it is a retry, and spends the job's attempts), sets ``run_at = now + delay``
from the op's one clock read, and clears lease, claimant and token but not
``last_error``; and that the handle is marked spent before the storage call.
"""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from alkstore_contract.adapter import Capability
from alkstore_contract.errors import HandleSpent, InvalidArgument
from alkstore_contract.suite.checks import (
    expect,
    expect_claimed,
    expect_equal,
    expect_left_as,
    expect_nothing_handed_out,
    expect_raises,
    expect_stored,
)
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, ReleasableJobHandle
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

LONG_LEASE_S = 3600.0


def releasable(handle: JobHandle) -> ReleasableJobHandle:
    """The handle of an engine declaring ``release``: the row runs only there."""
    return cast(ReleasableJobHandle, handle)


def _expect_given_back(job: Job, attempts: int, clause: str, what: str) -> None:
    """L2: ready, no lease, no claimant, ``attempts`` as before the claim."""
    expect(
        job.state == JobState.READY
        and job.attempts == attempts
        and job.lease_expires_at is None
        and job.claimed_by is None,
        clause,
        did=f"left job {job.id!r} {what} as state={job.state}, attempts={job.attempts}, "
        f"lease_expires_at={job.lease_expires_at!r}, claimed_by={job.claimed_by!r}",
        demands=f"state ready, attempts {attempts} (the claim's attempt given back), no lease and no claimant",
    )


async def _claim(queue: Queue, job_id: JobId, clause: str, because: str) -> ReleasableJobHandle:
    return releasable(await expect_claimed(queue, "releaser", job_id, clause, because=because))


async def _leg_at_once(ctx: RowContext) -> None:
    """L2, L3: released at once — same id, payload and last error; its attempt back; claimable at once."""
    queue = (await ctx.open_store()).queue("release-now", QueueOpts(visibility_timeout_s=LONG_LEASE_S))
    job_id = await queue.enqueue({"leg": "at once"}, priority=7)
    first = await _claim(queue, job_id, "L2", "the only job")
    expect_equal(await first.retry("first try failed", delay=0), True, "L2", "retry(delay=0) of a live claim")
    handle = await _claim(queue, job_id, "L2", "retried with delay 0, ready again")
    ok, before, after = await ctx.timed(handle.release())
    expect_equal(ok, True, "L2", f"release() of job {job_id!r} by its live claim")
    job = await expect_stored(queue, job_id, "L2")
    _expect_given_back(job, 1, "L2", "after release() of its second claim")
    ctx.expect_during(job.run_at, before, after, "L2", f"run_at of job {job_id!r} after release() without a delay")
    expect(
        (job.payload, job.priority, job.last_error) == ({"leg": "at once"}, 7, "first try failed"),
        "L2",
        did=f"kept payload={job.payload!r}, priority={job.priority!r}, last_error={job.last_error!r}",
        demands="the job's payload, priority and last error kept by a release",
    )
    again = await _claim(queue, job_id, "L3", "released without a delay: claimable at once, under its own id")
    expect_equal(again.job.attempts, 2, "L3", f"attempts of job {job_id!r} claimed after its release")


async def _leg_after_delay(ctx: RowContext) -> None:
    """L3: released with a delay — not claimable before now + delay, claimable at it."""
    queue = (await ctx.open_store()).queue("release-later", QueueOpts(visibility_timeout_s=LONG_LEASE_S))
    job_id = await queue.enqueue({"leg": "after a delay"})
    handle = await _claim(queue, job_id, "L3", "the only job")
    delay_s = 2 * ctx.unit_s
    ok, before, after = await ctx.timed(handle.release(delay=delay_s))
    expect_equal(ok, True, "L3", f"release(delay={delay_s}) of job {job_id!r} by its live claim")
    job = await expect_stored(queue, job_id, "L3")
    _expect_given_back(job, 0, "L2", f"after release(delay={delay_s})")
    ctx.expect_during(
        job.run_at - timedelta(seconds=delay_s),
        before,
        after,
        "L3",
        f"run_at - {delay_s} s of job {job_id!r} after release(delay={delay_s})",
    )
    expect_nothing_handed_out(
        await queue.claim_batch("early", 2),
        "L3",
        when=f"right after job {job_id!r} was released with delay {delay_s} s",
        demands="no handout before now + delay",
    )
    await ctx.wait_until(job.run_at)
    await _claim(queue, job_id, "L3", f"released with delay {delay_s} s, which has passed")


async def _leg_released_often(ctx: RowContext) -> None:
    """L2, L3: a job with one attempt, released five times, is claimed with one attempt each time."""
    queue = (await ctx.open_store()).queue(
        "release-often", QueueOpts(visibility_timeout_s=LONG_LEASE_S, max_attempts=1)
    )
    job_id = await queue.enqueue({"leg": "released often"})
    for round_ in range(5):
        handle = await _claim(queue, job_id, "L3", f"released {round_} times, never dead-lettered by a release")
        expect_equal(handle.job.attempts, 1, "L2", f"attempts of job {job_id!r} at claim {round_ + 1}")
        expect_equal(await handle.release(), True, "L2", f"release() {round_ + 1} of job {job_id!r}")
    job = await expect_stored(queue, job_id, "L2")
    _expect_given_back(job, 0, "L2", "after five claims, each released")


async def _leg_stale(ctx: RowContext) -> None:
    """L1: a release by a lapsed claim another claim replaced, or of a cancelled job, returns False."""
    unit = ctx.unit_s
    queue = (await ctx.open_store()).queue("release-stale", QueueOpts(visibility_timeout_s=unit, max_attempts=5))
    job_id = await queue.enqueue({"leg": "stale"})
    old = await _claim(queue, job_id, "L1", "the only job")
    assert old.job.lease_expires_at is not None
    await ctx.wait_until(old.job.lease_expires_at)
    new = await _claim(queue, job_id, "L1", "its first lease lapsed: a reclaim")
    expect_equal(await old.release(), False, "L1", f"release() by the lapsed first claim of job {job_id!r}")
    job = await expect_stored(queue, job_id, "L1")
    expect(
        job.state == JobState.PROCESSING and job.attempts == 2 and job.claimed_by == "releaser",
        "L1",
        did=f"left job {job_id!r} as state={job.state}, attempts={job.attempts} after a stale release",
        demands="a stale release to change nothing: the reclaim's processing, attempts 2",
    )
    expect_equal(await new.ack(), True, "L1", f"ack() by the live reclaim of job {job_id!r} after a stale release")

    gone = await queue.enqueue({"leg": "cancelled"})
    held = releasable((await queue.claim_batch("releaser", 1))[0])
    expect_equal(await queue.cancel(gone), True, "L1", f"cancel({gone!r}) of a held job")
    expect_equal(await held.release(), False, "L1", f"release() of cancelled job {gone!r}")
    expect(
        await queue.get_job(gone) is None,
        "L1",
        did=f"brought cancelled job {gone!r} back through a release",
        demands="a release of a cancelled job to change nothing",
    )


async def _leg_one_shot(ctx: RowContext) -> None:
    """L4: a bad delay is refused before the handle is spent; a release spends it, and an ack spends it for release."""
    queue = (await ctx.open_store()).queue("release-once", QueueOpts(visibility_timeout_s=LONG_LEASE_S))
    job_id = await queue.enqueue({"leg": "one-shot"})
    handle = await _claim(queue, job_id, "L4", "the only job")
    for bad in (-1, float("nan"), float("inf"), "1", 10**400):
        await expect_raises(handle.release(delay=cast(float, bad)), InvalidArgument, "L4", f"release(delay={bad!r})")
    await expect_left_as(queue, job_id, JobState.PROCESSING, 1, "L4", "releases")
    expect_equal(await handle.release(), True, "L4", "release() after refused ones: the handle was not spent")
    for name, op in (("ack", handle.ack()), ("release", handle.release()), ("heartbeat", handle.heartbeat())):
        await expect_raises(op, HandleSpent, "L4", f"{name}() after release() returned")
    acked = await _claim(queue, job_id, "L4", "released at once")
    expect_equal(await acked.ack(), True, "L4", f"ack() of job {job_id!r}")
    await expect_raises(acked.release(), HandleSpent, "L4", "release() after ack() returned")


async def release(ctx: RowContext) -> None:
    """L1–L4 on every clock."""
    await ctx.leg("released at once", ("L2", "L3"), _leg_at_once)
    await ctx.leg("released after a delay", ("L3", "L2"), _leg_after_delay)
    await ctx.leg("released again and again", ("L2", "L3"), _leg_released_often)
    await ctx.leg("stale handle", ("L1",), _leg_stale)
    await ctx.leg("one-shot, bad delay", ("L4",), _leg_one_shot)


ROW = row("release", ("L1", "L2", "L3", "L4"), requires=(Capability.RELEASE,))(release)
