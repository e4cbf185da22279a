"""Row lease_validity (contract H1–H5, C3, C7): what a handle may still do, and what a claim counts.

Part of the suite.

Legs, each on a queue of its own, on one timeline: everything is claimed at
``t0`` with a visibility timeout of 3 units; a short-lease queue is reclaimed at
``t0 + 1u``; the rest is looked at once every ``t0`` lease has run out (exactly
at the deadline under the manual clock, the tolerance later on the system clock).

- C3: a claim sets processing, the claimant, ``lease = now + stamp`` and
  ``attempts + 1``; a reclaim (by any worker) consumes an attempt too.
- H2: ``ack`` deletes the job (``get_job`` → None, the oracle counts one less).
- H3: ``heartbeat`` resets the lease from now — the same deadline twice in a
  row at one instant, ``extend`` may shorten it, a ``timedelta`` works — and is
  repeatable; a heartbeated job outlives a lapse that its sibling's lease does
  not; at (manual clock: exactly at) or after the deadline it returns False and
  changes nothing.
- H4: after ``ack``/``retry``/``fail`` returned — True or False — every op on
  the handle raises ``HandleSpent`` and changes nothing, even once the job was
  claimed again; ``heartbeat`` does not spend the handle.
- H1: ``ack``/``retry``/``fail``/``heartbeat`` at or after the deadline return
  False and leave the job exactly as it was.
- H5: after a lapse and a reclaim by another worker AND by the same worker id,
  the old handle's ``heartbeat`` and ``ack``/``retry``/``fail`` return False and
  change nothing; the new holder's succeed with their effect.
- C7: a lapsed lease with ``attempts >= max_attempts`` (1 of 1; 2 of 2 after a
  reclaim) is never handed out again.
- H1, from the other side: expiry fences nothing. Jobs claimed at ``t0`` that
  expire at ``t0 + 1u``, while their leases run to ``t0 + 3u``, still take
  ``ack``/``retry``/``fail``/``heartbeat`` at ``t0 + 1u`` — a worker that
  finished a job a moment after it expired has still done it.

When it fails, check the WHERE of every handle statement: ``id AND token AND
state = 'processing' AND lease_expires_at > now``, with a token that every
claim (and reclaim) writes afresh — a fence on the id or the worker id alone
lets an old holder act on a reclaimed job, and ``expires_at`` has no place
in it; that heartbeat computes ``now +
extend`` (not ``lease_expires_at + extend``); that the handle is marked spent
before ack/retry/fail touch storage and checked first by every op; and that a
reclaim runs ``attempts = attempts + 1`` and filters on ``attempts <
max_attempts``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from alkstore_contract.adapter import Capability
from alkstore_contract.errors import HandleSpent
from alkstore_contract.suite.checks import (
    expect,
    expect_equal,
    expect_ids,
    expect_instant,
    expect_nothing_handed_out,
    expect_raises,
    expect_stored,
)
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.ledger import Gap
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import JobState, QueueOpts

CLOCK_SLACK_S = 0.01
"""Allowance between the monotonic clock and the engine's wall clock (system clock only)."""
HandleOp = Callable[[JobHandle], Awaitable[bool]]

ENDING_OPS: tuple[tuple[str, HandleOp], ...] = (
    ("ack", lambda h: h.ack()),
    ("retry", lambda h: h.retry("from an old handle", delay=0)),
    ("fail", lambda h: h.fail("from an old handle")),
)
"""The one-shot ops (H4), as the fencing legs call them."""
ALL_OPS: tuple[tuple[str, HandleOp], ...] = (*ENDING_OPS, ("heartbeat", lambda h: h.heartbeat()))


async def _claim(ctx: RowContext, queue: Queue, worker: str, n: int, attempts: int) -> list[JobHandle]:
    """``claim_batch`` of exactly ``n`` jobs, each checked against C3: held, counted, leased from now."""
    before = ctx.now()
    handles = await queue.claim_batch(worker, n)
    after = ctx.now()
    expect_equal(len(handles), n, "C3", f"the number of jobs claim_batch({worker!r}, {n}) handed out")
    for handle in handles:
        job = handle.job
        expect_equal(
            (job.state, job.claimed_by, job.attempts),
            (JobState.PROCESSING, worker, attempts),
            "C3",
            f"(state, claimed_by, attempts) of job {job.id!r} as claimed",
        )
        expect_instant(
            job.lease_expires_at,
            before + (after - before) / 2 + timedelta(seconds=job.visibility_timeout_s),
            "C3",
            f"lease_expires_at of job {job.id!r} (the claim's now + the stamped visibility timeout)",
            tolerance_s=ctx.tolerance_s + (after - before).total_seconds() / 2,
        )
        stored = await expect_stored(queue, job.id, "C3")
        expect_equal(stored, job, "C3", f"the stored job {job.id!r} against the claim's snapshot")
    return handles


async def _expect_op(op: Awaitable[bool], expected: bool, clause: str, what: str) -> None:
    got = await op
    expect(got is expected, clause, did=f"returned {got!r} from {what}", demands=repr(expected))


async def _expect_spent(ctx: RowContext, queue: Queue, handle: JobHandle, why: str) -> None:
    """H4: every op on a spent handle raises HandleSpent and changes neither the job nor the store."""
    before = await queue.get_job(handle.job.id)
    count = await ctx.stored_jobs()
    for name, op in ALL_OPS:
        await expect_raises(op(handle), HandleSpent, "H4", f"{name}() on a handle whose {why}")
    expect_equal(await queue.get_job(handle.job.id), before, "H4", f"the job after ops on a handle whose {why}")
    expect_equal(await ctx.stored_jobs(), count, "H4", f"the oracle's job count after ops on a handle whose {why}")


class Timeline:
    """The legs, set up at t0 and finished at t0 + 1u and once the t0 leases have run out."""

    def __init__(self, ctx: RowContext, store: Store) -> None:
        self.ctx = ctx
        unit = ctx.unit_s
        self.visibility_s = 3 * unit
        opts = QueueOpts(visibility_timeout_s=self.visibility_s, max_attempts=3)
        self.acked = store.queue("lease-ack", opts)
        self.once = store.queue("lease-once", opts)
        self.beat = store.queue("lease-beat", opts)
        self.late = store.queue("lease-late", opts)
        self.fence = store.queue("lease-fence", opts)
        self.expiring = store.queue("lease-expiring", opts)
        self.exhaust = store.queue("lease-exhaust", QueueOpts(visibility_timeout_s=unit, max_attempts=2))
        self.late_handles: list[JobHandle] = []
        self.old_handles: list[JobHandle] = []
        self.exhaust_deadline: datetime | None = None

    async def ack_deletes(self) -> None:
        """H2 (and C3 on a first claim)."""
        job_id = await self.acked.enqueue({"leg": "H2"})
        count = await self.ctx.stored_jobs()
        (handle,) = await _claim(self.ctx, self.acked, "acker", 1, attempts=1)
        await _expect_op(handle.ack(), True, "H2", "ack() on a held claim")
        got = await self.acked.get_job(job_id)
        expect(got is None, "H2", did=f"kept the acked job as {got!r}", demands="get_job → None")
        expect_equal(await self.ctx.stored_jobs(), count - 1, "H2", "the oracle's job count after one ack")

    async def one_shot(self) -> None:
        """H4 after ack, retry and fail returned True; a heartbeat does not spend a handle."""
        await self.once.enqueue_many([{"leg": "H4", "op": op} for op in ("ack", "retry", "fail")])
        acked, retried, failed = await _claim(self.ctx, self.once, "once", 3, attempts=1)
        await _expect_op(acked.heartbeat(), True, "H3", "heartbeat() on a held claim")
        await _expect_op(acked.ack(), True, "H2", "ack() after a heartbeat (a heartbeat does not spend the handle)")
        await _expect_spent(self.ctx, self.once, acked, "ack() returned True")
        await _expect_op(retried.retry("once", delay=0), True, "R1", "retry(delay=0) on a held claim")
        await _expect_spent(self.ctx, self.once, retried, "retry() returned True")
        await _expect_op(failed.fail("once"), True, "D1", "fail() on a held claim")
        await _expect_spent(self.ctx, self.once, failed, "fail() returned True")
        (again,) = await _claim(self.ctx, self.once, "once-again", 1, attempts=2)
        expect_equal(again.job.id, retried.job.id, "H4", "the job claimed after retry(delay=0)")
        await _expect_spent(self.ctx, self.once, retried, "retry() returned True, the job since claimed again")
        await _expect_op(again.ack(), True, "H4", "ack() by the new holder after the old handle's refused ops")

    async def heartbeats(self) -> None:
        """H3 at t0: an absolute reset from now, shortening included; a long one to outlive a lapse."""
        await self.beat.enqueue_many([{"leg": "H3", "job": name} for name in ("boundary", "long")])
        self.boundary, self.long = await _claim(self.ctx, self.beat, "beater", 2, attempts=1)
        unit = self.ctx.unit_s
        started = time.monotonic()
        lease_1 = await self._beat(self.boundary, None)
        lease_2 = await self._beat(self.boundary, None)
        elapsed = timedelta(seconds=0 if self.ctx.manual else time.monotonic() - started + CLOCK_SLACK_S)
        expect(
            timedelta(0) <= lease_2 - lease_1 <= elapsed,
            "H3",
            did=f"moved the deadline from {lease_1} to {lease_2} with a second heartbeat right after the first",
            demands="the same deadline, now + the stamp (a reset from now, not an addition)",
        )
        long_lease = await self._beat(self.boundary, 100 * unit)
        short_lease = await self._beat(self.boundary, unit)
        expect(
            short_lease < long_lease,
            "H3",
            did=f"gave {short_lease} after heartbeat(extend={unit}) that followed one to {long_lease}",
            demands="a heartbeat to shorten the lease when its extend says so",
        )
        await self._beat(self.boundary, timedelta(seconds=self.visibility_s))
        await self._beat(self.long, 100 * unit)

    async def _beat(self, handle: JobHandle, extend: float | timedelta | None) -> datetime:
        """One heartbeat that must succeed; returns the deadline it set, checked against now + extend."""
        before = self.ctx.now()
        await _expect_op(handle.heartbeat(extend), True, "H3", f"heartbeat(extend={extend!r}) on a held claim")
        after = self.ctx.now()
        job = await expect_stored(self.beat, handle.job.id, "H3")
        seconds = self.visibility_s if extend is None else extend
        span = seconds if isinstance(seconds, timedelta) else timedelta(seconds=seconds)
        added = "the stamp" if extend is None else "extend"
        expect_instant(
            job.lease_expires_at,
            before + (after - before) / 2 + span,
            "H3",
            f"lease_expires_at after heartbeat(extend={extend!r}) (now + {added}, a reset from now)",
            tolerance_s=self.ctx.tolerance_s + (after - before).total_seconds() / 2,
        )
        assert job.lease_expires_at is not None
        return job.lease_expires_at

    async def claim_late(self) -> None:
        """At t0: the claims ``late_ops`` finds lapsed."""
        await self.late.enqueue_many([{"leg": "H1", "op": name} for name, _ in ALL_OPS])
        self.late_handles = await _claim(self.ctx, self.late, "late", len(ALL_OPS), attempts=1)
        self.late_jobs = [await expect_stored(self.late, h.job.id, "H1") for h in self.late_handles]

    async def claim_fence(self) -> None:
        """At t0: the claims ``fenced`` reclaims."""
        await self.fence.enqueue_many([{"leg": "H5", "n": n} for n in range(2 * len(ENDING_OPS))])
        self.old_handles = await _claim(self.ctx, self.fence, "w-old", 2 * len(ENDING_OPS), attempts=1)

    async def claim_expiring(self) -> None:
        """At t0: the claims of jobs that expire at t0 + 1u, for ``expired_but_held``."""
        await self.expiring.enqueue_many([{"leg": "H1", "op": name} for name, _ in ALL_OPS], expires=self.ctx.unit_s)
        self.expiring_handles = await _claim(self.ctx, self.expiring, "expiring", len(ALL_OPS), attempts=1)

    async def claim_exhaust(self) -> None:
        """At t0: the short leases ``at_one_unit`` reclaims."""
        self.one_attempt = await self.exhaust.enqueue({"leg": "C7", "max_attempts": 1}, max_attempts=1)
        self.two_attempts = await self.exhaust.enqueue({"leg": "C7", "max_attempts": 2})
        await _claim(self.ctx, self.exhaust, "exhauster", 2, attempts=1)

    async def at_one_unit(self) -> None:
        """C7 and C3: at the short lease's deadline only the job with an attempt left is reclaimed."""
        lease = (await expect_stored(self.exhaust, self.two_attempts, "C7")).lease_expires_at
        assert lease is not None
        await self.ctx.wait_until(lease)
        (reclaimed,) = await _claim(self.ctx, self.exhaust, "exhauster-2", 1, attempts=2)
        expect_equal(reclaimed.job.id, self.two_attempts, "C7", "the one job reclaimed (the other has 1 of 1 spent)")
        self.exhaust_deadline = reclaimed.job.lease_expires_at

    async def expired_but_held(self) -> None:
        """H1: jobs that expired at t0 + 1u under leases running to t0 + 3u still take every handle op."""
        expiry = self.expiring_handles[0].job.expires_at
        assert expiry is not None
        await self.ctx.wait_until(expiry)
        when = "at its expiry" if self.ctx.manual else "after its expiry"
        for (name, op), handle in zip(ALL_OPS, self.expiring_handles, strict=True):
            await _expect_op(op(handle), True, "H1", f"{name}() on a held claim {when}, its lease still running")
            after = await self.expiring.get_job(handle.job.id)
            expected = {"ack": None, "retry": JobState.READY, "fail": JobState.DEAD}.get(name, JobState.PROCESSING)
            expect_equal(
                None if after is None else after.state, expected, "H1", f"the job's state after {name}() {when}"
            )

    async def wait_out(self) -> None:
        """Let every t0 lease that was handed out (and the short reclaim's, if there was one) run out.

        It waits for whichever claims succeeded, so a leg that failed on one queue holds back no other.
        """
        held = [*self.late_handles, *self.old_handles]
        deadlines = [h.job.lease_expires_at for h in held] + [self.exhaust_deadline]
        known = [d for d in deadlines if d is not None]
        if known:
            await self.ctx.wait_until(max(known))

    async def fenced(self) -> None:
        """H5: reclaims by another worker and by the same worker id fence the old handles off."""
        old_by_id = {handle.job.id: handle for handle in self.old_handles}
        reclaims = [
            await _claim(self.ctx, self.fence, worker, len(ENDING_OPS), attempts=2) for worker in ("w-new", "w-old")
        ]
        for reclaimed in reclaims:
            for (name, op), new in zip(ENDING_OPS, reclaimed, strict=True):
                await self._fenced(name, op, old_by_id[new.job.id], new)

    async def late_ops(self) -> None:
        """H1: every op at (manual clock: exactly at) or after the deadline returns False, changes nothing."""
        when = "at the lease deadline" if self.ctx.manual else "after the lease deadline"
        for (name, op), handle, job in zip(ALL_OPS, self.late_handles, self.late_jobs, strict=True):
            await _expect_op(op(handle), False, "H1", f"{name}() {when}")
            expect_equal(await self.late.get_job(job.id), job, "H1", f"the job after {name}() {when}")
            if name == "heartbeat":
                await _expect_op(handle.ack(), False, "H4", "ack() after a refused heartbeat (not spent)")
            await _expect_spent(
                self.ctx, self.late, handle, f"{name if name != 'heartbeat' else 'ack'}() returned False"
            )

    async def late_heartbeat(self) -> None:
        """H3: the deadline set by a heartbeat is final; a long heartbeat keeps its job from a reclaim."""
        before = await expect_stored(self.beat, self.boundary.job.id, "H3")
        when = "at the deadline it set" if self.ctx.manual else "after the deadline it set"
        await _expect_op(self.boundary.heartbeat(), False, "H3", f"heartbeat() {when}")
        expect_equal(await self.beat.get_job(before.id), before, "H3", f"the job after heartbeat() {when}")
        stolen = await self.beat.claim_batch("thief", 5)
        expect_ids(
            stolen,
            [before.id],
            "H3",
            "the jobs reclaimable once the stamp's lease ran out (not the one heartbeated for 100 units)",
        )
        await _expect_op(self.long.heartbeat(), True, "H3", "a further heartbeat on the long-heartbeated claim")
        await _expect_op(self.long.ack(), True, "H3", "ack() on the long-heartbeated claim")

    async def exhausted(self) -> None:
        """C7: lapsed with 1 of 1 and 2 of 2 attempts spent: never handed out again, left as they were."""
        got = await self.exhaust.claim_batch("exhauster-3", 5)
        expect_nothing_handed_out(
            got,
            "C7",
            shown=[(h.job.id, h.job.attempts, h.job.max_attempts) for h in got],
            when="(id, attempts, max)",
            demands="no lapsed lease with attempts >= max_attempts handed out again",
        )
        for job_id, attempts in ((self.one_attempt, 1), (self.two_attempts, 2)):
            job = await expect_stored(self.exhaust, job_id, "C7")
            expect_equal(
                (job.state, job.attempts), (JobState.PROCESSING, attempts), "C7", f"(state, attempts) of job {job_id!r}"
            )

    async def _fenced(self, name: str, op: HandleOp, old: JobHandle, new: JobHandle) -> None:
        """H5: the old holder loses to the reclaim ``new``; the new holder's ops work."""
        held = await expect_stored(self.fence, new.job.id, "H5")
        who = "another worker" if new.job.claimed_by != old.job.claimed_by else "the same worker id"
        await _expect_op(old.heartbeat(), False, "H5", f"the old handle's heartbeat() after a reclaim by {who}")
        await _expect_op(op(old), False, "H5", f"the old handle's {name}() after a reclaim by {who}")
        expect_equal(await self.fence.get_job(held.id), held, "H5", f"the reclaimed job after the old {name}()")
        await _expect_op(new.heartbeat(), True, "H5", f"the new holder's heartbeat() (reclaimed by {who})")
        await _expect_op(op(new), True, "H5", f"the new holder's {name}() (reclaimed by {who})")
        after = await self.fence.get_job(held.id)
        expected = {"ack": None, "retry": JobState.READY, "fail": JobState.DEAD}[name]
        expect_equal(
            None if after is None else after.state, expected, "H5", f"the job's state after the new holder's {name}()"
        )


async def _boundary(ctx: RowContext) -> None:
    """H1, H3 at the boundary: at exactly ``lease_expires_at`` every handle op returns False, changes nothing."""
    store = await ctx.open_store()
    queue = store.queue("lease-boundary", QueueOpts(visibility_timeout_s=3 * ctx.unit_s, max_attempts=3))
    await queue.enqueue_many([{"leg": "H1 boundary", "op": name} for name, _ in ALL_OPS])
    handles = await _claim(ctx, queue, "boundary", len(ALL_OPS), attempts=1)
    jobs = [await expect_stored(queue, h.job.id, "H1") for h in handles]
    deadline = jobs[0].lease_expires_at
    assert deadline is not None
    await ctx.wait_until(deadline)
    for (name, op), handle, job in zip(ALL_OPS, handles, jobs, strict=True):
        clause_id = "H3" if name == "heartbeat" else "H1"
        await _expect_op(op(handle), False, clause_id, f"{name}() exactly at lease_expires_at")
        expect_equal(await queue.get_job(job.id), job, clause_id, f"the job after {name}() exactly at its deadline")


ENDED_AS: dict[str, JobState | None] = {"ack": None, "retry": JobState.READY, "fail": JobState.DEAD}
"""What each one-shot op leaves of a job it ended under a live lease (``None``: deleted)."""
RACE_ORDERS = (("ack", "retry", "fail"), ("retry", "fail", "ack"), ("fail", "ack", "retry"))
"""Each one-shot op started first once, the others right behind it, with a heartbeat last."""
RACE_LEG = "one-shot ops started together"
TOKENS_LEG = "tokens of two stores opened with one seed"


async def _one_shot_race(ctx: RowContext) -> None:
    """H4: ack, retry, fail and heartbeat started together on one handle: exactly one one-shot op runs.

    ``asyncio.gather`` starts each op before the one before it has returned, so
    a handle marked spent only after its storage call lets a second op through
    (DEC-order-of-checks: spend the handle, then touch storage).
    """
    store = await ctx.open_store()
    opts = QueueOpts(visibility_timeout_s=100 * ctx.unit_s, max_attempts=3)
    ops = dict(ENDING_OPS)
    for order in RACE_ORDERS:
        queue = store.queue(f"lease-race-{order[0]}-first", opts)
        job_id = await queue.enqueue({"leg": "H4 race", "first": order[0]})
        handle = await queue.claim_one("racer")
        expect(handle is not None and handle.job.id == job_id, "H4", did="handed out another job", demands=f"{job_id}")
        assert handle is not None
        started = [ops[name](handle) for name in order]
        *ended, beat = await asyncio.gather(*started, handle.heartbeat(), return_exceptions=True)
        outcome = dict(zip(order, ended, strict=True))
        ran = {name: got for name, got in outcome.items() if not isinstance(got, HandleSpent)}
        expect(
            len(ran) == 1 and all(isinstance(got, bool) for got in ran.values()),
            "H4",
            did=f"gave {outcome!r} for {', '.join(order)} and heartbeat started together on one held handle",
            demands="exactly one of the one-shot ops to run (return a bool) and the others to raise HandleSpent",
        )
        ((winner, result),) = ran.items()
        expect(
            result is True and isinstance(beat, bool | HandleSpent),
            "H4",
            did=f"returned {result!r} from the {winner}() that ran, and {beat!r} from heartbeat()",
            demands=f"the {winner}() under a live lease to return True, heartbeat a bool or HandleSpent",
        )
        after = await queue.get_job(job_id)
        expect_equal(
            None if after is None else after.state,
            ENDED_AS[winner],
            "H4",
            f"the job's state after the race, which {winner}() alone ran",
        )


async def _tokens_across_stores(ctx: RowContext) -> None:
    """H5: two stores opened with ONE seed on one location never mint the same claim token.

    The first store's claim lapses and the second store reclaims the job for
    the same worker id: only the token tells the two claims apart, so the old
    handle's ``ack`` must return False. A token drawn from the store's seeded
    random source (R5's jitter) is the same in both stores.
    """
    location = await ctx.new_location()
    first = await ctx.adapter.open_store(location, clock=ctx.clock, seed=ctx.seed)
    second = await ctx.adapter.open_store(location, clock=ctx.clock, seed=ctx.seed)
    try:
        opts = QueueOpts(visibility_timeout_s=ctx.unit_s, max_attempts=3)
        one, other = first.queue("lease-seeded", opts), second.queue("lease-seeded", opts)
        job_id = await one.enqueue({"leg": "H5 across stores"})
        old = await one.claim_one("same-worker")
        expect(old is not None and old.job.id == job_id, "H5", did="handed out another job", demands=f"{job_id}")
        assert old is not None
        assert old.job.lease_expires_at is not None
        await ctx.wait_until(old.job.lease_expires_at)
        new = await other.claim_one("same-worker")
        expect(
            new is not None and new.job.id == job_id, "H5", did="did not reclaim the lapsed job", demands=f"{job_id}"
        )
        assert new is not None
        held = await expect_stored(other, job_id, "H5")
        await _expect_op(
            old.ack(), False, "H5", "the first store's old handle's ack() after the second store reclaimed"
        )
        expect_equal(await other.get_job(job_id), held, "H5", "the reclaimed job after the old handle's ack()")
        await _expect_op(new.ack(), True, "H5", "the second store's handle's ack() of its reclaim")
    finally:
        await second.close()
        await first.close()


async def lease_validity(ctx: RowContext) -> None:
    """H1–H5, C3, C7: fenced handle ops, heartbeats, one-shot handles, reclaims and exhausted leases."""
    store = await ctx.open_store()
    t = Timeline(ctx, store)
    await ctx.leg("ack deletes", ("H2", "C3"), lambda _: t.ack_deletes())
    await ctx.leg("one-shot handles", ("H4", "C3"), lambda _: t.one_shot())
    await ctx.leg("heartbeats reset from now", ("H3", "C3"), lambda _: t.heartbeats())
    # Each later leg builds only on the claims of its own queue: a failure on one queue (C7's, say)
    # leaves every other leg to run.
    await ctx.leg("claims at t0: late", ("C3",), lambda _: t.claim_late())
    await ctx.leg("claims at t0: fence", ("C3",), lambda _: t.claim_fence())
    await ctx.leg("claims at t0: expiring", ("C3",), lambda _: t.claim_expiring())
    await ctx.leg("claims at t0: exhaust", ("C3",), lambda _: t.claim_exhaust())
    await ctx.leg("reclaim at t0 + 1u", ("C7", "C3"), lambda _: t.at_one_unit(), after=("claims at t0: exhaust",))
    await ctx.leg("expired but held", ("H1",), lambda _: t.expired_but_held(), after=("claims at t0: expiring",))
    await ctx.leg("t0 leases run out", ("H1",), lambda _: t.wait_out())
    lapsed = "t0 leases run out"
    await ctx.leg("ops after the deadline", ("H1", "H4"), lambda _: t.late_ops(), after=("claims at t0: late", lapsed))
    await ctx.leg(
        "a heartbeat's deadline is final",
        ("H3",),
        lambda _: t.late_heartbeat(),
        after=(lapsed, "heartbeats reset from now"),
    )
    await ctx.leg("exhausted leases", ("C7",), lambda _: t.exhausted(), after=(lapsed, "reclaim at t0 + 1u"))
    await ctx.leg("fenced after a reclaim", ("H5", "C3"), lambda _: t.fenced(), after=("claims at t0: fence", lapsed))
    if not ctx.manual:
        await ctx.leg("H1 boundary", ("H1", "H3"), _boundary, clock="manual")
    await ctx.leg(RACE_LEG, ("H4",), _one_shot_race)
    if ctx.has(Capability.SHARED_LOCATION):
        await ctx.leg(TOKENS_LEG, ("H5",), _tokens_across_stores)
    else:
        ctx.not_exercised(("H5",), "the engine does not declare shared_location", leg=TOKENS_LEG, kind=Gap.CAPABILITY)


ROW = row("lease_validity", ("H1", "H2", "H3", "H4", "H5", "C3", "C7"))(lease_validity)
