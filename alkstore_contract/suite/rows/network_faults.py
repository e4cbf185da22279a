"""Row network_faults (contract N1, N2, N3, N5, N6): an engine cut off its server, and what it does about it.

Part of the suite.

Every leg puts the suite's fault proxy (``alkstore_contract.suite.fault_proxy``) between
the engine and its server through the adapter's ``location_via``, and times
every op against the bounds the adapter reports (``op_timeout_s``,
``reconnect_within_s``) plus one second of slack; an op that hangs is left
behind and counted as a violation, never waited for.

- N1/N2 partition: the proxy stalls (sockets open, nothing forwarded); enqueue,
  enqueue_many, claim_one, get_job, a handle's heartbeat and ack each raise
  ``StoreUnavailable`` within the bound. The stall ends; the same store serves
  an enqueue and a get_job within ``reconnect_within_s``.
- N1/N2 server gone: every connection is reset and new ones are refused; the
  same ops raise ``StoreUnavailable`` in time; once connections are accepted
  again the same store serves again in time.
- N3 cut commit: the proxy is armed just before an enqueue is called; it
  delivers what the engine sends and aborts the connection as the first byte
  of the server's answer arrives, whatever the bytes say (an engine that
  encodes or encrypts its traffic is cut the same). An op may take several
  round trips (a prepare, then the execution), so the leg repeats on a fresh
  store and location, cutting at answer 1, 2, … until the enqueue needs no
  more: each time the enqueue may raise ``StoreUnavailable`` or return, but
  the location holds the job at most once (the oracle counts it).
- N3 lost claim answer: the same cuts on a claim, each on its own queue: the
  claim raises ``StoreUnavailable``, and once its lease has passed another
  store claims the job.
- N6 settle in doubt: the same cuts on a claimed job's ack, each on a fresh
  store and location: an ack that raised ``StoreUnavailable`` has not spent its
  handle, so the same handle's ack again (repeated while it raises
  ``StoreUnavailable``, within ``reconnect_within_s``) returns a bool, never
  ``HandleSpent``; afterwards the job is gone (one of the two completed it,
  within the lease nothing else could), ``False`` only when the first attempt
  had already deleted it, and a third ack raises ``HandleSpent`` (H4).
- N5: a handle's heartbeat fails in a stall while its lease lapses; another
  store (straight to the server) claims the job; the stall ends and the old
  handle's ack returns False or raises ``StoreUnavailable``, never True; the
  new holder's ack succeeds.

When it fails, check: a timeout on every wait for the server (connect,
acquire, statement, and the cancel or close that follows a timeout); that a
lost or timed-out connection is dropped from the pool rather than reused or
kept forever; that no statement is replayed after its answer was lost; and
that every handle statement is fenced by the claim's token also after a
reconnect.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.adapter import Capability
from alkstore_contract.errors import HandleSpent
from alkstore_contract.suite.checks import expect, expect_handed_out
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.network import Outcome, Wire, open_wire
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import JobId, QueueOpts

MAX_CUT_ANSWERS = 4
"""The cut legs cut an op at each of its first this many answers (round trips), one fresh store each."""
LEASE_UNITS = 3
"""Visibility timeout of the N3/N5 jobs, in row time units (1.2 s real, 30 s manual)."""
N6_LEASE_UNITS = 25
"""Visibility timeout of the N6 jobs (10 s real): the lease must outlast a cut ack and its repeat."""


def _opts(ctx: RowContext) -> QueueOpts:
    return QueueOpts(visibility_timeout_s=LEASE_UNITS * ctx.unit_s, max_attempts=5)


async def _held(queue: Queue) -> JobHandle:
    """A claimed job, before the outage, whose handle ops the outage then times."""
    await queue.enqueue({"held": True})
    held = await queue.claim_one("n1-holder")
    expect(held is not None, "N1", did="handed out no job before the outage", demands="a claim to work")
    assert held is not None
    return held


async def _outage_ops(wire: Wire, queue: Queue, held: JobHandle) -> list[Outcome[Any]]:
    """Every kind of op, started together during an outage, each timed against N1's bound."""
    outcomes: tuple[Outcome[Any], ...] = await asyncio.gather(
        wire.bounded("enqueue()", queue.enqueue({"during": "outage"})),
        wire.bounded("enqueue_many()", queue.enqueue_many([{"during": 1}, {"during": 2}])),
        wire.bounded("claim_one()", queue.claim_one("n1-worker")),
        wire.bounded("get_job()", queue.get_job(held.job.id)),
        wire.bounded("heartbeat()", held.heartbeat()),
        wire.bounded("ack()", held.ack()),
    )
    return list(outcomes)


async def _expect_serves_again(wire: Wire, queue: Queue) -> None:
    """N2: the same store, not reopened, enqueues and reads back a job within the bound."""
    job_id = await wire.recovered("enqueue()", lambda: queue.enqueue({"after": "outage"}))
    assert job_id is not None
    job = await wire.recovered("get_job()", lambda: queue.get_job(job_id))
    expect(
        job is not None,
        "N2",
        did=f"returned None from get_job({job_id!r}) for the job it enqueued after the outage",
        demands="the recovered store to serve the job it stored",
    )


Outage = Callable[[Wire], AbstractAsyncContextManager[object]]
"""A network fault the wire is under inside the block, given the wire."""


async def _outage_leg(ctx: RowContext, name: str, outage: Outage) -> None:
    """N1: every kind of op fails in bounded time during the outage; N2: the same store serves once it ends."""
    async with open_wire(ctx) as wire:
        store = await wire.open_store()
        queue = store.queue(name, _opts(ctx))
        held = await _held(queue)
        async with outage(wire):
            outcomes = await _outage_ops(wire, queue, held)
        for outcome in outcomes:
            wire.expect_unavailable(outcome)
        await _expect_serves_again(wire, queue)


@asynccontextmanager
async def _server_gone(wire: Wire) -> AsyncIterator[None]:
    """Every open connection reset and new ones refused, as when the server goes away."""
    async with wire.proxy.refusing():
        wire.proxy.reset()
        yield


async def partition_leg(ctx: RowContext) -> None:
    """N1 during a stall (nothing forwarded, sockets open), N2 once it ends."""
    await _outage_leg(ctx, "n1-stall", lambda wire: wire.proxy.stalled())


async def server_gone_leg(ctx: RowContext) -> None:
    """N1 with every connection reset and new ones refused, N2 once they are accepted again."""
    await _outage_leg(ctx, "n1-gone", _server_gone)


async def cut_enqueue_leg(ctx: RowContext) -> None:
    """N3: an enqueue whose answer was lost, at each of its round trips, is stored at most once."""
    async with open_wire(ctx) as wire:
        for answer in range(1, MAX_CUT_ANSWERS + 1):
            location = await ctx.new_location()
            store = await wire.open_store(location)
            queue = store.queue("n3-enqueue", _opts(ctx))
            wire.proxy.cut_answer(answer)
            outcome = await wire.bounded("enqueue()", queue.enqueue({"n3": "cut enqueue", "answer": answer}))
            if not wire.proxy.cut_fired and not outcome.hung:
                wire.proxy.disarm()
                break
            where = f"the connection was cut at the server's answer {answer} to it"
            expect(
                outcome.unavailable or (outcome.error is None and not outcome.hung),
                "N3",
                did=f"{outcome.describe()} when {where}",
                demands="the enqueue to return its id or raise StoreUnavailable (its outcome unknown), in bounded time",
            )
            stored = await ctx.stored_jobs(location)
            expect(
                stored <= 1,
                "N3",
                did=f"stored {stored} jobs for one enqueue when {where} ({outcome.describe()})",
                demands="the job stored at most once: an enqueue in doubt is never retried into a duplicate",
            )
            if outcome.error is None:
                expect(
                    stored == 1,
                    "N3",
                    did=f"returned {outcome.value!r} from the enqueue when {where} but stored {stored} jobs",
                    demands="an enqueue that returned an id to have stored its job",
                )
        ctx.note(f"N3 cut enqueue: {_cuts_made(wire)}")


async def cut_claim_leg(ctx: RowContext) -> None:
    """N3: a claim whose answer was lost, at each of its round trips, does not keep its job after the lease."""
    async with open_wire(ctx) as wire:
        direct = await ctx.open_store()
        lost: list[tuple[str, JobId, datetime]] = []
        for answer in range(1, MAX_CUT_ANSWERS + 1):
            name = f"n3-claim-{answer}"
            job_id = await direct.queue(name, _opts(ctx)).enqueue({"n3": "claim"})
            store = await wire.open_store()
            queue = store.queue(name, _opts(ctx))
            wire.proxy.cut_answer(answer)
            claimed_at = ctx.now()
            outcome = await wire.bounded("claim_one()", queue.claim_one(f"n3-lost-answer-{answer}"))
            if not wire.proxy.cut_fired and not outcome.hung:
                wire.proxy.disarm()
                break
            expect(
                outcome.unavailable,
                "N3",
                did=f"{_claim_outcome(outcome)} when the connection was cut at the server's answer {answer} to it",
                demands="StoreUnavailable (the claim may or may not have taken effect), within the adapter's "
                "op_timeout_s: a claim whose answer was lost is never replayed nor reported as a definite outcome",
            )
            lost.append((name, job_id, claimed_at))
        if lost:
            await ctx.wait_until(lost[-1][2] + timedelta(seconds=LEASE_UNITS * ctx.unit_s))
        for name, job_id, _ in lost:
            expect_handed_out(
                await direct.queue(name, _opts(ctx)).claim_one("n3-second"),
                job_id,
                "N3",
                when=f"once the lease of a claim whose answer was lost had passed (job {job_id!r}, queue {name!r})",
                demands="the job to be claimable again after the lost claim's lease",
            )
        ctx.note(f"N3 lost claim: {_cuts_made(wire)}")


def _claim_outcome(outcome: Outcome[Any]) -> str:
    """What a cut claim did, said as what it means: a definite answer after a lost one was replayed or made up."""
    if outcome.error is None and not outcome.hung:
        found = "a handle" if outcome.value is not None else "None"
        return (
            f"returned {found} from claim_one() after {outcome.elapsed_s:.2f} s (so it replayed the claim, or "
            "answered without knowing what the server did)"
        )
    return outcome.describe()


def _cuts_made(wire: Wire) -> str:
    """How many of the op's answers were cut (the note the report shows: a cut leg never runs silently short)."""
    fired = [fault for fault in wire.proxy.faults if fault.kind == "cut" and fault.reached]
    return f"cut at answers 1–{len(fired)} in turn (the op took {len(fired)} round trip(s) through the proxy)"


async def settle_in_doubt_leg(ctx: RowContext) -> None:
    """N6: an ack whose answer was lost, at each of its round trips, leaves its handle to settle the job once."""
    opts = QueueOpts(visibility_timeout_s=N6_LEASE_UNITS * ctx.unit_s, max_attempts=5)
    async with open_wire(ctx) as wire:
        for answer in range(1, MAX_CUT_ANSWERS + 1):
            location = await ctx.new_location()
            store = await wire.open_store(location)
            held = await _held(store.queue("n6-ack", opts))
            wire.proxy.cut_answer(answer)
            first = await wire.bounded("ack()", held.ack())
            if not wire.proxy.cut_fired and not first.hung:
                wire.proxy.disarm()
                break
            if not first.unavailable:
                continue  # a definite answer (or a hang) is N1's and N3's to judge; nothing is in doubt here
            where = (
                f"after its first ack() raised StoreUnavailable (the connection cut at the server's answer {answer})"
            )
            again = await _repeated(wire, "ack() again", held.ack)
            expect(
                again.error is None and not again.hung,
                "N6",
                did=f"{again.describe()} on the same handle {where}",
                demands="the handle unspent by an op that raised StoreUnavailable: the repeat returns True or False "
                "(repeated while it raises StoreUnavailable, within the adapter's reconnect_within_s)",
            )
            stored = await ctx.stored_jobs(location)
            expect(
                stored == 0,
                "N6",
                did=f"left {stored} job(s) stored when the repeated ack returned {again.value!r} {where}",
                demands="the job completed once by this claim: by the first attempt (the repeat then False) or the "
                "repeat (True), while the lease still ran",
            )
            third = await wire.bounded("ack() a third time", held.ack())
            expect(
                isinstance(third.error, HandleSpent),
                "N6",
                did=f"{third.describe()} after the repeated ack had returned {again.value!r}",
                demands="the handle spent once a settle returned (H4): HandleSpent",
            )
        ctx.note(f"N6 settle in doubt: {_cuts_made(wire)}")


async def _repeated(wire: Wire, what: str, attempt: Callable[[], Any]) -> Outcome[Any]:
    """``attempt()`` until it does not raise ``StoreUnavailable``, within the reconnect bound: its last outcome."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wire.reconnect_bound_s
    outcome = await wire.bounded(what, attempt())
    while outcome.unavailable and (remaining := deadline - loop.time()) > 0:
        await asyncio.sleep(0.05)
        outcome = await wire.bounded(what, attempt(), remaining)
    return outcome


async def fenced_across_stall_leg(ctx: RowContext) -> None:
    """N5: a handle whose lease lapsed during a stall cannot complete the job after it."""
    async with open_wire(ctx) as wire:
        direct = await ctx.open_store()
        direct_queue = direct.queue("n5", _opts(ctx))
        job_id = await direct_queue.enqueue({"n5": True})
        store = await wire.open_store()
        queue = store.queue("n5", _opts(ctx))
        old = await queue.claim_one("n5-old")
        expect(old is not None and old.job.id == job_id, "N5", did="did not hand out the job", demands="a claim")
        assert old is not None
        assert old.job.lease_expires_at is not None
        async with wire.proxy.stalled():
            beat = await wire.bounded("heartbeat()", old.heartbeat())
            expect(
                beat.unavailable or (beat.error is None and beat.value is False),
                "N1",
                did=beat.describe() + " during a stall",
                demands="StoreUnavailable (or False) in bounded time",
            )
            await ctx.wait_until(old.job.lease_expires_at)
            new = expect_handed_out(
                await direct_queue.claim_one("n5-new"),
                job_id,
                "N5",
                when="after the stalled holder's lease lapsed",
                demands=f"job {job_id!r} to be claimable again (C3)",
            )
        await wire.recovered("get_job()", lambda: queue.get_job(job_id))
        acked = await wire.bounded("ack()", old.ack())
        expect(
            acked.unavailable or (acked.error is None and acked.value is False),
            "N5",
            did=f"let the old handle's {acked.describe()} after its lease lapsed during a stall, the store "
            "reconnected and another claim took the job",
            demands="False (or StoreUnavailable): a lapsed claim cannot complete the job, even after a reconnect",
        )
        expect(
            await new.ack() is True,
            "N5",
            did="refused the new holder's ack() after the old handle's ack",
            demands="the old handle to have changed nothing",
        )


async def network_faults(ctx: RowContext) -> None:
    """N1, N2, N3, N5, N6: bounded failure during outages, recovery without reopening, cut commits, fenced
    handles, settles repeated after a lost answer."""
    await ctx.leg("partition", ("N1", "N2"), partition_leg)
    await ctx.leg("server gone", ("N1", "N2"), server_gone_leg)
    await ctx.leg("cut enqueue", ("N3",), cut_enqueue_leg)
    await ctx.leg("lost claim", ("N3",), cut_claim_leg)
    await ctx.leg("settle in doubt", ("N6",), settle_in_doubt_leg)
    await ctx.leg("fenced across a stall", ("N5", "N1"), fenced_across_stall_leg)


ROW = row("network_faults", ("N1", "N2", "N3", "N5", "N6"), requires=(Capability.NETWORKED,))(network_faults)
