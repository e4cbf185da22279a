"""Row enqueue_opts_resolution (contract E1–E7, B3, T1, T2): how one enqueue's options become the stored job.

Part of the suite.

Legs, each on a queue of its own:

- E1: a queue handle with four non-default ``QueueOpts`` stamps them all on the
  job (``get_job`` shows them); a later handle on the same name with other opts
  stamps ITS jobs and leaves the first job untouched — even a claim through the
  later handle leases the job for its own stamped visibility timeout. A handle
  without opts stamps the defaults.
- E2: ``delay`` wins over ``run_at``, future or past: ``run_at - enqueued_at ==
  delay`` exactly (one clock read); ``delay=0`` with a future ``run_at`` is
  ready, and claimable, now.
- E3: ``run_at`` alone is stored verbatim, future and past, to the microsecond,
  whatever its timezone; a past one is claimable at once, a future one is not.
- E4: neither → ``run_at == enqueued_at``, claimable at once.
- E5: ``expires_at - enqueued_at == expires`` exactly (relative to the enqueue,
  not to the ready time); no ``expires`` → ``expires_at`` is None.
- E6: a per-call ``max_attempts`` overrides the stamp for that job only.
- E7: priority defaults to 0, is stored as given (2**53 + 1 too: no float
  column), and higher priorities are claimed first.
- T1: ``timedelta`` and float durations keep sub-second precision (a delay of
  1.234 s is exactly 1 234 000 µs); ``enqueued_at`` is the clock's own instant
  (under the manual clock, which the row moves to a non-whole second).
- B3: a snapshot shows every field with its resolved value, instants aware and
  in UTC; ``get_job`` of a cancelled id, an id never issued, or an id of
  another kind → None.

When it fails, check the engine's ``enqueue``: it must read its clock ONCE,
resolve the options with ``alkstore_contract.resolution.resolve_new_jobs`` (the
kit does; do not re-implement it), store the result verbatim from that one
``now`` (instants as integer microseconds,
durations not rounded, priority as a 64-bit integer), and ``get_job`` must read
the stamps back from the job row, never from the queue handle.

For a wire engine, check the ``enqueue`` handler: it must take the op's
``now`` from the request (an injected store) or read its clock once, resolve
``run_at`` as ``delay_s`` (when not ``null``) over ``run_at`` over ``now``
(E2-E4) with the duration turned into microseconds as docs/wire-protocol.md
("Encodings") says, stamp ``expires_at`` from that same ``now``, store the
queue's options with the job, and send every instant back as a decimal string
of microseconds, exactly as stored.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta, timezone
from typing import TypeVar

from alkstore_contract.adapter import Capability
from alkstore_contract.clock import SteppingClock
from alkstore_contract.suite.checks import expect, expect_equal, expect_handed_out, expect_instant, expect_stored
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.ledger import Gap
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue, Store
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

T = TypeVar("T")

STAMPS = QueueOpts(visibility_timeout_s=123.5, max_attempts=7, backoff_base_s=2.25, dead_letter_retention_s=86_400.5)
"""Four non-default stamps, none a whole number of seconds where a duration can be fractional (T1)."""
LATER_STAMPS = QueueOpts(visibility_timeout_s=45, max_attempts=2, backoff_base_s=0.5, dead_letter_retention_s=60)
"""A later handle on the same queue name: every stamp differs from ``STAMPS``."""
CONTRACT_DEFAULT_VT_S, CONTRACT_DEFAULT_MAX_ATTEMPTS, CONTRACT_DEFAULT_BASE_S = 300.0, 3, 5.0
"""The QueueOpts defaults docs/contract.md states (retention: None), written out: the row pins the text."""
SUB_SECOND_S = 0.123457
"""Moves the manual clock off a whole second, so an engine that rounds instants is seen (T1)."""
DELAY_S = 90
EXPIRES_S = 600
PAYLOAD = {"leg": "B3", "nested": [1, 2.5, None, {"ü": "ñ"}], "flag": True}
A_MONTH = timedelta(days=30)


async def _must_work(operation: Awaitable[T], clause: str, what: str) -> T:
    """Await an op the clause says must succeed; an exception fails the row naming ``clause``."""
    try:
        return await operation
    except Exception as exc:
        expect(False, clause, did=f"raised {type(exc).__name__}({exc}) for {what}", demands=f"{what} to succeed")
        raise  # unreachable: expect(False, ...) always raises


def _stamps(job: Job) -> tuple[float, int, float, float | None]:
    return (job.visibility_timeout_s, job.max_attempts, job.backoff_base_s, job.dead_letter_retention_s)


def _opts_stamps(opts: QueueOpts) -> tuple[float, int, float, float | None]:
    return (opts.visibility_timeout_s, opts.max_attempts, opts.backoff_base_s, opts.dead_letter_retention_s)


def _gap(job: Job, later: datetime | None) -> timedelta | None:
    """``later - job.enqueued_at``: what the engine resolved relative to the enqueue's one clock read."""
    return None if later is None else later - job.enqueued_at


async def _claims(queue: Queue, job_id: JobId, clause: str, what: str) -> None:
    """The next claim on ``queue`` must hand out ``job_id`` now."""
    handle = await queue.claim_one("resolver")
    got = None if handle is None else handle.job.id
    expect(got == job_id, clause, did=f"handed out {got!r} for {what}", demands=f"job {job_id!r} claimable at once")


async def _stamp_legs(ctx: RowContext, store: Store) -> None:
    """E1, E6: stamps from the handle's opts; later handles and per-call max_attempts."""
    queue = store.queue("opts-stamped", STAMPS)
    first = await queue.enqueue({"leg": "E1"})
    job = await expect_stored(queue, first, "E1")
    expect_equal(_stamps(job), _opts_stamps(STAMPS), "E1", "the stamps (vt, max_attempts, base, retention)")

    later = store.queue("opts-stamped", LATER_STAMPS)
    second = await later.enqueue({"leg": "E1-later"})
    expect_equal(
        _stamps(await expect_stored(later, second, "E1")), _opts_stamps(LATER_STAMPS), "E1", "the later job's stamps"
    )
    for view in (queue, later):
        expect_equal(await view.get_job(first), job, "E1", "the first job after a later handle enqueued")

    override = await queue.enqueue({"leg": "E6"}, max_attempts=11)
    overridden = await expect_stored(queue, override, "E6")
    expect_equal(overridden.max_attempts, 11, "E6", "max_attempts of enqueue(max_attempts=11)")
    expect_equal(overridden.visibility_timeout_s, STAMPS.visibility_timeout_s, "E6", "the other stamps")

    lone = await store.queue("opts-stamped-claim", STAMPS).enqueue({"leg": "E1-claim"})
    before = ctx.now()
    handle = await store.queue("opts-stamped-claim", LATER_STAMPS).claim_one("stamp-reader")
    after = ctx.now()
    handle = expect_handed_out(
        handle, lone, "E1", when="through a later handle", demands=f"job {lone!r}, the queue's only job"
    )
    expect_equal(handle.job.visibility_timeout_s, STAMPS.visibility_timeout_s, "E1", "the claimed job's stamp")
    midpoint = before + (after - before) / 2
    expect_instant(
        handle.job.lease_expires_at,
        midpoint + timedelta(seconds=STAMPS.visibility_timeout_s),
        "E1",
        "lease_expires_at of a job claimed through a later handle (its own stamp, 123.5 s, applies)",
        tolerance_s=ctx.tolerance_s + (after - before).total_seconds() / 2,
    )

    plain = store.queue("opts-default")
    default_job = await expect_stored(plain, await plain.enqueue({"leg": "E1-default"}), "E1")
    expect_equal(
        _stamps(default_job),
        (CONTRACT_DEFAULT_VT_S, CONTRACT_DEFAULT_MAX_ATTEMPTS, CONTRACT_DEFAULT_BASE_S, None),
        "E1",
        "the stamps of a handle opened without opts",
    )


async def _ready_time_legs(ctx: RowContext, store: Store) -> None:
    """E2, E3, E4: delay wins, run_at verbatim, neither is now."""
    queue = store.queue("opts-ready-time")
    now = ctx.now()
    for label, run_at in (("future", now + A_MONTH), ("past", now - A_MONTH)):
        job = await expect_stored(queue, await queue.enqueue({"leg": "E2"}, delay=DELAY_S, run_at=run_at), "E2")
        expect_equal(
            _gap(job, job.run_at), timedelta(seconds=DELAY_S), "E2", f"run_at - enqueued_at (delay 90, {label} run_at)"
        )

    zero = store.queue("opts-delay-zero")
    ready_now = await zero.enqueue({"leg": "E2-zero"}, delay=0, run_at=now + A_MONTH)
    job = await expect_stored(zero, ready_now, "E2")
    expect_equal(_gap(job, job.run_at), timedelta(0), "E2", "run_at - enqueued_at (delay 0, future run_at)")
    await _claims(zero, ready_now, "E2", "enqueue(delay=0, run_at=<a month ahead>)")

    future_at = (now + timedelta(days=2)).replace(microsecond=654_321)
    future = store.queue("opts-run-at-future")
    future_id = await _must_work(future.enqueue({"leg": "E3"}, run_at=future_at), "E3", "enqueue(run_at=<future>)")
    expect_instant(
        (await expect_stored(future, future_id, "E3")).run_at,
        future_at,
        "E3",
        "run_at of enqueue(run_at=<future>)",
        tolerance_s=ctx.tolerance_s,
    )
    got = await future.claim_one("resolver")
    expect(got is None, "E3", did="handed out a job whose run_at is two days ahead", demands="nothing claimable yet")

    offset = timezone(timedelta(hours=5, minutes=30))
    for label, past_at in (
        ("UTC", (now - timedelta(days=2)).replace(microsecond=123_457)),
        ("+05:30", (now - timedelta(hours=3)).replace(microsecond=987_001).astimezone(offset)),
    ):
        past = store.queue(f"opts-run-at-past-{label}")
        past_id = await _must_work(
            past.enqueue({"leg": "E3"}, run_at=past_at), "E3", f"enqueue(run_at=<past, {label}>)"
        )
        stored = (await expect_stored(past, past_id, "E3")).run_at
        expect_instant(
            stored,
            past_at,
            "E3",
            f"run_at of enqueue(run_at=<past, {label}>) (verbatim, never clamped)",
            tolerance_s=ctx.tolerance_s,
        )
        await _claims(past, past_id, "E3", f"enqueue(run_at=<past, {label}>)")

    neither = store.queue("opts-neither")
    before = ctx.now()
    neither_id = await neither.enqueue(PAYLOAD)
    after = ctx.now()
    job = await expect_stored(neither, neither_id, "E4")
    expect_equal(job.run_at, job.enqueued_at, "E4", "run_at of an enqueue with neither delay nor run_at")
    expect_instant(
        job.enqueued_at,
        before + (after - before) / 2,
        "T1",
        "enqueued_at (the enqueue's clock read)",
        tolerance_s=ctx.tolerance_s + (after - before).total_seconds() / 2,
    )
    _check_snapshot(job, neither_id, "opts-neither")
    await _claims(neither, neither_id, "E4", "an enqueue with neither delay nor run_at")


def _check_snapshot(job: Job, job_id: JobId, queue_name: str) -> None:
    """B3: every field of a fresh ready job, resolved."""
    expected = {
        "id": job_id,
        "queue": queue_name,
        "payload": PAYLOAD,
        "state": JobState.READY,
        "priority": 0,
        "attempts": 0,
        "max_attempts": CONTRACT_DEFAULT_MAX_ATTEMPTS,
        "expires_at": None,
        "lease_expires_at": None,
        "claimed_by": None,
        "visibility_timeout_s": CONTRACT_DEFAULT_VT_S,
        "backoff_base_s": CONTRACT_DEFAULT_BASE_S,
        "dead_letter_retention_s": None,
        "last_error": None,
        "died_at": None,
    }
    for field, value in expected.items():
        expect_equal(getattr(job, field), value, "B3", f"Job.{field} of a fresh ready job")
    for field in ("run_at", "enqueued_at"):
        instant: datetime = getattr(job, field)
        expect(
            isinstance(instant, datetime) and instant.utcoffset() == timedelta(0),
            "B3",
            did=f"gave Job.{field} = {instant!r}",
            demands="instants as timezone-aware UTC datetimes",
        )


async def _expiry_and_priority_legs(store: Store) -> None:
    """E5 (expires relative to the enqueue), E7 (priority stored and honoured)."""
    queue = store.queue("opts-expires")
    for label, kwargs, expected in (
        ("expires=600", {"expires": EXPIRES_S}, timedelta(seconds=EXPIRES_S)),
        ("delay=90, expires=600", {"expires": EXPIRES_S, "delay": DELAY_S}, timedelta(seconds=EXPIRES_S)),
        ("expires=timedelta(0:00:02.5)", {"expires": timedelta(seconds=2.5)}, timedelta(seconds=2.5)),
        ("expires=0.75", {"expires": 0.75}, timedelta(milliseconds=750)),
    ):
        job = await expect_stored(queue, await queue.enqueue({"leg": "E5"}, **kwargs), "E5")
        expect_equal(_gap(job, job.expires_at), expected, "E5", f"expires_at - enqueued_at of enqueue({label})")
    never = await expect_stored(queue, await queue.enqueue({"leg": "E5-none"}), "E5")
    expect_equal(never.expires_at, None, "E5", "expires_at of an enqueue without expires")

    ranked = store.queue("opts-priority")
    order = [(-3, "low"), (0, "default"), (2**53, "big"), (2**53 + 1, "bigger")]
    ids: dict[JobId, str] = {}
    for priority, label in order:
        job_id = await (ranked.enqueue(label) if label == "default" else ranked.enqueue(label, priority=priority))
        ids[job_id] = label
        expect_equal(
            (await expect_stored(ranked, job_id, "E7")).priority, priority, "E7", f"priority of the {label!r} job"
        )
    claimed: list[str] = []
    while len(claimed) <= len(order) and (handle := await ranked.claim_one("ranker")) is not None:
        claimed.append(ids.get(handle.job.id, repr(handle.job.id)))
    expect_equal(claimed, ["bigger", "big", "default", "low"], "E7", "the claim order by priority")


async def _precision_legs(ctx: RowContext, store: Store) -> None:
    """T1: sub-second durations and instants survive the round trip exactly (to the engine's declared resolution)."""
    queue = store.queue("opts-precision")
    for label, delay, expected in (
        ("1.234", 1.234, timedelta(microseconds=1_234_000)),
        ("0.0015", 0.0015, timedelta(microseconds=1_500)),
        ("timedelta(0:01:00.000007)", timedelta(minutes=1, microseconds=7), timedelta(minutes=1, microseconds=7)),
        ("5 (int)", 5, timedelta(seconds=5)),
    ):
        job = await expect_stored(queue, await queue.enqueue({"leg": "T1"}, delay=delay), "T1")
        expect_instant(
            job.run_at,
            job.enqueued_at + expected,
            "T1",
            f"run_at of enqueue(delay={label}), as enqueued_at + {expected}",
            tolerance_s=ctx.tolerance_s,
        )


async def _unknown_ids(store: Store) -> None:
    """B3: get_job of a cancelled id, an id never issued, an id of another kind → None."""
    queue = store.queue("opts-unknown")
    job_id = await queue.enqueue({"leg": "B3"})
    expect(await queue.cancel(job_id), "B3", did="could not cancel a fresh job", demands="cancel to delete it")
    never_issued: JobId = job_id + 1_000_000 if isinstance(job_id, int) else f"{job_id}-never-issued"
    other_kind: JobId = "no-such-job" if isinstance(job_id, int) else 10**12
    for label, unknown in (("cancelled", job_id), ("never issued", never_issued), ("of another kind", other_kind)):
        got = await queue.get_job(unknown)
        expect(got is None, "B3", did=f"returned {got!r} for get_job of an id {label}", demands="None")


INJECTED_START = datetime(1999, 12, 31, 23, 59, 58, 123457, tzinfo=UTC)
"""Where the T2 leg sets the injected clock: years away from any host's or server's clock."""


async def _injected_clock(ctx: RowContext) -> None:
    """T2: set the injected clock to 1999 and every instant the engine stamps follows it, not the host's clock."""
    clock = ctx.clock
    if clock is None:
        raise RuntimeError("the T2 leg runs on the manual clock (clock='manual')")
    clock.set(INJECTED_START)
    store = await ctx.open_store()
    queue = store.queue("t2", QueueOpts(visibility_timeout_s=30))
    job_id = await queue.enqueue({"leg": "T2"}, delay=5)
    job = await expect_stored(queue, job_id, "T2")
    for field, expected in (("enqueued_at", INJECTED_START), ("run_at", INJECTED_START + timedelta(seconds=5))):
        expect_instant(
            getattr(job, field),
            expected,
            "T2",
            f"{field} of a job enqueued with delay=5 under an injected clock set to 1999",
            tolerance_s=ctx.tolerance_s,
        )
    expect(
        await queue.claim_one("w") is None, "T2", did="handed out a job due 5 s after the injected now", demands="None"
    )
    clock.advance(5)
    handle = await queue.claim_one("w")
    expect(handle is not None, "T2", did="handed out nothing once the injected clock reached run_at", demands="the job")
    assert handle is not None
    expect_instant(
        handle.job.lease_expires_at,
        INJECTED_START + timedelta(seconds=35),
        "T2",
        "lease_expires_at of a claim at the injected now + 30 s",
        tolerance_s=ctx.tolerance_s,
    )


STEPPED_UNIT_S = 10.0
"""The leg's durations: it never waits, so they need not fit the real clock's tick."""
ONE_READ_LEG = "one clock read per op, each read a distinct instant"


class _Reads:
    """The reads of a ``SteppingClock`` that one op made."""

    def __init__(self, clock: SteppingClock) -> None:
        self._clock = clock

    async def of(self, operation: Awaitable[T], what: str) -> tuple[T, datetime | None]:
        """Await ``operation``; T1: it read the clock at most once. Returns its result and the instant it read."""
        first = len(self._clock.reads)
        result = await operation
        reads = self._clock.reads[first:]
        expect(
            len(reads) <= 1,
            "T1",
            did=f"read the injected clock {len(reads)} times during {what} ({[r.isoformat() for r in reads]})",
            demands="one clock read per operation",
        )
        return result, (reads[0] if reads else None)


def _from_read(ctx: RowContext, actual: datetime | None, read: datetime | None, offset_s: float, what: str) -> None:
    """T1: ``actual`` is the op's one read plus ``offset_s``, to the engine's resolution (no read: no check)."""
    if read is None:
        return
    slack_s = (ctx.resolution_us - 1) / 1_000_000  # the clock never moves unread: no real-clock tolerance
    expect_instant(actual, read + timedelta(seconds=offset_s), "T1", what, tolerance_s=slack_s)


async def _one_read_per_op(ctx: RowContext) -> None:
    """T1, E4: under a clock whose every read is a new instant, each op reads once and stamps what that read gave."""
    clock = SteppingClock(step=ctx.resolution)
    reads = _Reads(clock)
    store = await ctx.adapter.open_store(await ctx.new_location(), clock=clock, seed=ctx.seed)
    try:
        vt = 7 * STEPPED_UNIT_S
        queue = store.queue("one-read", QueueOpts(visibility_timeout_s=vt, max_attempts=5))
        job_id, read = await reads.of(queue.enqueue({"leg": "E4, one read"}), "enqueue() with neither option")
        job = await expect_stored(queue, job_id, "E4")
        expect_equal(job.run_at, job.enqueued_at, "E4", "run_at of an enqueue with neither option (one clock read)")
        _from_read(ctx, job.enqueued_at, read, 0, "enqueued_at of enqueue(), against the instant its read returned")

        later_id, read = await reads.of(
            queue.enqueue({"leg": "E2, E5, one read"}, delay=STEPPED_UNIT_S, expires=9 * STEPPED_UNIT_S),
            "enqueue(delay=…, expires=…)",
        )
        later = await expect_stored(queue, later_id, "T1")
        _from_read(ctx, later.enqueued_at, read, 0, "enqueued_at of enqueue(delay=…, expires=…)")
        _from_read(ctx, later.run_at, read, STEPPED_UNIT_S, "run_at of enqueue(delay=…), from its one read")
        _from_read(ctx, later.expires_at, read, 9 * STEPPED_UNIT_S, "expires_at of enqueue(expires=…)")
        expect(await queue.cancel(later_id), "T1", did="could not cancel the delayed job", demands="True")

        many, read = await reads.of(queue.enqueue_many([{"many": 0}, {"many": 1}]), "enqueue_many() of two")
        for each in many:
            stored = await expect_stored(queue, each, "E4")
            expect_equal(stored.run_at, stored.enqueued_at, "E4", f"run_at of job {each!r} of enqueue_many()")
            _from_read(ctx, stored.enqueued_at, read, 0, f"enqueued_at of job {each!r} of enqueue_many() (E11)")

        handle, read = await reads.of(queue.claim_one("w"), "claim_one()")
        expect(handle is not None, "T1", did="handed out nothing", demands="the first ready job")
        assert handle is not None
        _from_read(ctx, handle.job.lease_expires_at, read, vt, "lease_expires_at of claim_one()")
        beat, read = await reads.of(handle.heartbeat(), "heartbeat()")
        expect_equal(beat, True, "T1", "heartbeat() under a live lease")
        leased = await expect_stored(queue, handle.job.id, "T1")
        _from_read(ctx, leased.lease_expires_at, read, vt, "lease_expires_at after heartbeat()")
        retried, read = await reads.of(handle.retry(delay=0), "retry(delay=0)")
        expect_equal(retried, True, "T1", "retry(delay=0) under a live lease")
        ready = await expect_stored(queue, handle.job.id, "T1")
        _from_read(ctx, ready.run_at, read, 0, "run_at after retry(delay=0)")

        batch, read = await reads.of(queue.claim_batch("w", 2), "claim_batch('w', 2)")
        expect_equal(len(batch), 2, "T1", "jobs claim_batch('w', 2) handed out")
        for claimed in batch:
            _from_read(ctx, claimed.job.lease_expires_at, read, vt, f"lease_expires_at of job {claimed.job.id!r}")
        failed, read = await reads.of(batch[0].fail("one read"), "fail()")
        expect_equal(failed, True, "T1", "fail() under a live lease")
        dead = await expect_stored(queue, batch[0].job.id, "T1")
        _from_read(ctx, dead.died_at, read, 0, "died_at after fail()")
        acked, _ = await reads.of(batch[1].ack(), "ack()")
        expect_equal(acked, True, "T1", "ack() under a live lease")
        await reads.of(queue.sweep_expired(), "sweep_expired()")
        await reads.of(queue.ack_batch([job_id]), "ack_batch()")
    finally:
        await store.close()


async def enqueue_opts_resolution(ctx: RowContext) -> None:
    """E1–E7, B3, T1: stamps, ready time, expiry, attempts and priority as one enqueue resolves them."""
    if ctx.manual:
        await ctx.advance(SUB_SECOND_S)
    store = await ctx.open_store()
    await ctx.leg("precision", ("T1", "B3"), lambda c: _precision_legs(c, store))
    await ctx.leg("stamps", ("E1", "E6", "B3"), lambda c: _stamp_legs(c, store))
    await ctx.leg("ready time", ("E2", "E3", "E4"), lambda c: _ready_time_legs(c, store))
    await ctx.leg("expiry and priority", ("E5", "E7"), lambda _: _expiry_and_priority_legs(store))
    await ctx.leg("unknown ids", ("B3",), lambda _: _unknown_ids(store))
    await ctx.leg("injected clock", ("T2",), _injected_clock, clock="manual")
    if ctx.has(Capability.INJECTABLE_CLOCK):
        await ctx.leg(ONE_READ_LEG, ("T1", "E4"), _one_read_per_op)
    else:
        ctx.not_exercised(
            ("T1", "E4"), "the leg injects a clock that steps on each read (T2)", leg=ONE_READ_LEG, kind=Gap.CLOCK
        )


ROW = row("enqueue_opts_resolution", ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "B3", "T1", "T2"))(
    enqueue_opts_resolution
)
