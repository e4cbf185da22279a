"""Row server_clock (contract T3): on a server whose clock runs ahead of this host's, every instant is the server's.

Part of the suite.

T3: a ``networked`` engine whose default clock is its server's stamps and
compares every instant of an op by the server's clock, so worker hosts with
skewed clocks agree. On one machine the client's and the server's clocks
agree, so a store that computed a lease from the client's clock passes every
other row. Here the adapter makes a location on a server of its own whose clock
runs ``OFFSET_S`` ahead (``SkewedServerAdapter.create_skewed_server_location``),
and the row measures that offset *through the engine* before it judges
anything: the ``enqueued_at`` of a first enqueue, against this host's clock
read around it, must lie ``OFFSET_S`` ahead (within ``OFFSET_SLACK_S``), never
the hook's word for it. Then, with the measured offset, every instant an
enqueue, claim, heartbeat, retry and fail stamps must be the server's now
(``expires_at``, ``run_at``, ``lease_expires_at``, ``died_at``), and a job whose
``run_at`` is past on the server's clock (though ahead on this host's) must be
claimable: a claim compares by the server's clock too.

The second half of T3 — an injected clock goes through the same SQL — is
checked on the same skewed server when the engine declares
``injectable_clock``: a store opened with a ``ManualClock`` (2030, ahead of
both) stamps exactly that clock's instants and claims by it.

Both parts are about the engine's default clock and a clock the row hands it
itself, so the row runs the same on ``--alkstore-clock=manual`` and
``system``: the run's own clock is not what T3 is about.

A networked engine whose adapter lacks the hook has T3 ``not exercised
(untested)``: never passed, named on the certificate. A machine without what
the hook needs (initdb, libfaketime for the Postgres engine) leaves the leg
``not run here``, named on the certificate, unless ``--alkstore-require``
(CI), where it fails T3.

When it fails, check that every statement of an op takes ``now`` from the
server (``statement_timestamp()``) when the store was opened without a clock,
and never from the client's ``datetime.now()`` — a driver that fills in a
missing ``now`` on the client before a claim, a heartbeat or a retry gets the
client's clock; that an injected clock is passed to the same SQL as a
parameter; and, if the offset measured is not the one asked for, that the
adapter's skewed server really runs its clock ahead (a bare connection's
``SELECT clock_timestamp()`` shows it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from alkstore_contract import JobState, QueueOpts
from alkstore_contract.adapter import Capability, SkewedServerAdapter
from alkstore_contract.clock import ManualClock
from alkstore_contract.suite.checks import expect, expect_claimed, expect_equal, expect_stored
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.ledger import Gap
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue
from alkstore_contract.types import JobId

T = TypeVar("T")

CLAUSE = "T3"
LEG = "skewed server"
OFFSET_S = 7200.0
"""How far ahead of this host's clock the row asks the server's to run: far past any tolerance."""
OFFSET_SLACK_S = 60.0
"""How far the offset measured through the engine may lie from ``OFFSET_S`` (a server started at a fixed instant
drifts from the host by its start-up time)."""
CLOCK_SLACK_S = 0.05
"""Allowance on each instant beyond the bracket the host's clock reads give (two processes read the clock)."""
VISIBILITY_S = 120
EXPIRES_S = 600
HEARTBEAT_S = 60
RETRY_S = 30
EARLY_S = 60
"""A job's explicit ``run_at`` this far ahead of the host's clock: past on the server's, so claimable at once."""


@dataclass(frozen=True, slots=True)
class Offset:
    """The server's clock ahead of this host's, bracketed by the host's clock read around the enqueue that showed it."""

    low: timedelta
    high: timedelta


def _host_now() -> datetime:
    return datetime.now(UTC)


def _servers_now(
    ctx: RowContext,
    actual: datetime | None,
    window: tuple[datetime, datetime],
    offset: Offset,
    plus_s: float,
    what: str,
) -> None:
    """``actual`` must be the server's now (+ ``plus_s``) during an op this host's clock read ``window`` around."""
    slack = timedelta(seconds=CLOCK_SLACK_S) + ctx.resolution
    low = window[0] + offset.low + timedelta(seconds=plus_s) - slack
    high = window[1] + offset.high + timedelta(seconds=plus_s) + slack
    expect(
        actual is not None and low <= actual <= high,
        CLAUSE,
        did=f"gave {what} = {actual!r} on a server whose clock runs {OFFSET_S:.0f} s ahead of this host's",
        demands=f"the server's now{f' + {plus_s:g} s' if plus_s else ''}, in [{low}, {high}] (this host's clock "
        "around the op and the offset measured through the engine), never the client's clock",
    )


def _exactly(ctx: RowContext, actual: datetime | None, expected: datetime, what: str) -> None:
    """``actual`` must be the injected clock's instant ``expected`` (to the engine's resolution), not the server's."""
    expect(
        actual is not None and abs(actual - expected) < ctx.resolution,
        CLAUSE,
        did=f"gave {what} = {actual!r} for a store opened with a ManualClock at {expected!r}",
        demands=f"{what} = {expected!r}: an injected clock goes through the same SQL, whatever the server's clock",
    )


async def _measured_offset(queue: Queue) -> tuple[JobId, Offset, tuple[datetime, datetime]]:
    """Enqueue once and bracket the server's offset by its ``enqueued_at``: the job, the offset, the host's reads."""
    before = _host_now()
    job_id = await queue.enqueue({"t3": "measures the server's clock"}, expires=EXPIRES_S)
    after = _host_now()
    job = await expect_stored(queue, job_id, CLAUSE)
    offset = Offset(job.enqueued_at - after, job.enqueued_at - before)
    middle_s = ((offset.low + offset.high) / 2).total_seconds()
    expect(
        abs(middle_s - OFFSET_S) <= OFFSET_SLACK_S,
        CLAUSE,
        did=f"stamped enqueued_at = {job.enqueued_at!r}, {middle_s:.1f} s from this host's clock, on a server the "
        f"adapter started with its clock {OFFSET_S:.0f} s ahead",
        demands=f"the server's now, {OFFSET_S:.0f} s (± {OFFSET_SLACK_S:.0f} s) ahead of this host's clock (either the "
        "engine stamps by the host's clock, or the adapter's skewed server does not run ahead)",
    )
    return job_id, offset, (before, after)


async def _timed(operation: Awaitable[T]) -> tuple[T, tuple[datetime, datetime]]:
    """Await ``operation`` between two reads of this host's clock."""
    before = _host_now()
    result = await operation
    return result, (before, _host_now())


async def _default_clock(ctx: RowContext, location: str) -> None:
    """A store with the engine's default clock stamps and compares every instant by the skewed server's clock."""
    store = await ctx.open_store(location, clock=None)
    queue = store.queue("t3-server", QueueOpts(visibility_timeout_s=VISIBILITY_S, max_attempts=3))
    dying, offset, window = await _measured_offset(queue)
    job = await expect_stored(queue, dying, CLAUSE)
    _servers_now(ctx, job.run_at, window, offset, 0, "run_at of an enqueue with neither delay nor run_at")
    _servers_now(ctx, job.expires_at, window, offset, EXPIRES_S, f"expires_at of enqueue(expires={EXPIRES_S})")
    early_at = _host_now() + timedelta(seconds=EARLY_S)
    early = await queue.enqueue({"t3": "due on the server's clock"}, run_at=early_at, priority=1)
    handle, window = await _timed(
        expect_claimed(
            queue,
            "t3",
            early,
            CLAUSE,
            because=f"its run_at {early_at} is {EARLY_S} s ahead of this host's clock but "
            f"{OFFSET_S - EARLY_S:.0f} s past on the server's, and a claim compares by the server's now",
        )
    )
    _servers_now(ctx, handle.job.lease_expires_at, window, offset, VISIBILITY_S, "lease_expires_at of a claim")
    beat, window = await _timed(handle.heartbeat(extend=HEARTBEAT_S))
    expect(beat, CLAUSE, did="refused heartbeat() under a lease live on the server's clock", demands="True")
    job = await expect_stored(queue, early, CLAUSE)
    _servers_now(
        ctx, job.lease_expires_at, window, offset, HEARTBEAT_S, f"lease_expires_at of heartbeat({HEARTBEAT_S})"
    )
    retried, window = await _timed(handle.retry(delay=RETRY_S))
    expect(retried, CLAUSE, did="refused retry() under a lease live on the server's clock", demands="True")
    job = await expect_stored(queue, early, CLAUSE)
    expect_equal(job.state, JobState.READY, CLAUSE, "the state after retry() with attempts left")
    _servers_now(ctx, job.run_at, window, offset, RETRY_S, f"run_at of retry(delay={RETRY_S})")
    held = await expect_claimed(
        queue,
        "t3",
        dying,
        CLAUSE,
        because=f"ready since the server's now, it goes before the retried job due {RETRY_S} s later",
    )
    failed, window = await _timed(held.fail("t3"))
    expect(failed, CLAUSE, did="refused fail() under a lease live on the server's clock", demands="True")
    job = await expect_stored(queue, dying, CLAUSE)
    _servers_now(ctx, job.died_at, window, offset, 0, "died_at of fail()")
    ctx.note(
        f"server_clock: the server's clock was measured {offset.low.total_seconds():.3f}–"
        f"{offset.high.total_seconds():.3f} s ahead of this host's through the engine (asked: {OFFSET_S:.0f} s)"
    )


async def _injected_clock(ctx: RowContext, location: str) -> None:
    """A store opened with a ``ManualClock`` on the skewed server stamps and claims by that clock, exactly."""
    clock = ManualClock()
    store = await ctx.open_store(location, clock=clock)
    queue = store.queue("t3-injected", QueueOpts(visibility_timeout_s=VISIBILITY_S))
    job_id = await queue.enqueue({"t3": "the injected clock"})
    job = await expect_stored(queue, job_id, CLAUSE)
    _exactly(ctx, job.enqueued_at, clock.now(), "enqueued_at")
    handle = await expect_claimed(
        queue,
        "t3",
        job_id,
        CLAUSE,
        because="it is ready since the injected clock's now (in the server's future), and a claim compares by "
        "the injected clock",
    )
    _exactly(ctx, handle.job.lease_expires_at, clock.now() + timedelta(seconds=VISIBILITY_S), "lease_expires_at")


def _skewed(ctx: RowContext) -> SkewedServerAdapter:
    adapter = ctx.adapter
    assert isinstance(adapter, SkewedServerAdapter)
    return adapter


def _leg(reason: str | None) -> Callable[[RowContext], Awaitable[None]]:
    """The leg on a fresh skewed-server location; under ``--alkstore-require`` a missing tool (``reason``) fails it."""

    async def body(ctx: RowContext) -> None:
        expect(
            reason is None,
            CLAUSE,
            did=f"could not be given a skewed server here: {reason}",
            demands="T3 checked on a server whose clock runs ahead of the host's (--alkstore-require: no leg may be "
            "left out for a missing tool)",
        )
        location = await _skewed(ctx).create_skewed_server_location(OFFSET_S)
        ctx.adopt_location(location)
        await _default_clock(ctx, location)
        if ctx.has(Capability.INJECTABLE_CLOCK):
            await _injected_clock(ctx, location)

    return body


async def server_clock(ctx: RowContext) -> None:
    """T3: on a server whose clock runs 2 h ahead of this host's, every instant an op stamps is the server's."""
    adapter = ctx.adapter
    if not isinstance(adapter, SkewedServerAdapter):
        ctx.not_exercised(
            (CLAUSE,),
            "the adapter has no skewed-server hook (skewed_server_unavailable_reason, create_skewed_server_location), "
            "so nothing checked whose clock the engine's default instants follow",
            leg=LEG,
            kind=Gap.UNTESTED,
        )
        return
    reason = await adapter.skewed_server_unavailable_reason()
    if reason is not None and not ctx.require:
        ctx.not_exercised(
            (CLAUSE,), f"{reason} (--alkstore-require makes this a failure)", leg=LEG, kind=Gap.NOT_RUN_HERE
        )
        return
    await ctx.leg(LEG, (CLAUSE,), _leg(reason))


ROW = row("server_clock", (CLAUSE,), requires=(Capability.NETWORKED,))(server_clock)
