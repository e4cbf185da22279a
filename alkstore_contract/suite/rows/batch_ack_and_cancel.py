"""Row batch_ack_and_cancel (contract B1, B2, B3, S4): ack by ids, cancel, get_job, and queue isolation.

Part of the suite.

Legs: ``ack_batch`` deletes exactly the listed jobs of its queue that are
``processing`` under an unexpired lease, whoever holds them, and counts each
once — unknown, lapsed (``lease_expires_at == now`` included), ready, dead,
repeated and other queues' ids do not count and are left exactly as they were
(B1); ``cancel`` deletes a job in any state (ready, delayed, processing, dead)
and says whether it did, and a cancelled job's handle gets ``False`` (B2);
``get_job`` gives a snapshot with the resolved stamps, decoded afresh on every
read, equal to the claim's ``handle.job`` right after a claim, or ``None`` (B3);
queue A's ``get_job``/``cancel``/``ack_batch``/claims/sweep never see or change
a job of queue B — B's name differs only in letter case (S4).

When it fails, check: the ack ``DELETE`` is ``WHERE queue = ? AND id IN (…) AND
state = 'processing' AND lease_expires_at > now`` (no worker or token check, and
the count from rows deleted, so duplicates count once); ``cancel`` is ``DELETE …
WHERE queue = ? AND id = ?`` with no state condition; every statement carries
``queue = ?`` (a binary, case-sensitive comparison); ``get_job`` decodes the
payload on each read rather than caching an object callers can mutate.
"""

from __future__ import annotations

from alkstore_contract.suite.checks import expect, expect_claimed, expect_equal
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import Job, JobId, JobState, QueueOpts


def _wrong_kind(job_id: JobId) -> JobId:
    """An id of the other kind than this engine's: simply not found (DEC-id-kind)."""
    return f"no-such-job-{job_id}" if isinstance(job_id, int) else 2**62


async def _snapshot(queue: Queue, job_id: JobId, clause: str, what: str) -> Job:
    job = await queue.get_job(job_id)
    expect(job is not None, clause, did=f"lost job {job_id} ({what})", demands="the job to be stored")
    assert job is not None
    return job


async def _claim_one(queue: Queue, worker: str, job_id: JobId, clause: str) -> JobHandle:
    return await expect_claimed(queue, worker, job_id, clause, because="the only claimable job")


async def _leg_ack_batch(ctx: RowContext, store: Store) -> None:
    """B1: what ack_batch counts and deletes, and what it leaves alone."""
    u = ctx.unit_s
    queue = store.queue("batch-ack", QueueOpts(visibility_timeout_s=10 * u))
    short = store.queue("batch-ack", QueueOpts(visibility_timeout_s=2 * u))
    other = store.queue("batch-ack-other", QueueOpts(visibility_timeout_s=10 * u))

    lapsed = await short.enqueue({"job": "lease lapses"})
    await _claim_one(short, "w0", lapsed, "B1")
    held = [await queue.enqueue({"job": f"held {i}"}) for i in range(2)]
    first = await queue.claim_batch("w1", 3)
    expect_equal(sorted(map(str, (h.job.id for h in first))), sorted(map(str, held)), "B1", "ids handed out to w1")
    held.append(await queue.enqueue({"job": "held by another worker"}))
    await _claim_one(queue, "w2", held[-1], "B1")
    dead = await queue.enqueue({"job": "dead"})
    expect(await (await _claim_one(queue, "w3", dead, "B1")).fail() is True, "B1", did="refused fail()", demands="True")
    ready = await queue.enqueue({"job": "ready"})
    foreign = await other.enqueue({"job": "another queue's, processing"})
    await _claim_one(other, "w4", foreign, "B1")
    gone = await queue.enqueue({"job": "cancelled: an unknown id"})
    expect(await queue.cancel(gone) is True, "B1", did=f"did not cancel job {gone}", demands="True (B2)")

    await ctx.advance(2 * u if ctx.manual else 2.5 * u)
    left = {job_id: await _snapshot(queue, job_id, "B1", "before ack_batch") for job_id in (lapsed, dead, ready)}
    foreign_before = await _snapshot(other, foreign, "B1", "another queue's job before ack_batch")
    stored = await ctx.stored_jobs()

    listed = [*held, held[0], lapsed, ready, dead, gone, _wrong_kind(gone), foreign, held[2]]
    count = await queue.ack_batch(listed)
    expect_equal(count, 3, "B1", f"the count of ack_batch({listed}) with 3 held jobs among them")
    for job_id in held:
        expect(await queue.get_job(job_id) is None, "B1", did=f"kept acked job {job_id}", demands="it deleted")
    for job_id, earlier in left.items():
        lease = "lease_expires_at == now" if ctx.manual else "lapsed lease"
        what = f"job {job_id} ({lease if job_id == lapsed else earlier.state}) after ack_batch"
        expect_equal(await queue.get_job(job_id), earlier, "B1", what)
    expect_equal(await other.get_job(foreign), foreign_before, "S4", "another queue's held job after ack_batch")
    expect_equal(await ctx.stored_jobs(), stored - 3, "B1", "jobs stored after ack_batch deleted 3 (the oracle)")

    expect_equal(await queue.ack_batch(held), 0, "B1", "the count of ack_batch over ids already acked")
    expect_equal(await queue.ack_batch([]), 0, "B1", "the count of ack_batch([])")
    expect_equal(await queue.ack_batch(()), 0, "B1", "the count of ack_batch(())")


async def _leg_cancel(ctx: RowContext, store: Store) -> None:
    """B2: cancel deletes in any state, True once, then False; the cancelled job's handle is refused."""
    u = ctx.unit_s
    queue = store.queue("cancel", QueueOpts(visibility_timeout_s=10 * u))
    processing = await queue.enqueue({"job": "processing"})
    handle = await _claim_one(queue, "w", processing, "B2")
    dead = await queue.enqueue({"job": "dead"})
    expect(await (await _claim_one(queue, "w", dead, "B2")).fail() is True, "B2", did="refused fail()", demands="True")
    ready = await queue.enqueue({"job": "ready"})
    delayed = await queue.enqueue({"job": "delayed"}, delay=100 * u)
    stored = await ctx.stored_jobs()

    for job_id, state in ((ready, "ready"), (delayed, "delayed"), (processing, "processing"), (dead, "dead")):
        expect_equal(await queue.cancel(job_id), True, "B2", f"cancel() of the {state} job {job_id}")
        expect(await queue.get_job(job_id) is None, "B2", did=f"kept cancelled job {job_id}", demands="None")
        expect_equal(await queue.cancel(job_id), False, "B2", f"a second cancel() of job {job_id}")
    expect_equal(await queue.cancel(_wrong_kind(ready)), False, "B2", "cancel() of an id of the wrong kind")
    expect_equal(await ctx.stored_jobs(), stored - 4, "B2", "jobs stored after 4 cancels (the oracle)")

    beat = await handle.heartbeat()
    expect(beat is False, "B2", did=f"returned {beat!r} from heartbeat() of a cancelled job", demands="False (D3)")
    acked = await handle.ack()
    expect(acked is False, "B2", did=f"returned {acked!r} from ack() of a cancelled job", demands="False (D3)")
    expect(await queue.get_job(processing) is None, "B2", did="brought a cancelled job back", demands="it stays gone")
    expect(
        await queue.claim_one("w") is None, "B2", did="handed out a job after every job was cancelled", demands="None"
    )


async def _leg_get_job(ctx: RowContext, store: Store) -> None:
    """B3: snapshots with the stamps, fresh payloads, the claim's view, None when unknown."""
    u = ctx.unit_s
    opts = QueueOpts(visibility_timeout_s=7 * u, max_attempts=4, backoff_base_s=2, dead_letter_retention_s=9 * u)
    queue = store.queue("snapshots", opts)
    payload = {"list": [1, 2], "text": "é"}
    job_id = await queue.enqueue(payload, priority=3)
    job = await _snapshot(queue, job_id, "B3", "just enqueued")
    expected = {
        "id": job_id,
        "queue": "snapshots",
        "payload": payload,
        "state": JobState.READY,
        "priority": 3,
        "attempts": 0,
        "max_attempts": 4,
        "expires_at": None,
        "lease_expires_at": None,
        "claimed_by": None,
        "visibility_timeout_s": 7 * u,
        "backoff_base_s": 2,
        "dead_letter_retention_s": 9 * u,
        "last_error": None,
        "died_at": None,
        "run_at": job.enqueued_at,
    }
    for field, value in expected.items():
        expect_equal(getattr(job, field), value, "B3", f"get_job({job_id}).{field}")

    assert isinstance(job.payload, dict)
    job.payload["list"].append(3)
    job.payload["added"] = True
    expect_equal(
        (await _snapshot(queue, job_id, "B3", "re-read")).payload,
        payload,
        "B3",
        "payload after a caller mutated a returned one",
    )

    handle = await _claim_one(queue, "w", job_id, "B3")
    claimed = await _snapshot(queue, job_id, "B3", "just claimed")
    expect_equal(claimed, handle.job, "B3", f"get_job({job_id}) right after the claim (handle.job)")
    expect_equal(job.state, JobState.READY, "B3", "state of the snapshot read before the claim")
    expect(
        await queue.get_job(_wrong_kind(job_id)) is None,
        "B3",
        did="found a job by an id of the wrong kind",
        demands="None",
    )
    expect_equal(await handle.ack(), True, "B3", "ack() of the held job")
    expect(await queue.get_job(job_id) is None, "B3", did=f"still found acked job {job_id}", demands="None")


ISOLATION_A = "isolation"
ISOLATION_B = "Isolation"
"""Two names that differ only in case (S1: names are case-sensitive), so an engine folding case is seen."""


async def _leg_isolation(ctx: RowContext, store: Store) -> None:
    """S4: ops of queue A never see or change queue B's jobs, and the reverse; every message names both queues."""
    u = ctx.unit_s
    a = store.queue(ISOLATION_A)
    b = store.queue(ISOLATION_B)
    ab = f"queue {ISOLATION_A!r} (A) and queue {ISOLATION_B!r} (B), one store"
    b_held = await b.enqueue({"b": "processing"})
    b_handle = await _claim_one(b, "wb", b_held, "S4")
    b_ready = await b.enqueue({"b": "ready"})
    b_expiring = await b.enqueue({"b": "expires"}, expires=u)
    a_expiring = await a.enqueue({"a": "expires"}, expires=u)
    a_live = await a.enqueue({"a": "live"})
    b_ids = [b_held, b_ready, b_expiring]
    before = {job_id: await _snapshot(b, job_id, "S4", f"B's job, of {ab}") for job_id in b_ids}

    for job_id in b_ids:
        found = await a.get_job(job_id)
        expect(found is None, "S4", did=f"showed B's job {job_id} through A's get_job ({ab})", demands="None")
        expect_equal(await a.cancel(job_id), False, "S4", f"A's cancel() of B's job {job_id} ({ab})")
    expect_equal(await a.ack_batch(b_ids), 0, "S4", f"A's ack_batch over B's ids ({ab})")
    # Both expiring jobs past the instants the engine stamped (the tolerance past them on the real clock), so an
    # engine whose expiry is coarse (whole seconds) is judged here on isolation, not on how soon it expires.
    a_before = await _snapshot(a, a_expiring, "S4", f"A's expiring job, of {ab}")
    expiries = [job.expires_at for job in (before[b_expiring], a_before) if job.expires_at is not None]
    await (ctx.wait_until(max(expiries)) if expiries else ctx.advance(u))
    got = [h.job.id for h in await a.claim_batch("wa", 10)]
    foreign = [job_id for job_id in got if job_id in b_ids]
    expect(
        not foreign,
        "S4",
        did=f"handed out B's jobs {foreign} to A's claim_batch ({ab})",
        demands="a claim to take only its own queue's jobs",
    )
    expect(
        a_expiring not in got,
        "X1",
        did=f"handed out A's job {a_expiring}, expired since {u} s, to A's claim_batch ({ab})",
        demands="an expired job never handed out",
    )
    expect_equal(got, [a_live], "S4", f"the ids A's claim_batch handed out ({ab})")
    expect_equal(await a.sweep_expired(), 1, "S4", f"the count of A's sweep: one expired job of A, one of B ({ab})")
    for job_id, earlier in before.items():
        expect_equal(await b.get_job(job_id), earlier, "S4", f"B's job {job_id} after A's ops ({ab})")
    a_dead = await _snapshot(a, a_expiring, "S4", f"A's swept job, of {ab}")
    expect_equal(a_dead.state, JobState.DEAD, "S4", f"state of A's expired job after A's sweep ({ab})")
    found = await b.get_job(a_expiring)
    expect(found is None, "S4", did=f"showed A's job {a_expiring} through B's get_job ({ab})", demands="None")
    expect_equal(await b.sweep_expired(), 1, "S4", f"the count of B's own sweep ({ab})")
    expect_equal(await b_handle.ack(), True, "S4", f"B's holder's ack() after A's ops ({ab})")


async def batch_ack_and_cancel(ctx: RowContext) -> None:
    """B1: ack_batch counts held jobs only. B2: cancel in any state. B3: get_job snapshots. S4: isolation."""
    store = await ctx.open_store()
    await ctx.leg("ack_batch", ("B1",), lambda c: _leg_ack_batch(c, store))
    await ctx.leg("cancel", ("B2",), lambda c: _leg_cancel(c, store))
    await ctx.leg("get_job", ("B3",), lambda c: _leg_get_job(c, store))
    await ctx.leg("isolation", ("S4",), lambda c: _leg_isolation(c, store))


ROW = row("batch_ack_and_cancel", ("B1", "B2", "B3", "S4"))(batch_ack_and_cancel)
