"""Row claim_order (contract C1, C2, X1): which jobs a claim hands out, and in which order.

Part of the suite.

Legs, each on a queue of its own, on one timeline (``t0`` → ``t0 + 1u`` →
``t0 + 2u``, exact instants under the manual clock, the tolerance later on the
system clock):

- C2: one mix of priorities, past ready times, ties and a job due tomorrow,
  enqueued twice: drained by ``claim_one`` calls and by one ``claim_batch``,
  both must give exactly priority DESC, ready time ASC, enqueue order ASC, and
  never the job due tomorrow, though its priority is the highest.
- C1 (due): a future job with a higher priority is not claimable before its
  run_at (not even one microsecond before, manual clock), and is at it.
- C1 (reclaim): a lease that lapsed with attempts left is claimable again at
  its deadline (not a microsecond before, manual clock) and takes its place by
  priority and ready time among fresh jobs, in one ``claim_batch``.
- C2 (reclaim selection): six claimable jobs — three lapsed leases (priority
  2; priority 0 ready 5 h back, leased longer; priority 0 ready 1 h back) and
  three ready jobs (priority 1 ready 10 h back; priority 0 ready 3 h back;
  priority 0 ready between the two leases' deadlines) — and a claim of only
  four, by one ``claim_batch`` and by four ``claim_one``: WHICH four are taken
  shows C2 applied to reclaims, each at its own ``run_at``, not after the
  ready jobs, not before them, not at its lease deadline. The other two come
  next, and reclaimed jobs keep their ``run_at``.
- C1 (reclaim of a reclaim): a lease that lapses, is reclaimed, and lapses
  again is claimable again each time (an index must file every reclaim's lease).
- C1 (clock back, manual clock): after the clock goes back one unit, a lease
  that lapsed before still is claimable and a delayed job that came due too
  (an index rebuilt for the earlier ``now`` must forget neither).
- X1: a job enqueued with ``expires=0`` is never handed out; a ready job is not
  handed out at its expiry (manual clock: still is a microsecond before); a job
  whose ready time comes after its expiry never is; a lapsed lease on an
  expired job is not reclaimed while a lapsed sibling without expiry is.

When it fails, check the claim statement's filter — ``(ready AND run_at <= now)
OR (processing AND lease_expires_at <= now AND attempts < max_attempts)``, AND
``(expires_at IS NULL OR expires_at > now)`` — and its ``ORDER BY priority
DESC, run_at ASC, id ASC``; that the handles of one ``claim_batch`` are sorted
back into that order after an unordered ``RETURNING``; that ids grow in enqueue
order; and that a claim does not rewrite ``run_at``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from alkstore_contract.suite.checks import (
    expect,
    expect_equal,
    expect_handed_out,
    expect_ids,
    expect_nothing_handed_out,
    expect_stored,
)
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import JobId, QueueOpts

ONE_US = timedelta(microseconds=1)
HOUR = timedelta(hours=1)

MIX: tuple[tuple[str, int, timedelta | None], ...] = (
    ("p0 t0-3h", 0, -3 * HOUR),
    ("p5 now", 5, None),
    ("p0 now", 0, None),
    ("p5 t0-1h", 5, -1 * HOUR),
    ("p-2 t0-10h", -2, -10 * HOUR),
    ("p0 t0-3h later", 0, -3 * HOUR),
    ("p9 tomorrow", 9, 24 * HOUR),
    ("p0 t0-5h", 0, -5 * HOUR),
)
"""(label, priority, run_at relative to t0 — None: neither run_at nor delay), in enqueue order."""
TIES = ("tie 1", "tie 2", "tie 3")
"""Enqueued last, in one enqueue_many: priority 0, one shared run_at of t0 - 2h."""
TIE_OFFSET = -2 * HOUR
MIX_ORDER = [
    "p5 t0-1h",
    "p5 now",
    "p0 t0-5h",
    "p0 t0-3h",
    "p0 t0-3h later",
    "tie 1",
    "tie 2",
    "tie 3",
    "p0 now",
    "p-2 t0-10h",
]
"""C2's order of ``MIX`` + ``TIES``, written out by hand (the job due tomorrow is never claimable)."""


def _labels(handles: list[JobHandle], names: dict[JobId, str]) -> list[str]:
    return [names.get(handle.job.id, f"unknown job {handle.job.id!r}") for handle in handles]


async def _fill_mix(queue: Queue, t0: datetime) -> dict[JobId, str]:
    names: dict[JobId, str] = {}
    for label, priority, offset in MIX:
        run_at = None if offset is None else t0 + offset
        names[await queue.enqueue({"label": label}, run_at=run_at, priority=priority)] = label
    tie_ids = await queue.enqueue_many([{"label": label} for label in TIES], run_at=t0 + TIE_OFFSET)
    names.update(zip(tie_ids, TIES, strict=True))
    return names


async def _order_legs(ctx: RowContext, store: Store) -> None:
    """C2 through claim_one and through claim_batch."""
    t0 = ctx.now()
    one_by_one = store.queue("order-one")
    names = await _fill_mix(one_by_one, t0)
    claimed: list[JobHandle] = []
    while (handle := await one_by_one.claim_one("orderly")) is not None and len(claimed) <= len(names):
        claimed.append(handle)
    expect_equal(_labels(claimed, names), MIX_ORDER, "C2", "the order of successive claim_one calls")

    batched = store.queue("order-batch")
    names = await _fill_mix(batched, t0)
    batch = await batched.claim_batch("orderly", len(names) + 5)
    expect_equal(_labels(batch, names), MIX_ORDER, "C2", "the order of the handles of one claim_batch")


class Timeline:
    """The C1/X1 legs: jobs set up at t0, looked at again at t0 + 1u and t0 + 2u."""

    def __init__(self, ctx: RowContext, store: Store) -> None:
        self.ctx = ctx
        unit = ctx.unit_s
        self.due = store.queue("order-due")
        self.reclaim = store.queue("order-reclaim", QueueOpts(visibility_timeout_s=unit))
        self.expired_at_once = store.queue("order-expired-at-once")
        self.expiring = store.queue("order-expiring")
        self.expiring_edge = store.queue("order-expiring-edge")
        self.lapsed = store.queue("order-lapsed-expired", QueueOpts(visibility_timeout_s=unit))

    async def set_up(self) -> None:
        """At t0: enqueue everything, take the leases, and check what must not be claimable yet."""
        unit = self.ctx.unit_s
        self.future = await self.due.enqueue({"label": "future"}, delay=2 * unit, priority=100)
        self.ready = await self.due.enqueue({"label": "ready"})
        expect_handed_out(
            await self.due.claim_one("early"),
            self.ready,
            "C1",
            when="while a higher-priority job was not yet due",
            demands=f"the ready job {self.ready!r}, not the one due in 2 units",
        )
        again = await self.due.claim_one("early")
        expect(
            again is None,
            "C1",
            did=f"handed out {None if again is None else again.job.id!r} two units before its run_at",
            demands="None",
        )

        self.leased = await self.reclaim.enqueue({"label": "leased"}, priority=1)
        taken = await self.reclaim.claim_one("first-holder")
        expect(taken is not None, "C1", did="handed out nothing from a queue with one ready job", demands="the job")

        await self.expired_at_once.enqueue({"label": "expires=0"}, expires=0)
        expect_nothing_handed_out(
            await self.expired_at_once.claim_batch("eager", 5),
            "X1",
            when="enqueued with expires=0 (expires_at = now)",
            demands="a job with expires_at <= now never handed out",
        )

        self.expiring_ids = {
            await self.expiring.enqueue({"label": "expires in 1u"}, expires=unit, priority=10): "expires in 1u",
            await self.expiring.enqueue({"label": "due 2u, expires 1u"}, delay=2 * unit, expires=unit, priority=10): (
                "due 2u, expires 1u"
            ),
            await self.expiring.enqueue({"label": "no expiry"}): "no expiry",
        }
        self.edge = await self.expiring_edge.enqueue({"label": "edge"}, expires=unit)

        self.doomed = await self.lapsed.enqueue({"label": "lapses at 1u, expires at 2u"}, expires=2 * unit)
        self.survivor = await self.lapsed.enqueue({"label": "lapses at 1u, no expiry"})
        held = await self.lapsed.claim_batch("short-lived", 2)
        expect_ids(held, [self.doomed, self.survivor], "C2", "the two lapsed-leg claims")

    async def at_one_unit(self) -> None:
        """At t0 + 1u: the lease has lapsed and is reclaimed in its place; the 1u expiry has struck."""
        lease = (await expect_stored(self.reclaim, self.leased, "C1")).lease_expires_at
        assert lease is not None
        if self.ctx.manual:
            await self.ctx.wait_until(lease - ONE_US)
            early = await self.reclaim.claim_one("second-holder")
            expect(early is None, "C1", did="reclaimed a lease a microsecond before its deadline", demands="None")
            edge = await self.expiring_edge.claim_one("edge")
            expect(
                edge is not None and edge.job.id == self.edge,
                "X1",
                did="did not hand out a ready job a microsecond before its expiry",
                demands="the job claimable while expires_at > now",
            )
        await self.ctx.wait_until(lease)

        leased = await expect_stored(self.reclaim, self.leased, "C1")
        names = {self.leased: "lapsed p1 (ready t0)"}
        for label, priority, run_at in (
            ("p2 now", 2, None),
            ("p1 ready 1h before t0", 1, leased.run_at - HOUR),
            ("p1 now", 1, None),
            ("p0 now", 0, None),
        ):
            names[await self.reclaim.enqueue({"label": label}, priority=priority, run_at=run_at)] = label
        batch = await self.reclaim.claim_batch("second-holder", 10)
        expect_equal(
            _labels(batch, names),
            ["p2 now", "p1 ready 1h before t0", "lapsed p1 (ready t0)", "p1 now", "p0 now"],
            "C1",
            "the order of one claim_batch over fresh jobs and a lapsed lease (reclaimable, in its C2 place)",
        )
        reclaimed = next((h.job for h in batch if h.job.id == self.leased), None)
        expect(
            reclaimed is not None and reclaimed.claimed_by == "second-holder" and reclaimed.run_at == leased.run_at,
            "C1",
            did=f"reclaimed the lapsed job as {reclaimed!r}",
            demands="a reclaim by the new worker, its run_at untouched",
        )

        expiring = await self.expiring.claim_batch("late", 10)
        expect_equal(
            _labels(expiring, self.expiring_ids),
            ["no expiry"],
            "X1",
            "what a claim hands out once 'expires in 1u' has expired (at expires_at = now)",
        )

    async def at_two_units(self) -> None:
        """At t0 + 2u: the future job is due; an expired ready job and an expired lapsed lease stay put."""
        future = await expect_stored(self.due, self.future, "C1")
        if self.ctx.manual:
            await self.ctx.wait_until(future.run_at - ONE_US)
            early = await self.due.claim_one("late")
            expect(early is None, "C1", did="handed out a job a microsecond before its run_at", demands="None")
        await self.ctx.wait_until(future.run_at)
        doomed = await expect_stored(self.lapsed, self.doomed, "C1")
        assert doomed.expires_at is not None
        await self.ctx.wait_until(doomed.expires_at)

        due = await self.due.claim_one("late")
        expect_handed_out(
            due, self.future, "C1", when="at the future job's run_at", demands=f"job {self.future!r}, due now"
        )
        late = await self.expiring.claim_batch("late", 10)
        expect_nothing_handed_out(
            late,
            "X1",
            shown=_labels(late, self.expiring_ids),
            when="at t0 + 2u",
            demands="nothing: 'due 2u, expires 1u' became ready after it expired",
        )
        lapsed = await self.lapsed.claim_batch("reclaimer", 10)
        expect_ids(
            lapsed,
            [self.survivor],
            "X1",
            "the reclaims once both leases lapsed and one job expired (only the unexpired one)",
        )


SELECT_TAKEN = ["lapsed p2", "ready p1 t0-10h", "lapsed p0 t0-5h", "ready p0 t0-3h"]
"""C2's first four of the reclaim-selection leg's six, written out by hand."""
SELECT_LEFT = ["lapsed p0 t0-1h", "ready p0 between the deadlines"]
"""And the two a later claim takes, in C2 order."""


class SelectionQueue:
    """One queue of the reclaim-selection leg: three lapsed leases and three ready jobs, set up at t0."""

    def __init__(self, ctx: RowContext, store: Store, name: str) -> None:
        self.ctx = ctx
        unit = ctx.unit_s
        self.queue = store.queue(name, QueueOpts(visibility_timeout_s=unit))
        self.long_lease = store.queue(name, QueueOpts(visibility_timeout_s=2 * unit))
        """The same queue; E1 stamps the job enqueued through it with a lease twice as long."""
        self.names: dict[JobId, str] = {}
        self.run_at: dict[JobId, datetime] = {}

    async def _enqueue(self, queue: Queue, label: str, priority: int, run_at: datetime | None) -> JobId:
        job_id = await queue.enqueue({"label": label}, priority=priority, run_at=run_at)
        self.names[job_id] = label
        self.run_at[job_id] = (await expect_stored(self.queue, job_id, "C2")).run_at
        return job_id

    async def set_up(self) -> datetime:
        """Lease three jobs, then enqueue three ready ones; returns the instant the last lease lapses."""
        t0 = self.ctx.now()
        leased = [
            await self._enqueue(self.queue, "lapsed p2", 2, None),
            await self._enqueue(self.long_lease, "lapsed p0 t0-5h", 0, t0 - 5 * HOUR),
            await self._enqueue(self.queue, "lapsed p0 t0-1h", 0, t0 - HOUR),
        ]
        held = await self.queue.claim_batch("doomed", len(leased))
        expect_equal(
            sorted(_labels(held, self.names)),
            sorted(self.names[job_id] for job_id in leased),
            "C1",
            "the jobs claimed from a queue of three ready jobs",
        )
        short = _lease(held, leased[2])
        long = _lease(held, leased[1])
        await self._enqueue(self.queue, "ready p1 t0-10h", 1, t0 - 10 * HOUR)
        await self._enqueue(self.queue, "ready p0 t0-3h", 0, t0 - 3 * HOUR)
        await self._enqueue(self.queue, "ready p0 between the deadlines", 0, short + (long - short) / 2)
        return long

    def expect_selected(self, handles: list[JobHandle], expected: list[str], what: str) -> None:
        """The labels in order, then: every reclaim kept its run_at (C2)."""
        expect_equal(_labels(handles, self.names), expected, "C2", what)
        for handle in handles:
            expect_equal(
                handle.job.run_at,
                self.run_at[handle.job.id],
                "C2",
                f"run_at of {self.names[handle.job.id]!r} as claimed (a reclaimed job keeps its run_at)",
            )


def _lease(handles: list[JobHandle], job_id: JobId) -> datetime:
    lease = next((h.job.lease_expires_at for h in handles if h.job.id == job_id), None)
    expect(lease is not None, "C1", did=f"claimed job {job_id!r} without a lease deadline", demands="a lease (C3)")
    assert lease is not None
    return lease


async def leg_reclaim_selection(ctx: RowContext) -> None:
    """C2 over reclaims and ready jobs together, seen in WHICH jobs a claim of fewer than are claimable takes."""
    store = await ctx.open_store(await ctx.new_location())
    batched = SelectionQueue(ctx, store, "order-select-batch")
    one_by_one = SelectionQueue(ctx, store, "order-select-one")
    lapsed = max(await batched.set_up(), await one_by_one.set_up())
    await ctx.wait_until(lapsed)
    taken = len(SELECT_TAKEN)
    batched.expect_selected(
        await batched.queue.claim_batch("selector", taken),
        SELECT_TAKEN,
        f"the jobs one claim_batch(w, {taken}) selects from six claimable, three of them lapsed leases",
    )
    batched.expect_selected(
        await batched.queue.claim_batch("selector", 10),
        SELECT_LEFT,
        "the jobs the next claim_batch takes",
    )
    singles: list[JobHandle] = []
    for _ in range(taken):
        handle = await one_by_one.queue.claim_one("selector")
        if handle is not None:
            singles.append(handle)
    one_by_one.expect_selected(
        singles, SELECT_TAKEN, f"the jobs {taken} claim_one calls select from six claimable, three of them lapsed"
    )


async def _reclaimed(ctx: RowContext, queue: Queue, job_id: JobId, attempts: int, what: str) -> JobHandle:
    handle = expect_handed_out(
        await queue.claim_one("again"),
        job_id,
        "C1",
        when=what,
        demands=f"job {job_id!r} again: a lapsed lease with attempts left is claimable",
    )
    expect_equal(handle.job.attempts, attempts, "C1", f"attempts of job {job_id!r} handed out {what}")
    return handle


async def leg_lapsing_twice(ctx: RowContext) -> None:
    """C1: a lease that lapses is claimable, and so is the lease of the reclaim once it lapses in turn."""
    store = await ctx.open_store()
    queue = store.queue("order-lapsing-twice", QueueOpts(visibility_timeout_s=ctx.unit_s, max_attempts=3))
    job_id = await queue.enqueue({"leg": "lapses twice"})
    handle = await _reclaimed(ctx, queue, job_id, 1, "on the first claim")
    for attempt in (2, 3):
        lease = handle.job.lease_expires_at
        assert lease is not None
        await ctx.wait_until(lease)
        handle = await _reclaimed(ctx, queue, job_id, attempt, f"once the lease of attempt {attempt - 1} lapsed")
    expect_equal(await handle.ack(), True, "C1", "ack() of the job's third claim")


async def leg_clock_back(ctx: RowContext) -> None:
    """C1: after the clock went back (a host with a slower clock), a lease lapsed at the earlier instant is claimable.

    Two stores on one location may run on clocks a little apart; an engine
    that indexes instants must re-arrange its indexes when one reads an earlier
    ``now`` than the last, and forget no lease doing it.
    """
    clock = ctx.clock
    if clock is None:
        raise RuntimeError("the clock-back leg runs on the manual clock (clock='manual')")
    u = ctx.unit_s
    store = await ctx.open_store()
    queue = store.queue("order-clock-back", QueueOpts(visibility_timeout_s=u, max_attempts=3))
    job_id = await queue.enqueue({"leg": "clock goes back"})
    waiting = await queue.enqueue({"leg": "ready after the clock went back"}, delay=2 * u)
    first = await _reclaimed(ctx, queue, job_id, 1, "on the first claim")
    clock.advance(4 * u)
    expect_equal(await queue.sweep_expired(), 0, "C1", "sweep_expired() of a lapsed lease with attempts left")
    clock.set(clock.now() - timedelta(seconds=u))
    expect(first.job.lease_expires_at is not None, "C1", did="gave no lease", demands="the claim's lease")
    again = await queue.claim_batch("again", 3)
    expect_equal(
        sorted(map(str, (h.job.id for h in again))),
        sorted(map(str, (job_id, waiting))),
        "C1",
        "the jobs claim_batch handed out 3u after the lapse, once the clock went back 1u",
    )


async def claim_order(ctx: RowContext) -> None:
    """C1, C2, X1: claim order, what is claimable when, which jobs a short claim selects among reclaims and ready
    jobs, and that expired jobs never are."""
    store = await ctx.open_store()
    await ctx.leg("C2 order", ("C2",), lambda _: _order_legs(ctx, store))
    timeline = Timeline(ctx, store)
    await ctx.leg("set up at t0", ("C1", "X1", "C2"), lambda _: timeline.set_up())
    await ctx.leg("at t0 + 1u", ("C1", "X1"), lambda _: timeline.at_one_unit(), after=("set up at t0",))
    await ctx.leg("at t0 + 2u", ("C1", "X1"), lambda _: timeline.at_two_units(), after=("at t0 + 1u",))
    await ctx.leg("reclaim selection", ("C2", "C1"), leg_reclaim_selection)
    await ctx.leg("a lease lapsing twice is reclaimed twice", ("C1",), leg_lapsing_twice)
    await ctx.leg("leases lapsed before the clock went back", ("C1",), leg_clock_back, clock="manual")


ROW = row("claim_order", ("C1", "C2", "X1"))(claim_order)
