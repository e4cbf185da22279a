"""Row enqueue_many_atomic (contract E11): a batch enqueue is ordered, resolved from one now, and all or nothing.

Part of the suite.

Legs: the ids come back in input order and the claims hand the jobs out in that
order; every job of a batch is resolved as ``enqueue`` would resolve it from
ONE clock read — all ``enqueued_at`` equal, ``run_at``/``expires_at`` exactly
``delay``/``expires`` after it, an explicit ``run_at`` verbatim, the per-call
``max_attempts`` and ``priority`` on each, the handle's stamps on each; a
batch with one bad payload anywhere (a set in the middle, a NaN at the end, a
tuple) or with a bad option stores NOTHING (checked with the oracle); ``[]``
and ``()`` return ``[]`` and store nothing; a batch of 1000 is stored whole; a
``payloads`` that is not a list or tuple (a generator, a str, a dict, a set,
``None``) raises ``InvalidArgument`` naming ``payloads`` (DEC-enqueue-many-input).

When it fails, check that ``enqueue_many`` encodes EVERY payload
(``encode_payloads``) and validates the options before the first write, reads
the clock once for the whole batch, and inserts all rows in ONE transaction
(one multi-row ``INSERT`` or ``executemany`` between ``BEGIN IMMEDIATE`` and
``COMMIT``) — never one auto-committed insert per payload.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from alkstore_contract.errors import InvalidArgument, PayloadError
from alkstore_contract.suite.checks import expect, expect_equal, expect_instant, expect_message_names, expect_raises
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue, Store
from alkstore_contract.types import Job, JobId, JobState, QueueOpts

LARGE_BATCH = 1000

BAD_BATCHES: tuple[tuple[str, list[object]], ...] = (
    ("a set in the middle", [{"i": 0}, {"i": 1}, {2, 3}, {"i": 3}, {"i": 4}]),
    ("NaN last", [{"i": 0}, {"i": 1}, {"i": 2}, float("nan")]),
    ("a tuple first", [(1, 2), {"i": 1}]),
    ("bytes nested in the middle", [{"i": 0}, {"i": 1, "raw": [b"x"]}, {"i": 2}]),
)

BAD_OPTIONS: tuple[tuple[str, object], ...] = (
    ("delay", -1),
    ("expires", float("inf")),
    ("run_at", "tomorrow"),
    ("max_attempts", 0),
    ("priority", "high"),
)


def _payload_stream() -> Iterator[dict[str, int]]:
    yield from ({"i": i} for i in range(3))


async def _jobs(queue: Queue, ids: list[JobId]) -> list[Job]:
    jobs: list[Job] = []
    for job_id in ids:
        job = await queue.get_job(job_id)
        expect(job is not None, "E11", did=f"did not store job {job_id!r} of a batch", demands="every job stored")
        assert job is not None
        jobs.append(job)
    return jobs


async def _leg_order(store: Store) -> None:
    """Ids in input order; the jobs are handed out in that order (enqueue order, C2)."""
    queue = store.queue("many-order")
    payloads: list[object] = [{"i": i} for i in range(10)]
    ids = list(await queue.enqueue_many(payloads))
    expect_equal(len(ids), len(payloads), "E11", "the number of ids enqueue_many returned for 10 payloads")
    expect_equal(len(set(ids)), len(ids), "E11", "distinct ids among those returned")
    jobs = await _jobs(queue, ids)
    expect_equal([job.payload for job in jobs], payloads, "E11", "the payloads of the returned ids, in order")
    handed = [h.job.id for h in await queue.claim_batch("w", len(ids) + 1)]
    expect_equal(handed, ids, "E11", "the ids claim_batch handed out (enqueue order is input order)")
    tuple_ids = list(await queue.enqueue_many(({"t": 0}, {"t": 1})))
    payloads_back = [job.payload for job in await _jobs(queue, tuple_ids)]
    expect_equal(payloads_back, [{"t": 0}, {"t": 1}], "E11", "payloads of a batch given as a tuple")


async def _leg_resolution(ctx: RowContext, store: Store) -> None:
    """Every job resolved as enqueue would, from one clock read."""
    u = ctx.unit_s
    opts = QueueOpts(visibility_timeout_s=7 * u, max_attempts=3, backoff_base_s=2, dead_letter_retention_s=9 * u)
    queue = store.queue("many-resolution", opts)
    payloads: list[object] = [{"i": i} for i in range(5)]

    before = ctx.now()
    ids = list(await queue.enqueue_many(payloads, delay=2 * u, expires=5 * u, max_attempts=4, priority=7))
    jobs = await _jobs(queue, ids)
    enqueued = {job.enqueued_at for job in jobs}
    expect(len(enqueued) == 1, "E11", did=f"stamped enqueued_at {sorted(enqueued)}", demands="one clock read")
    if ctx.manual:
        expect_equal(jobs[0].enqueued_at, before, "E11", "enqueued_at of the batch under the manual clock")
    for job in jobs:
        expected: dict[str, object] = {
            "state": JobState.READY,
            "run_at": job.enqueued_at + timedelta(seconds=2 * u),
            "expires_at": job.enqueued_at + timedelta(seconds=5 * u),
            "max_attempts": 4,
            "priority": 7,
            "attempts": 0,
            "visibility_timeout_s": 7 * u,
            "backoff_base_s": 2,
            "dead_letter_retention_s": 9 * u,
        }
        for field, value in expected.items():
            expect_equal(getattr(job, field), value, "E11", f"{field} of batch job {job.id!r}")

    run_at = ctx.now() + timedelta(seconds=3 * u, microseconds=123_457)
    for job in await _jobs(queue, list(await queue.enqueue_many(payloads, run_at=run_at))):
        expect_instant(
            job.run_at,
            run_at,
            "E11",
            f"run_at of batch job {job.id!r} given run_at alone (verbatim)",
            tolerance_s=ctx.tolerance_s,
        )
        expect_equal(job.expires_at, None, "E11", f"expires_at of batch job {job.id!r} given no expires")
        expect_equal(job.max_attempts, 3, "E11", f"max_attempts of batch job {job.id!r} (the handle's stamp)")
    for job in await _jobs(queue, list(await queue.enqueue_many(payloads))):
        expect_equal(job.run_at, job.enqueued_at, "E11", f"run_at of batch job {job.id!r} given no delay or run_at")
        expect_equal(job.priority, 0, "E11", f"priority of batch job {job.id!r} by default")


async def _leg_atomic(ctx: RowContext, store: Store) -> None:
    """One bad payload or one bad option stores nothing at all."""
    queue = store.queue("many-atomic")
    stored = await ctx.stored_jobs()
    for what, payloads in BAD_BATCHES:
        await expect_raises(queue.enqueue_many(payloads), PayloadError, "E11", f"enqueue_many with {what}")
        expect_equal(await ctx.stored_jobs(), stored, "E11", f"jobs stored after a batch with {what} (the oracle)")
    for argument, value in BAD_OPTIONS:
        options: dict[str, Any] = {argument: value}
        exc = await expect_raises(
            queue.enqueue_many([{"i": 0}, {"i": 1}], **options),
            InvalidArgument,
            "E11",
            f"enqueue_many of 2 good payloads with {argument}={value!r}",
        )
        expect_message_names(exc, "E11", argument)
        expect_equal(await ctx.stored_jobs(), stored, "E11", f"jobs stored after {argument}={value!r} (the oracle)")
    expect(
        await queue.claim_one("w") is None,
        "E11",
        did="handed out a job of a refused batch",
        demands="nothing stored from a refused batch",
    )


async def _leg_sizes(ctx: RowContext, store: Store) -> None:
    """Empty batches store nothing; a large batch is stored whole."""
    queue = store.queue("many-sizes")
    stored = await ctx.stored_jobs()
    expect_equal(await queue.enqueue_many([]), [], "E11", "enqueue_many([])")
    expect_equal(await queue.enqueue_many(()), [], "E11", "enqueue_many(())")
    expect_equal(await ctx.stored_jobs(), stored, "E11", "jobs stored after empty batches (the oracle)")

    ids = list(await queue.enqueue_many([{"n": i, "pad": "x" * 64} for i in range(LARGE_BATCH)]))
    expect_equal(len(ids), LARGE_BATCH, "E11", f"the number of ids for a batch of {LARGE_BATCH}")
    expect_equal(len(set(ids)), LARGE_BATCH, "E11", f"distinct ids in a batch of {LARGE_BATCH}")
    expect_equal(await ctx.stored_jobs(), stored + LARGE_BATCH, "E11", f"jobs stored after a batch of {LARGE_BATCH}")
    for index in (0, LARGE_BATCH // 2, LARGE_BATCH - 1):
        job = await queue.get_job(ids[index])
        expect_equal(None if job is None else job.payload, {"n": index, "pad": "x" * 64}, "E11", f"payload {index}")
    handed = [h.job.id for h in await queue.claim_batch("w", LARGE_BATCH)]
    expect(handed == ids, "E11", did="handed out the large batch out of input order", demands="input order")


async def _leg_not_a_list(ctx: RowContext, store: Store) -> None:
    """DEC-enqueue-many-input: payloads must be a list or tuple, else InvalidArgument naming payloads."""
    queue = store.queue("many-kinds")
    stored = await ctx.stored_jobs()
    for what, payloads in (
        ("a generator", _payload_stream()),
        ("a str", "abc"),
        ("a dict", {"i": 1}),
        ("a set", {1, 2}),
        ("None", None),
        ("an int", 3),
    ):
        exc = await expect_raises(
            queue.enqueue_many(payloads),  # type: ignore[arg-type]
            InvalidArgument,
            "E11",
            f"enqueue_many({what})",
        )
        expect_message_names(exc, "E11", "payloads")
    expect_equal(await ctx.stored_jobs(), stored, "E11", "jobs stored after refused payload containers (the oracle)")


async def enqueue_many_atomic(ctx: RowContext) -> None:
    """E11: ids in input order, one clock read, all or nothing, list or tuple only."""
    store = await ctx.open_store()
    await ctx.leg("ids in input order", ("E11",), lambda _: _leg_order(store))
    await ctx.leg("one resolution", ("E11",), lambda c: _leg_resolution(c, store))
    await ctx.leg("all or nothing", ("E11",), lambda c: _leg_atomic(c, store))
    await ctx.leg("sizes", ("E11",), lambda c: _leg_sizes(c, store))
    await ctx.leg("list or tuple only", ("E11",), lambda c: _leg_not_a_list(c, store))


ROW = row("enqueue_many_atomic", ("E11",))(enqueue_many_atomic)
