"""Row sweep_and_retention (contract X1, X2, X3): expiry, the sweep, dead-letter retention, sweeps racing.

Part of the suite.

Legs: an expired job is never handed out, ready or with a lapsed lease, before
any sweep runs (X1); one sweep moves every expired ready AND processing job
(even under an unexpired lease) to dead as ``"expired"`` and every lapsed lease
with no attempt left as ``"max attempts exceeded"`` (a job both expired and
exhausted dies as ``"expired"``), with ``died_at`` its now, leaves lapsed leases
with attempts left and every other job exactly as they were, touches no other
queue and returns how many it moved (X2); dead jobs are deleted once ``died_at +
stamped retention <= now`` — not a microsecond before — and kept forever with
retention ``None``; DEC-sweep-order (docs/contract.md, X2): the
purge runs first, so a job a sweep moves to dead is kept by that same sweep
even with retention 0, and the next sweep deletes it (X2); a job heartbeated on
its last attempt is left alone by a sweep after its claim's lease but within
the heartbeat's, and moved to dead as ``"max attempts exceeded"`` by a sweep
once the heartbeat's lease lapsed (X2, C7: an engine that watches lapsed last
attempts must watch the deadline a heartbeat moved); concurrent sweeps —
tasks on one store, and stores on one location where ``shared_location`` is
declared — move each job once, so their counts add up (X3); a dead job with
retention ``None`` is still there, as it died, after ``CHURN_JOBS`` jobs went
through its queue on the batched paths, long enough for each shipped engine's
own upkeep to run (X2: the Postgres vacuum, SQLite's WAL checkpoints, the
in-memory engine's heap rebuilds).

When it fails, check the sweep's statements: the expiry ``UPDATE`` must match
``state IN ('ready', 'processing')`` with no lease condition; the exhaustion
``UPDATE`` matches ``processing`` with ``lease_expires_at <= now AND attempts
>= max_attempts``; the purge compares ``died_at + the job's stamped retention``
(not the sweeping handle's) with ``<=``; every statement is scoped to the
queue; all of them run in ONE transaction (``BEGIN IMMEDIATE``, or row locks)
and the count comes from the rows actually changed, so two sweeps cannot both
count one job. A dead job lost only after the churn: look at what the engine does
on its own every so many jobs (a vacuum, a compaction, an index rebuild), which
must keep dead jobs whose retention is ``None``. For X1, the claim predicate needs ``expires_at IS NULL OR
expires_at > now`` for ready and reclaimed rows alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.checks import expect, expect_equal, expect_handed_out
from alkstore_contract.suite.expected import LAST_ERROR_EXPIRED, LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.suite.harness import LegBody, RowContext
from alkstore_contract.suite.ledger import Gap
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue, Store
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

Check = Callable[[], Awaitable[None]]
"""The second half of a leg: runs once every leg's jobs are due (one wait for all of them)."""
Prepare = Callable[[RowContext, Store], Awaitable[Check]]


@dataclass(frozen=True, slots=True)
class SweepCast:
    """The jobs of the X2 leg, one per situation a sweep must tell apart."""

    already_dead: JobId
    processing_expired: JobId
    processing_live: JobId
    exhausted: JobId
    attempts_left: JobId
    exhausted_expired: JobId
    ready_expired: JobId
    ready_live: JobId
    ready_later: JobId
    other_expired: JobId


SWEEPERS = 4
RACE_EXPIRED = 120
RACE_EXHAUSTED = 30
ONE_US = 1e-6
TEN_YEARS_S = 10 * 365.25 * 24 * 3600


def _margin(ctx: RowContext) -> float:
    """Extra time to wait on the real clock so a deadline has surely passed (none under the manual clock)."""
    return 0.0 if ctx.manual else ctx.unit_s / 2


async def _snapshot(queue: Queue, job_id: JobId, clause: str, what: str) -> Job:
    job = await queue.get_job(job_id)
    expect(job is not None, clause, did=f"lost job {job_id} ({what})", demands="the job to be stored")
    assert job is not None
    return job


async def _expect_dead(
    ctx: RowContext, queue: Queue, job_id: JobId, error: str, before: datetime, after: datetime, what: str
) -> Job:
    job = await _snapshot(queue, job_id, "X2", what)
    expect(
        job.state == JobState.DEAD
        and job.last_error == error
        and job.lease_expires_at is None
        and job.claimed_by is None,
        "X2",
        did=f"left job {job_id} ({what}) as state={job.state}, last_error={job.last_error!r}, "
        f"lease_expires_at={job.lease_expires_at!r}, claimed_by={job.claimed_by!r} after a sweep",
        demands=f"state dead, last_error {error!r}, no lease and no claimant",
    )
    ctx.expect_during(job.died_at, before, after, "X2", f"died_at of job {job_id} ({what})")
    return job


async def _prepare_never_handed_out(ctx: RowContext, store: Store) -> Check:
    """X1: expired jobs are skipped by claims with no sweep ever run on the queue."""
    u = ctx.unit_s
    queue = store.queue("expiry-claims", QueueOpts(visibility_timeout_s=u, max_attempts=3))
    leased = await queue.enqueue({"leg": "leased, lease lapses, then expires"}, expires=2 * u, priority=5)
    at_once = await queue.enqueue({"leg": "expires=0: expired from the start"}, expires=0, priority=9)
    handle = await queue.claim_one("w")
    got = None if handle is None else handle.job.id
    expect(
        got == leased,
        "X1",
        did=f"handed out {got} where job {at_once} (priority 9, expires=0) and job {leased} (priority 5) were ready",
        demands=f"job {leased}: a job enqueued with expires=0 is expired from the start (expires_at <= now)",
    )
    ready = await queue.enqueue({"leg": "ready, expires"}, expires=2 * u, priority=5)
    live = await queue.enqueue({"leg": "never expires"}, priority=-1)

    async def check() -> None:
        got = [h.job.id for h in await queue.claim_batch("w", 10)]
        expect_equal(got, [live], "X1", f"ids handed out once jobs {leased} (lapsed lease) and {ready} expired")
        expect(await queue.claim_one("w") is None, "X1", did="handed out an expired job", demands="None")

    return check


async def _prepare_sweep_moves(ctx: RowContext, store: Store) -> Check:
    """X2: what one sweep moves, what it leaves, and the count it returns."""
    u = ctx.unit_s
    name = "sweep-moves"
    slow = store.queue(name, QueueOpts(visibility_timeout_s=20 * u, max_attempts=2))
    fast = store.queue(name, QueueOpts(visibility_timeout_s=u, max_attempts=3))
    other = store.queue("sweep-moves-other")

    already_dead = await slow.enqueue({"job": "failed before the sweep"}, expires=2 * u)
    failer = await slow.claim_one("w0")
    expect(failer is not None, "X2", did="handed out nothing", demands=f"job {already_dead}")
    assert failer is not None
    expect(await failer.fail("gave up") is True, "X2", did="refused fail() under a live lease", demands="True")

    processing_expired = await slow.enqueue({"job": "processing, lease live, expires"}, expires=2 * u)
    processing_live = await slow.enqueue({"job": "processing, lease live, no expiry"})
    exhausted = await fast.enqueue({"job": "lease lapses, no attempt left"}, max_attempts=1)
    attempts_left = await fast.enqueue({"job": "lease lapses, attempts left"})
    exhausted_expired = await fast.enqueue(
        {"job": "lease lapses, no attempt left, expires"}, max_attempts=1, expires=2 * u
    )
    held = [processing_expired, processing_live, exhausted, attempts_left, exhausted_expired]
    handles = await slow.claim_batch("w1", len(held) + 1)
    expect(
        sorted(map(str, (h.job.id for h in handles))) == sorted(map(str, held)),
        "X2",
        did=f"handed out {[h.job.id for h in handles]}",
        demands=f"the {len(held)} ready jobs {held}",
    )
    cast = SweepCast(
        already_dead=already_dead,
        processing_expired=processing_expired,
        processing_live=processing_live,
        exhausted=exhausted,
        attempts_left=attempts_left,
        exhausted_expired=exhausted_expired,
        ready_expired=await slow.enqueue({"job": "ready, expires"}, expires=2 * u),
        ready_live=await slow.enqueue({"job": "ready, no expiry"}),
        ready_later=await slow.enqueue({"job": "ready, expires much later"}, expires=100 * u),
        other_expired=await other.enqueue({"job": "another queue's, expires"}, expires=2 * u),
    )
    return lambda: _check_sweep_moves(ctx, slow, other, cast)


async def _check_sweep_moves(ctx: RowContext, slow: Queue, other: Queue, cast: SweepCast) -> None:
    untouched = {
        job_id: await _snapshot(slow, job_id, "X2", "before the sweep")
        for job_id in (cast.already_dead, cast.processing_live, cast.attempts_left, cast.ready_live, cast.ready_later)
    }
    other_before = await _snapshot(other, cast.other_expired, "X2", "another queue's job before the sweep")

    moved, before, after = await ctx.timed(slow.sweep_expired())
    expect_equal(moved, 4, "X2", "the count sweep_expired() returned (2 expired live jobs, 1 exhausted, 1 both)")
    await _expect_dead(ctx, slow, cast.ready_expired, LAST_ERROR_EXPIRED, before, after, "ready, expired")
    job = await _expect_dead(
        ctx, slow, cast.processing_expired, LAST_ERROR_EXPIRED, before, after, "processing under a live lease, expired"
    )
    expect_equal(job.attempts, 1, "X2", f"attempts of job {cast.processing_expired} moved to dead")
    await _expect_dead(
        ctx, slow, cast.exhausted, LAST_ERROR_MAX_ATTEMPTS, before, after, "lapsed lease, no attempt left"
    )
    await _expect_dead(
        ctx, slow, cast.exhausted_expired, LAST_ERROR_EXPIRED, before, after, "lapsed lease, no attempt left, expired"
    )
    for job_id, earlier in untouched.items():
        expect_equal(await slow.get_job(job_id), earlier, "X2", f"job {job_id} ({earlier.payload}) after the sweep")
    expect_equal(
        await other.get_job(cast.other_expired),
        other_before,
        "X2",
        "another queue's expired job after this queue's sweep",
    )
    expect_equal(await slow.sweep_expired(), 0, "X2", "the count of a second sweep with nothing new to move")
    moved_other, before, after = await ctx.timed(other.sweep_expired())
    expect_equal(moved_other, 1, "X2", "the count of the other queue's own sweep")
    await _expect_dead(
        ctx, other, cast.other_expired, LAST_ERROR_EXPIRED, before, after, "the other queue's expired job"
    )


async def _fail_now(queue: Queue, worker: str, job_id: JobId) -> Job:
    handle = expect_handed_out(await queue.claim_one(worker), job_id, "X2", demands=f"job {job_id}")
    expect(await handle.fail() is True, "X2", did=f"refused fail() of job {job_id}", demands="True")
    return await _snapshot(queue, job_id, "X2", "just failed")


async def _purging_sweep(sweeper: Queue) -> None:
    """A sweep with no live job to move returns 0, however many dead jobs it purges (X2)."""
    expect_equal(await sweeper.sweep_expired(), 0, "X2", "the count of a sweep that only purges")


async def _expect_purged(sweeper: Queue, job_id: JobId, *, did: str, demands: str) -> None:
    """A purging sweep, after which dead job ``job_id`` must be gone (deleted by its retention, X2)."""
    await _purging_sweep(sweeper)
    expect(await sweeper.get_job(job_id) is None, "X2", did=did, demands=demands)


async def _leg_retention(ctx: RowContext, store: Store) -> None:
    """X2: the purge of dead jobs by their stamped retention, at the exact boundary; None keeps them."""
    u = ctx.unit_s
    retention = 2 * u
    name = "retention"
    sweeper = store.queue(name)  # retention None on the sweeping handle: the jobs' own stamps must count
    kept = await _fail_now(sweeper, "w", await sweeper.enqueue({"r": "none"}))
    limited_q = store.queue(name, QueueOpts(dead_letter_retention_s=retention))
    limited = await _fail_now(limited_q, "w", await limited_q.enqueue({"r": retention}))
    zero_q = store.queue(name, QueueOpts(dead_letter_retention_s=0))
    zero = await _fail_now(zero_q, "w", await zero_q.enqueue({"r": 0}))
    expect(
        limited.died_at is not None,
        "X2",
        did=f"read back job {limited.id} after fail() as {limited.state} with no died_at",
        demands="a failed job dead with its died_at, which its retention counts from",
    )
    assert limited.died_at is not None

    stored = await ctx.stored_jobs()
    await _expect_purged(
        sweeper,
        zero.id,
        did=f"kept job {zero.id}, dead with retention 0, through a sweep at or after its died_at",
        demands="died_at + 0 <= now to delete it",
    )
    expect_equal(
        await ctx.stored_jobs(),
        stored - 1,
        "X2",
        "the oracle's count of stored jobs after a sweep purged one dead job (deleted, not hidden)",
    )
    deadline = limited.died_at + timedelta(seconds=retention)
    if ctx.manual:
        await ctx.advance((deadline - ctx.now()).total_seconds() - ONE_US)
    early = ctx.manual or ctx.now() + timedelta(seconds=ctx.tolerance_s) < deadline
    await _purging_sweep(sweeper)
    if early:
        expect_equal(
            await sweeper.get_job(limited.id),
            limited,
            "X2",
            f"job {limited.id} (retention {retention} s) "
            + ("1 µs before died_at + retention" if ctx.manual else "before died_at + retention"),
        )
    else:
        ctx.ledger.undecided(
            ("X2",),
            "the 'not before died_at + retention' check ran after the deadline: the host was too slow for a tick "
            f"of {ctx.unit_s} s (raise --alkstore-tick)",
        )
    await ctx.advance(ONE_US if ctx.manual else retention + _margin(ctx))
    await _expect_purged(
        sweeper,
        limited.id,
        did=f"kept job {limited.id} with died_at + retention <= now",
        demands="the sweep to delete it",
    )
    if ctx.manual:
        await ctx.advance(TEN_YEARS_S)
        await _purging_sweep(sweeper)
    else:
        ctx.not_exercised(
            ("X2",),
            "retention None is checked after seconds, not ten years, on the real clock",
            leg="retention None after ten years",
            kind=Gap.CLOCK,
        )
    expect_equal(await sweeper.get_job(kept.id), kept, "X2", f"job {kept.id} (retention None) after sweeps")


async def _prepare_retention_after_move(ctx: RowContext, store: Store) -> Check:
    """X2, DEC-sweep-order: a job the sweep moves is kept by that sweep even with retention 0; the next deletes it."""
    queue = store.queue("retention-zero", QueueOpts(dead_letter_retention_s=0))
    job_id = await queue.enqueue({"r": "expires, retention 0"}, expires=ctx.unit_s)
    return lambda: _check_retention_after_move(ctx, queue, job_id)


async def _check_retention_after_move(ctx: RowContext, queue: Queue, job_id: JobId) -> None:
    moved, before, after = await ctx.timed(queue.sweep_expired())
    expect_equal(moved, 1, "X2", "the count of the sweep that moves the expired job")
    await _expect_dead(ctx, queue, job_id, LAST_ERROR_EXPIRED, before, after, "moved by this sweep, retention 0")
    expect_equal(await queue.sweep_expired(), 0, "X2", "the count of the next sweep")
    expect(
        await queue.get_job(job_id) is None,
        "X2",
        did=f"kept job {job_id} (dead, retention 0) through the next sweep",
        demands="died_at + 0 <= now to delete it",
    )


HEARTBEAT_UNITS = 4
"""The heartbeat on the last attempt sets a lease of this many units (and the run's tolerance, so a real-clock
sweep two units in is surely before it); the claim's lease is one unit."""


async def _leg_heartbeat_last_attempt(ctx: RowContext, store: Store) -> None:
    """X2: a heartbeat on the last attempt moves the deadline a sweep must wait for, and then act on.

    A leg of its own, on its own timeline, after the others: moving the row's clock past the heartbeat's
    lease before their checks would carry their jobs past the instants those checks are about. Between
    the claim's lease (1 unit) and the heartbeat's (4 units and the tolerance) a sweep moves nothing; after
    the heartbeat's it moves the job to dead as exhausted. On a real clock a host too slow to sweep before
    the heartbeat's lease leaves the leg undecided (never failed, never passed), as ``_leg_retention`` does.
    """
    u = ctx.unit_s
    queue = store.queue("heartbeat-last-attempt", QueueOpts(visibility_timeout_s=u, max_attempts=1))
    job_id = await queue.enqueue({"leg": "heartbeat on the last attempt, then a lapse"})
    handle = await queue.claim_one("w")
    expect(handle is not None, "X2", did="handed out nothing", demands=f"job {job_id}")
    assert handle is not None
    extend = HEARTBEAT_UNITS * u + ctx.tolerance_s
    beat, before, _ = await ctx.timed(handle.heartbeat(extend))
    expect_equal(beat, True, "X2", f"heartbeat({extend} s) on the job's only attempt")
    lease_from = before + timedelta(seconds=extend)
    await ctx.advance(2 * u)
    moved, _, after = await ctx.timed(queue.sweep_expired())
    if not (ctx.manual or after + timedelta(seconds=ctx.tolerance_s) < lease_from):
        ctx.ledger.undecided(
            ("X2",),
            "the sweep between a claim's lease and its heartbeat's ran after the heartbeat's: the host was too slow "
            f"for a tick of {ctx.unit_s} s (raise --alkstore-tick)",
        )
        return
    expect_equal(
        moved,
        0,
        "X2",
        "the count of a sweep after the claim's lease lapsed but before the heartbeat's, on the job's last attempt",
    )
    job = await _snapshot(queue, job_id, "X2", "heartbeated on its last attempt, its new lease not yet lapsed")
    expect_equal(job.state, JobState.PROCESSING, "X2", "state of the job whose heartbeat's lease has not lapsed")
    await ctx.advance((lease_from - ctx.now()).total_seconds() + _margin(ctx))
    moved, before, after = await ctx.timed(queue.sweep_expired())
    expect_equal(moved, 1, "X2", "the count of a sweep once the heartbeat's lease on the last attempt lapsed")
    await _expect_dead(
        ctx, queue, job_id, LAST_ERROR_MAX_ATTEMPTS, before, after, "heartbeated on its last attempt, then lapsed"
    )


CHURN_JOBS = 6_000
"""Jobs the churn leg puts through one queue: past the first upkeep of every shipped engine, with some room.

The suite knows no engine's internals, so the length is read off their docs (measured by running them):
the Postgres engine vacuums its jobs table from a task of its own once its statements left 10,000 dead
row versions (two per job: the claim's update and the ack's delete) and its claims have stepped over them
for as long as a small table's vacuum takes, which for claims of ``CHURN_BATCH`` or fewer is at the
5,000th job (claims of 100 would need some 14,200), so the last 1,000 jobs, some 200 statements, run while
the vacuum's task does; SQLite engines (the reference one, the Node.js and Rust
ones) checkpoint their WAL every 1,000 pages, which a few hundred of the churn's transactions write; the
in-memory engine compacts its lease heap and rebuilds its heaps once stale entries outnumber twice its live
jobs and 1,024 more (each claim of a last attempt files one). An engine whose upkeep waits for more is
judged only as far as the churn reaches."""
CHURN_BATCH = 10
"""Jobs per ``claim_batch`` and ``ack_batch`` of the churn: small batches call the Postgres vacuum soonest."""
CHURN_ENQUEUE = 500
"""Jobs per ``enqueue_many`` of the churn; a sweep of the queue follows each (with nothing to move)."""
CHURN_LEASE_S = 3600.0
"""The churn's lease: longer than any churn takes on the real clock, so each ack finds its lease live."""
SETTLE_S = 0.2
"""Real seconds the churn leg waits on the real clock before its check, so upkeep an engine runs in a task of
its own (the Postgres vacuum) surely ended; one more round and a sweep follow. Never on the manual clock,
where no row waits for real time (tests/test_manual_clock_does_not_sleep.py): there the statements the
churn runs after such upkeep started, and that last round, are its time to end."""


CHURN_OPTS = QueueOpts(visibility_timeout_s=CHURN_LEASE_S, max_attempts=1)
"""The churn's jobs: every claim is a last attempt, which the in-memory engine files for its sweep."""


async def churn_through(queue: Queue, jobs: int) -> None:
    """Put ``jobs`` jobs through ``queue`` (a multiple of ``CHURN_ENQUEUE``): enqueued, claimed, acked, swept."""
    for start in range(0, jobs, CHURN_ENQUEUE):
        await queue.enqueue_many([{"churn": i} for i in range(start, start + CHURN_ENQUEUE)])
        for _ in range(CHURN_ENQUEUE // CHURN_BATCH):
            await _churn_round(queue, CHURN_BATCH)
        expect_equal(await queue.sweep_expired(), 0, "X2", "the count of a churn sweep with nothing to move")


async def _churn_round(queue: Queue, batch: int) -> None:
    """Claim ``batch`` jobs and ack them all in one ``ack_batch``."""
    handles = await queue.claim_batch("churn", batch)
    expect_equal(len(handles), batch, "X2", "jobs handed out by one claim_batch of the churn")
    acked = await queue.ack_batch([h.job.id for h in handles])
    expect_equal(acked, batch, "X2", "the count of ack_batch over jobs the churn just claimed")


async def _leg_kept_through_churn(ctx: RowContext, store: Store) -> None:
    """X2: a dead job with retention ``None`` is kept across a long churn of its queue and the engine's upkeep.

    Retention ``None`` keeps a dead job forever, and an engine's own housekeeping (a vacuum, a checkpoint, a
    compaction, a rebuild of its indexes) is a second place that may throw dead jobs away; it runs only after
    many jobs, which no other leg puts through a queue. So the job dies first, then ``CHURN_JOBS`` jobs go
    through the same queue on the batched paths, a sweep after every ``CHURN_ENQUEUE``, then, on the real
    clock, the leg waits ``SETTLE_S`` (a bounded wait for upkeep in a task of its own), runs one more round
    and a sweep, and reads the dead job back exactly as it died: dead, with its error, its ``died_at`` and its attempts.
    """
    name = "retention-churn"
    kept_q = store.queue(name)
    kept_id = await kept_q.enqueue({"leg": "dead, retention None, then a long churn"})
    handle = await kept_q.claim_one("w")
    expect(handle is not None, "X2", did="handed out nothing", demands=f"job {kept_id}")
    assert handle is not None
    expect(await handle.fail("kept forever") is True, "X2", did=f"refused fail() of job {kept_id}", demands="True")
    kept = await _snapshot(kept_q, kept_id, "X2", "just failed, retention None")
    churn = store.queue(name, CHURN_OPTS)
    await churn_through(churn, CHURN_JOBS)
    if not ctx.manual:
        await asyncio.sleep(SETTLE_S)
    await churn.enqueue_many([{"churn": "last"}])
    await _churn_round(churn, 1)
    expect_equal(await churn.sweep_expired(), 0, "X2", "the count of a churn sweep with nothing to move")
    after = f"after {CHURN_JOBS} jobs went through its queue and its sweeps"
    now = await kept_q.get_job(kept_id)
    expect(
        now is not None,
        "X2",
        did=f"lost job {kept_id}, dead with retention None, {after}",
        demands="the dead job kept forever: retention None is never purged, by a sweep or by the engine's upkeep",
    )
    expect_equal(now, kept, "X2", f"job {kept_id} (dead, retention None) {after}")


async def _fill_race(ctx: RowContext, store: Store, name: str) -> list[JobId]:
    """Expired ready jobs and lapsed exhausted leases, all due for one sweep after one unit."""
    u = ctx.unit_s
    queue = store.queue(name, QueueOpts(visibility_timeout_s=u, max_attempts=1))
    exhausted = list(await queue.enqueue_many([{"exhausted": i} for i in range(RACE_EXHAUSTED)]))
    handles = await queue.claim_batch("w", RACE_EXHAUSTED)
    expect_equal(len(handles), RACE_EXHAUSTED, "X3", "jobs handed out to set up lapsed leases")
    expired = list(await queue.enqueue_many([{"expired": i} for i in range(RACE_EXPIRED)], expires=u))
    return exhausted + expired


async def _race(ctx: RowContext, queues: list[Queue], ids: list[JobId], leg: str) -> None:
    counts = await asyncio.gather(*(queue.sweep_expired() for queue in queues))
    expect(
        sum(counts) == len(ids),
        "X3",
        did=f"({leg}) returned counts {counts} from {len(queues)} concurrent sweeps, {sum(counts)} in all",
        demands=f"counts adding up to the {len(ids)} jobs moved, each moved once",
    )
    for job_id in ids:
        job = await queues[0].get_job(job_id)
        expect(
            job is not None and job.state == JobState.DEAD and job.died_at is not None,
            "X3",
            did=f"({leg}) left job {job_id} as {job!r} after concurrent sweeps",
            demands="every due job moved to dead",
        )
    again = await asyncio.gather(*(queue.sweep_expired() for queue in queues))
    expect_equal(again, [0] * len(queues), "X3", f"({leg}) counts of sweeps after everything was moved")


async def _prepare_concurrent(ctx: RowContext, store: Store) -> Check:
    """X3: concurrent sweeps on one store, and on several stores sharing one location where declared."""
    on_store = await _fill_race(ctx, store, "sweep-race")
    shared: tuple[list[Store], list[JobId]] | None = None
    if ctx.has(Capability.SHARED_LOCATION):
        location = await ctx.new_location()
        stores = [await ctx.open_store(location) for _ in range(SWEEPERS)]
        shared = stores, await _fill_race(ctx, stores[0], "sweep-race")
    else:
        ctx.not_exercised(
            ("X3",),
            "the engine does not declare shared_location, so sweeps raced as tasks on one store only",
            leg="sweeps from several stores",
        )

    async def check() -> None:
        await _race(ctx, [store.queue("sweep-race") for _ in range(SWEEPERS)], on_store, "tasks on one store")
        if shared is not None:
            stores, ids = shared
            await _race(ctx, [s.queue("sweep-race") for s in stores], ids, "stores on one location")

    return check


async def sweep_and_retention(ctx: RowContext) -> None:
    """X1: expired never handed out. X2: sweep moves, leaves, purges, counts. X3: concurrent sweeps add up."""
    store = await ctx.open_store()
    legs: tuple[tuple[str, tuple[str, ...], Prepare], ...] = (
        ("never handed out", ("X1",), _prepare_never_handed_out),
        ("sweep moves", ("X2",), _prepare_sweep_moves),
        ("retention after a move", ("X2",), _prepare_retention_after_move),
        ("concurrent sweeps", ("X3",), _prepare_concurrent),
    )
    checks: dict[str, Check] = {}

    def set_up(name: str, prepare: Prepare) -> LegBody:
        async def leg(leg_ctx: RowContext) -> None:
            checks[name] = await prepare(leg_ctx, store)

        return leg

    def run_check(check: Check) -> LegBody:
        async def leg(_: RowContext) -> None:
            await check()

        return leg

    for name, clauses, prepare in legs:
        await ctx.leg(f"{name}: set up", clauses, set_up(name, prepare))
    await ctx.advance(2 * ctx.unit_s + _margin(ctx))
    for name, clauses, _ in legs:
        if name in checks:
            await ctx.leg(name, clauses, run_check(checks[name]))
    await ctx.leg("retention", ("X2",), lambda c: _leg_retention(c, store))
    await ctx.leg(
        "heartbeat on the last attempt, then a lapse", ("X2",), lambda c: _leg_heartbeat_last_attempt(c, store)
    )
    await ctx.leg("retention None kept through a long churn", ("X2",), lambda c: _leg_kept_through_churn(c, store))


ROW = row("sweep_and_retention", ("X1", "X2", "X3"))(sweep_and_retention)
