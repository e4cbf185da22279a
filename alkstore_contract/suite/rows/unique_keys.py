"""Row unique_keys (contract K1–K4, capability ``unique_keys``): one unfinished job per key and queue.

Part of the suite.

Legs: a key is held while its job is ready, claimed, waiting out a retry's
backoff or holding a lapsed lease — a second ``enqueue_unique`` stores
nothing, changes nothing and answers the holder's id with ``created=False`` —
and is another key on another queue (K1); an ack, a ``fail`` (dead) and a
cancel each free it (K2); concurrent ``enqueue_unique`` calls with one key,
from tasks on one store, from stores on one location (``shared_location``)
and from OS processes started together (``multi_process``), store exactly one
job (K3); bad keys are refused naming ``unique_key`` and store nothing, and a
key of 200 characters is a key (K4).

When it fails, check that the check and the insert are one atomic step against
every other store and process (a unique index over the unfinished jobs of a
queue — ``(queue, unique_key) WHERE state <> 'dead'`` — with the insert's
conflict answered by reading the holder, not a ``SELECT`` then ``INSERT``
without a lock), and that a key is freed only when its job is deleted or
dead, never by a claim.
"""

from __future__ import annotations

import asyncio
from typing import cast

from alkstore_contract.adapter import Capability
from alkstore_contract.errors import InvalidArgument
from alkstore_contract.suite.checks import expect, expect_equal, expect_message_names, expect_raises, expect_stored
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.processes import finish, spawn_worker, unique_rounds
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue, UniqueQueue
from alkstore_contract.types import Enqueued, JobId, JobState, QueueOpts

LONG_LEASE_S = 3600.0
RACERS = 8
ROUNDS = 5
PROCESSES = 4


def unique(queue: Queue) -> UniqueQueue:
    """The queue of an engine declaring ``unique_keys``: the row runs only there."""
    return cast(UniqueQueue, queue)


async def _expect_held(queue: UniqueQueue, key: str, holder: JobId, when: str) -> None:
    """K1: a second enqueue with ``key`` answers ``holder`` and stores nothing."""
    got = await queue.enqueue_unique({"second": when}, key, priority=9)
    expect(
        got == Enqueued(holder, False),
        "K1",
        did=f"answered {got!r} to enqueue_unique(..., {key!r}) {when}",
        demands=f"Enqueued(id={holder!r}, created=False): job {holder!r} still holds the key",
    )
    job = await expect_stored(queue, holder, "K1")
    expect(
        job.payload != {"second": when} and job.priority != 9,
        "K1",
        did=f"changed job {holder!r} to payload={job.payload!r}, priority={job.priority!r} {when}",
        demands="a refused enqueue_unique to change nothing of the job holding the key",
    )


async def _leg_held(ctx: RowContext) -> None:
    """K1: ready, claimed, retried into a backoff, lapsed: the key stays held; another queue has its own."""
    store = await ctx.open_store()
    opts = QueueOpts(visibility_timeout_s=ctx.unit_s, max_attempts=5)
    queue = unique(store.queue("unique-held", opts))
    first = await queue.enqueue_unique({"first": True}, "report-42")
    expect(first.created, "K1", did=f"answered {first!r} to the first enqueue of a key", demands="created=True")
    await _expect_held(queue, "report-42", first.id, "while its job is ready")
    handle = await queue.claim_one("keeper")
    expect_equal(None if handle is None else handle.job.id, first.id, "K1", "the job claimed")
    assert handle is not None
    await _expect_held(queue, "report-42", first.id, "while its job is claimed")
    assert handle.job.lease_expires_at is not None
    await ctx.wait_until(handle.job.lease_expires_at)
    await _expect_held(queue, "report-42", first.id, "while its job holds a lapsed lease")
    again = await queue.claim_one("keeper")
    assert again is not None
    expect_equal(await again.retry("later", delay=LONG_LEASE_S), True, "K1", "retry() into a long backoff")
    await _expect_held(queue, "report-42", first.id, "while its job waits out a retry's backoff")
    other = unique(store.queue("unique-held-other", opts))
    there = await other.enqueue_unique({"other": True}, "report-42")
    expect(
        there.created and there.id != first.id,
        "K1",
        did=f"answered {there!r} to the same key on another queue",
        demands="a new job: a key belongs to its queue",
    )
    plain = await queue.enqueue({"no key": True})
    expect(plain != first.id, "K1", did=f"gave a keyless enqueue the id {plain!r}", demands="a job of its own")


async def _leg_freed(ctx: RowContext) -> None:
    """K2: an acked, a dead and a cancelled job each free their key; the next enqueue makes a new job."""
    queue = unique((await ctx.open_store()).queue("unique-freed", QueueOpts(visibility_timeout_s=LONG_LEASE_S)))
    previous: JobId | None = None
    for finish_by in ("ack", "fail", "cancel"):
        made = await queue.enqueue_unique({"finish": finish_by}, "nightly")
        expect(
            made.created and made.id != previous,
            "K2",
            did=f"answered {made!r} to enqueue_unique after job {previous!r} was finished",
            demands="a new job with created=True: a finished job holds no key",
        )
        if finish_by == "cancel":
            expect_equal(await queue.cancel(made.id), True, "K2", f"cancel({made.id!r})")
        else:
            handle = await queue.claim_one("finisher")
            assert handle is not None
            ok = await (handle.ack() if finish_by == "ack" else handle.fail("given up"))
            expect_equal(ok, True, "K2", f"{finish_by}() of job {made.id!r}")
        previous = made.id
    last = await queue.enqueue_unique({"finish": "none"}, "nightly")
    expect(last.created, "K2", did=f"answered {last!r} after a cancel", demands="created=True")
    dead = await queue.get_job(previous if previous is not None else last.id)
    expect(dead is None, "K2", did=f"kept cancelled job {previous!r}", demands="a cancelled job gone")


async def _race(queues: list[UniqueQueue], key: str, leg: str) -> None:
    """K3: every queue enqueues ``key`` at once; one job, every answer its id, exactly one created."""
    answers = await asyncio.gather(*(q.enqueue_unique({"racer": i}, key) for i, q in enumerate(queues)))
    _judge_race(answers, key, leg)


def _judge_race(answers: list[Enqueued], key: str, leg: str) -> None:
    ids = {answer.id for answer in answers}
    created = sum(answer.created for answer in answers)
    expect(
        len(ids) == 1 and created == 1,
        "K3",
        did=f"({leg}) answered {len(answers)} concurrent enqueues of key {key!r} with ids {sorted(map(str, ids))} "
        f"and {created} created",
        demands="exactly one job: every call answers its id, exactly one says created",
    )


async def _leg_tasks(ctx: RowContext) -> None:
    queue = unique((await ctx.open_store()).queue("unique-race-tasks"))
    for round_ in range(ROUNDS):
        await _race([queue] * RACERS, f"tasks-{round_}", f"{RACERS} tasks on one store")


async def _leg_stores(ctx: RowContext) -> None:
    location = await ctx.new_location()
    stores = [await ctx.open_store(location) for _ in range(RACERS)]
    queues = [unique(store.queue("unique-race-stores")) for store in stores]
    for round_ in range(ROUNDS):
        await _race(queues, f"stores-{round_}", f"{RACERS} stores on one location")
    expect_equal(await ctx.stored_jobs(location), ROUNDS, "K3", "jobs stored after the races (one per key)")


async def _leg_processes(ctx: RowContext) -> None:
    location = await ctx.new_location()
    await ctx.open_store(location)  # the location laid out before the racers open theirs
    keys = [f"procs-{round_}" for round_ in range(ROUNDS)]
    processes = [
        await spawn_worker(
            ctx, "enqueue_unique", location=location, queue="unique-race-procs", stores=2, keys=keys, barrier=True
        )
        for _ in range(PROCESSES)
    ]
    answers = await unique_rounds(processes, keys)
    for process in processes:
        await finish(process)
    for key in keys:
        got = [Enqueued(cast(JobId, job_id), created) for job_id, created in answers[key]]
        expect_equal(len(got), 2 * PROCESSES, "K3", f"answers to the enqueues of key {key!r}")
        _judge_race(got, key, f"{PROCESSES} OS processes × 2 stores, started together each round")
    expect_equal(await ctx.stored_jobs(location), ROUNDS, "K3", "jobs stored after the races (one per key)")


BAD_KEYS: tuple[object, ...] = (None, "", "k" * 201, "lone \ud800", "nul\x00byte", 7, b"bytes")


async def _leg_bad_keys(ctx: RowContext) -> None:
    """K4: a bad key is InvalidArgument naming unique_key and stores nothing; 200 characters is a key."""
    location = await ctx.new_location()
    queue = unique((await ctx.open_store(location)).queue("unique-bad"))
    for bad in BAD_KEYS:
        error = await expect_raises(
            queue.enqueue_unique({"bad": True}, cast(str, bad)), InvalidArgument, "K4", f"unique_key={bad!r}"
        )
        expect_message_names(error, "K4", "unique_key")
    await expect_raises(queue.enqueue_unique({"bad": True}, "ok", delay=-1), InvalidArgument, "K4", "delay=-1")
    expect_equal(await ctx.stored_jobs(location), 0, "K4", "jobs stored after refused enqueue_unique calls")
    longest = await queue.enqueue_unique({"edge": True}, "k" * 200)
    expect(longest.created, "K4", did=f"answered {longest!r} to a key of 200 characters", demands="created=True")
    job = await expect_stored(queue, longest.id, "K4")
    expect_equal(job.state, JobState.READY, "K4", "the state of the job with a 200-character key")


async def unique_keys(ctx: RowContext) -> None:
    """K1–K4 on every clock; K3 across stores and processes where declared."""
    await ctx.leg("held while unfinished", ("K1",), _leg_held)
    await ctx.leg("freed when finished", ("K2",), _leg_freed)
    await ctx.leg("tasks racing on one store", ("K3",), _leg_tasks)
    for capability, name, leg in (
        (Capability.SHARED_LOCATION, "stores racing on one location", _leg_stores),
        (Capability.MULTI_PROCESS, "processes racing", _leg_processes),
    ):
        if ctx.has(capability):
            await ctx.leg(name, ("K3",), leg)
        else:
            ctx.not_exercised(("K3",), f"the engine does not declare {capability}", leg=name)
    await ctx.leg("bad keys", ("K4",), _leg_bad_keys)


ROW = row("unique_keys", ("K1", "K2", "K3", "K4"), requires=(Capability.UNIQUE_KEYS,))(unique_keys)
