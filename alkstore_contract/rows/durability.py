"""Row durability (contract P3): committed writes survive a close and reopen, and a kill -9 and reopen.

Two legs, each on its own fresh location:

(a) Close and reopen. A store enqueues jobs, acks some, retries some (with an
    error and a delay), dead-letters one by an exhausting retry, fails one,
    cancels some (ready, processing, and the newest job), and leaves two
    processing. It is closed and a new store is opened on the location: every
    surviving job must read back exactly as it did before the close (state,
    attempts, run_at, last_error, lease, claimed_by, died_at, stamps, payload),
    every acked or cancelled job must be gone — also after a new enqueue on the
    reopened store, so a reused id cannot bring it back — and the oracle must
    count the survivors and nothing else.

(b) kill -9 of a writer. A worker process (``worker.py churn``) runs a seeded
    random mix of enqueue, claim, ack, retry, fail and cancel, one op at a time,
    writing a line once each op has returned. The parent kills it with SIGKILL
    right after a seeded random number of reported ops (no sleeping), reopens the location and checks every reported
    op: a reported enqueue exists unless a later reported ack or cancel removed
    it; a reported successful ack or cancel is gone; a reported retry left the
    job ready (dead when its attempts were spent), a reported fail left it dead,
    each with the reported attempts and last_error; a reported claim left it
    processing with its lease and claimant. Five workers, each on its own
    location, run side by side and are killed at five seeded random moments.
    The one op that was in flight at the kill (announced, not yet reported) may
    or may not have happened: its job may show the state before or after it
    (an in-flight claim may have claimed one ready job; an in-flight enqueue may
    have added one job) — nothing else may differ.

When it fails, check that every op has committed before it returns (no write
left in an open or implicit transaction — Python's sqlite3 opens one before DML
unless autocommit — no group commit acknowledged early, no write buffered in
memory or in a background task); that ``close`` neither discards nor deletes
anything; that the reopen reads the same location (not a fresh or private
copy); and that ids are never reused after a delete. A process crash cannot
lose a transaction whose COMMIT returned on SQLite or Postgres whatever the
``synchronous`` setting (that only matters for power loss), so a loss here is
an op that returned before it committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from alkstore_contract.adapter import Capability
from alkstore_contract.checks import expect, expect_equal, expect_instant
from alkstore_contract.expected import LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.harness import RowContext
from alkstore_contract.processes import spawn_worker
from alkstore_contract.suite import row
from alkstore_contract.surface import JobHandle, Queue
from alkstore_contract.types import Job, JobState, QueueOpts
from alkstore_contract.validation import JobId

CLAUSE = "P3"
LONG_LEASE_S = 3600.0
"""No lease lapses during the row, so a processing job must come back processing."""
WORKER = "durability-worker"
KILL_ROUNDS = 5
KILL_AFTER_OPS = (0, 60)
"""The SIGKILL lands right after the churn worker reported this many ops (a seeded draw): a random
moment in the worker's life that needs no sleeping, so the row runs as fast as the worker does."""
CHILD_START_TIMEOUT_S = 60.0
KILL_QUEUE = "durability-kill"

# ---------------------------------------------------------------------------------------------
# (a) close and reopen
# ---------------------------------------------------------------------------------------------

GONE_ROLES = ("ack", "cancel-processing", "cancel-ready", "cancel-newest")
"""Roles whose job must not exist after the reopen."""
CLAIMED_ROLES = ("ack", "ack", "retry", "fail", "cancel-processing", "hold", "hold")
"""The jobs leg (a) enqueues in one batch and claims, one role each (plus ``exhaust``, with max_attempts=1)."""
RETRY_ERROR = "transient: upstream timed out"
EXHAUST_ERROR = "gave up: last attempt"
FAIL_ERROR = "broken: bad input"


@dataclass
class Planted:
    """One job of leg (a): its role, and what the row knows it must look like after the reopen."""

    role: str
    job_id: JobId
    handle: JobHandle | None = None
    retried_between: tuple[datetime, datetime] | None = None
    """The row's clock just before and after the retry call (the engine's now lies in between)."""


async def _settle(ctx: RowContext, queue: Queue, planted: Planted, retry_delay_s: float) -> None:
    """Do to a claimed job what its role says; every op must report success."""
    handle = planted.handle
    assert handle is not None
    if planted.role == "ack":
        done = await handle.ack()
    elif planted.role == "retry":
        before = ctx.now()
        done = await handle.retry(error=RETRY_ERROR, delay=retry_delay_s)
        planted.retried_between = (before, ctx.now())
    elif planted.role == "exhaust":
        done = await handle.retry(error=EXHAUST_ERROR)
    elif planted.role == "fail":
        done = await handle.fail(error=FAIL_ERROR)
    elif planted.role == "cancel-processing":
        done = await queue.cancel(planted.job_id)
    else:
        return
    expect(
        done,
        CLAUSE,
        did=f"returned False for the {planted.role} of job {planted.job_id} on a fresh claim",
        demands="the write to succeed before it is checked for durability",
    )


def _check_survivor(ctx: RowContext, planted: Planted, before: Job | None, after: Job, retry_delay_s: float) -> None:
    """One surviving job after the reopen: as it was before the close, and as its role demands."""
    where = f"job {planted.job_id} ({planted.role}) after close and reopen"
    expect(
        after == before,
        CLAUSE,
        did=f"read back {where} as {after!r}, but before the close it was {before!r}",
        demands="every committed write intact after a reopen",
    )
    if planted.role == "retry":
        expect(
            after.state == JobState.READY and after.last_error == RETRY_ERROR and after.attempts == 1,
            CLAUSE,
            did=f"read back {where} as state={after.state}, last_error={after.last_error!r}, attempts={after.attempts}",
            demands=f"the committed retry intact: ready, last_error {RETRY_ERROR!r}, attempts 1",
        )
        assert planted.retried_between is not None
        start, end = planted.retried_between
        expect_instant(
            after.run_at,
            start + (end - start) / 2 + timedelta(seconds=retry_delay_s),
            CLAUSE,
            f"run_at of {where}",
            tolerance_s=ctx.tolerance_s + (end - start).total_seconds(),
        )
    elif planted.role in ("exhaust", "fail"):
        error = EXHAUST_ERROR if planted.role == "exhaust" else FAIL_ERROR
        expect(
            after.state == JobState.DEAD and after.last_error == error and after.died_at is not None,
            CLAUSE,
            did=f"read back {where} as state={after.state}, last_error={after.last_error!r}, died_at={after.died_at}",
            demands=f"the committed dead letter intact: dead, last_error {error!r}, died_at set",
        )
    elif planted.role == "hold":
        assert planted.handle is not None
        claimed = planted.handle.job
        expect(
            after.state == JobState.PROCESSING
            and after.claimed_by == WORKER
            and after.lease_expires_at == claimed.lease_expires_at
            and after.attempts == 1,
            CLAUSE,
            did=f"read back {where} as state={after.state}, claimed_by={after.claimed_by!r}, "
            f"lease_expires_at={after.lease_expires_at}, attempts={after.attempts}",
            demands=f"the committed claim intact: processing, claimed_by {WORKER!r}, "
            f"lease_expires_at {claimed.lease_expires_at}, attempts 1",
        )
    else:
        expect(
            after.state == JobState.READY and after.attempts == 0 and after.last_error is None,
            CLAUSE,
            did=f"read back {where} as state={after.state}, attempts={after.attempts}",
            demands="the committed enqueue intact: ready, never attempted",
        )


async def _leg_close_and_reopen(ctx: RowContext) -> None:
    location = await ctx.new_location()
    store = await ctx.open_store(location)
    opts = QueueOpts(
        visibility_timeout_s=LONG_LEASE_S, max_attempts=3, backoff_base_s=7.5, dead_letter_retention_s=86_400
    )
    name = "durability-close"
    queue = store.queue(name, opts)
    retry_delay_s = 100 * ctx.unit_s

    ids = await queue.enqueue_many([{"role": r, "n": i} for i, r in enumerate(CLAIMED_ROLES)])
    planted = [Planted(r, job_id) for r, job_id in zip(CLAIMED_ROLES, ids, strict=True)]
    planted.append(Planted("exhaust", await queue.enqueue({"role": "exhaust"}, max_attempts=1)))
    by_id = {p.job_id: p for p in planted}
    handles = await queue.claim_batch(WORKER, len(planted))
    expect_equal(
        sorted(map(repr, (h.job.id for h in handles))),
        sorted(map(repr, by_id)),
        CLAUSE,
        "the ids a claim_batch of every ready job returned (setup)",
    )
    for handle in handles:
        by_id[handle.job.id].handle = handle
    for job in planted:
        await _settle(ctx, queue, job, retry_delay_s)

    planted.append(Planted("ready", await queue.enqueue({"role": "ready", "text": "ünïcode ✓", "x": [1.5, None]})))
    planted.append(
        Planted("ready", await queue.enqueue({"role": "later"}, delay=50 * ctx.unit_s, expires=500 * ctx.unit_s))
    )
    planted.append(Planted("ready", await queue.enqueue({"role": "urgent"}, priority=9)))
    cancel_ready = Planted("cancel-ready", await queue.enqueue({"role": "cancel-ready"}))
    newest = Planted("cancel-newest", await queue.enqueue({"role": "cancel-newest"}))
    planted += [cancel_ready, newest]
    for job in (cancel_ready, newest):
        expect(
            await queue.cancel(job.job_id),
            CLAUSE,
            did=f"returned False for cancel({job.job_id!r}) of a ready job",
            demands="the write to succeed before it is checked for durability",
        )

    snapshots = {p.job_id: await queue.get_job(p.job_id) for p in planted}
    survivors = [p for p in planted if p.role not in GONE_ROLES]
    await store.close()

    reopened = await ctx.open_store(location)
    queue = reopened.queue(name, opts)
    for job in planted:
        after = await queue.get_job(job.job_id)
        if job.role in GONE_ROLES:
            expect(
                after is None,
                CLAUSE,
                did=f"brought back job {job.job_id} ({job.role}, committed before the close) as {after!r}",
                demands="an acked or cancelled job to stay gone after a reopen",
            )
        else:
            expect(
                after is not None,
                CLAUSE,
                did=f"lost job {job.job_id} ({job.role}) across close and reopen",
                demands="every committed job intact after a reopen",
            )
            assert after is not None
            _check_survivor(ctx, job, snapshots[job.job_id], after, retry_delay_s)
    expect_equal(await ctx.stored_jobs(location), len(survivors), CLAUSE, "jobs stored after close and reopen")

    fresh = await queue.enqueue({"role": "after-reopen"})
    expect(
        fresh not in snapshots,
        CLAUSE,
        did=f"gave a job enqueued after the reopen the id {fresh!r} of a job enqueued before it",
        demands="ids never reused, so no acked or cancelled job comes back under its old id",
    )
    for job in planted:
        if job.role in GONE_ROLES:
            found = await queue.get_job(job.job_id)
            expect(
                found is None,
                CLAUSE,
                did=f"answered get_job({job.job_id!r}) of a {job.role} job with {found!r} after a new enqueue",
                demands="an acked or cancelled job to stay gone",
            )


# ---------------------------------------------------------------------------------------------
# (b) kill -9 of a writer
# ---------------------------------------------------------------------------------------------

GONE = "gone"
HANDLE_OPS = ("ack", "retry", "fail", "cancel")
"""Ops that report ``ok``: only a successful one changed anything."""


@dataclass(frozen=True)
class Expected:
    """What the reported ops say one job must look like (state ``gone`` after an ack or cancel)."""

    state: str
    attempts: int
    max_attempts: int
    last_error: str | None = None
    claimed_by: str | None = None
    lease: datetime | None = None
    cause: str = ""
    """The last reported op that touched the job, for the failure message."""


def _enqueued(op: dict[str, Any]) -> Expected:
    return Expected(JobState.READY, 0, int(op["max_attempts"]), cause=f"enqueue (op #{op['seq']})")


def _after(expected: Expected, op: dict[str, Any]) -> Expected:
    """The job after ``op`` (the ``begin`` or ``end`` line of a claim, ack, retry, fail or cancel) succeeded."""
    kind = op["op"]
    cause = f"{kind} (op #{op['seq']})"
    if kind in ("ack", "cancel"):
        return replace(expected, state=GONE, cause=cause)
    if kind == "claim":
        return replace(
            expected,
            state=JobState.PROCESSING,
            attempts=int(op["attempts"]),
            claimed_by=op["worker"],
            lease=datetime.fromisoformat(op["lease"]),
            cause=cause,
        )
    error = op.get("error")
    if kind == "fail":
        last_error: str | None = error if error is not None else LAST_ERROR_FAILED
        state = JobState.DEAD
    elif expected.attempts >= expected.max_attempts:
        last_error = error if error is not None else LAST_ERROR_MAX_ATTEMPTS
        state = JobState.DEAD
    else:
        last_error = error if error is not None else expected.last_error
        state = JobState.READY
    return replace(expected, state=state, last_error=last_error, claimed_by=None, lease=None, cause=cause)


def _matches(expected: Expected, job: Job | None) -> bool:
    """``job`` is what ``expected`` says (a ``lease`` of None accepts any lease: an unreported claim's)."""
    if expected.state == GONE or job is None:
        return expected.state == GONE and job is None
    same = (job.state, job.attempts, job.max_attempts, job.last_error, job.claimed_by) == (
        expected.state,
        expected.attempts,
        expected.max_attempts,
        expected.last_error,
        expected.claimed_by,
    )
    if expected.state != JobState.PROCESSING:
        return same and job.lease_expires_at is None
    return same and (expected.lease is None or job.lease_expires_at == expected.lease)


def _describe(expected: Expected) -> str:
    if expected.state == GONE:
        return f"gone (after {expected.cause})"
    text = f"{expected.state}, attempts {expected.attempts}, last_error {expected.last_error!r}"
    if expected.state == JobState.PROCESSING:
        text += f", claimed_by {expected.claimed_by!r}, lease_expires_at {expected.lease}"
    return f"{text} (after {expected.cause})"


def _show(job: Job | None) -> str:
    if job is None:
        return "gone"
    return (
        f"{job.state}, attempts {job.attempts}, last_error {job.last_error!r}, claimed_by {job.claimed_by!r}, "
        f"lease_expires_at {job.lease_expires_at}"
    )


class Replay:
    """The churn worker's reported ops, folded into what each job must look like."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.jobs: dict[JobId, Expected] = {}
        self.in_flight: dict[str, Any] | None = None
        """The ``begin`` line of the op the kill interrupted, if any."""
        self.reported = 0

    def feed(self, event: dict[str, Any]) -> None:
        if event["event"] == "begin":
            self.in_flight = event
            return
        if event["event"] != "end":
            return
        begin, self.in_flight = self.in_flight or {}, None
        event = {**begin, **event}
        self.reported += 1
        job_id: JobId | None = event.get("job")
        if job_id is None:
            return
        if event["op"] == "enqueue":
            self.jobs[job_id] = _enqueued(event)
            return
        if event["op"] in HANDLE_OPS and not event["ok"]:
            return
        expected = self.jobs.get(job_id)
        expect(
            expected is not None,
            CLAUSE,
            did=f"reported op {event} on job {job_id!r}, which no reported enqueue created",
            demands="only the jobs this worker enqueued at a fresh location",
        )
        assert expected is not None
        self.jobs[job_id] = _after(expected, event)

    def unreported_claim(self, expected: Expected) -> Expected | None:
        """What a ready job looks like if the in-flight op was a claim that took it (lease unknown)."""
        if self.in_flight is None or self.in_flight["op"] != "claim" or expected.state != JobState.READY:
            return None
        return replace(
            expected, state=JobState.PROCESSING, attempts=expected.attempts + 1, claimed_by=self.worker, lease=None
        )


async def _read_lines(
    process: asyncio.subprocess.Process, sink: list[dict[str, Any]], started: asyncio.Event, reported: Counted
) -> None:
    """Every complete line the child wrote; a line cut short by the kill is not a report."""
    assert process.stdout is not None
    while True:
        line = await process.stdout.readline()
        if not line.endswith(b"\n"):
            return
        event = json.loads(line)
        sink.append(event)
        if event["event"] == "started":
            started.set()
        elif event["event"] == "end":
            reported.add_one()


class Counted:
    """How many ops the child reported, and an event set once ``target`` of them arrived."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.count = 0
        self.reached = asyncio.Event()
        if target <= 0:
            self.reached.set()

    def add_one(self) -> None:
        self.count += 1
        if self.count >= self.target:
            self.reached.set()


async def _first(reader: asyncio.Future[None], event: asyncio.Event) -> None:
    """Wait for ``event``, or for the reader to end (the child died or closed its output)."""
    waiting: asyncio.Future[Any] = asyncio.ensure_future(event.wait())
    pending: set[asyncio.Future[Any]] = {waiting, reader}
    await asyncio.wait(pending, timeout=CHILD_START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()


async def _kill(process: asyncio.subprocess.Process, reader: asyncio.Future[None]) -> str:
    """SIGKILL (never a polite signal: nothing may get to clean up), reap, drain both pipes; the stderr.

    Draining lets the pipes' transports close inside this event loop rather
    than at garbage collection after it closed.
    """
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()
    await reader
    assert process.stderr is not None
    return (await process.stderr.read()).decode(errors="replace")[-4000:]


async def _kill_round(ctx: RowContext, round_index: int, kill_after: int) -> tuple[Replay, str]:
    """Run one churn worker on a fresh location and SIGKILL it right after its ``kill_after``-th reported op."""
    location = await ctx.new_location()
    worker = f"churn{round_index}"
    process = await spawn_worker(
        ctx,
        "churn",
        location=location,
        queue=KILL_QUEUE,
        opts={"visibility_timeout_s": LONG_LEASE_S, "max_attempts": 3},
        worker_prefix=worker,
        churn_seed=ctx.seed * 31 + round_index,
    )
    events: list[dict[str, Any]] = []
    started = asyncio.Event()
    reported = Counted(kill_after)
    reader = asyncio.ensure_future(_read_lines(process, events, started, reported))
    await _first(reader, started)
    if not started.is_set():
        stderr = await _kill(process, reader)
        raise RuntimeError(f"the churn worker did not start (exit {process.returncode}):\n{stderr}")
    await _first(reader, reported.reached)
    ended = reader.done() or process.returncode is not None
    stderr = await _kill(process, reader)
    if ended or any(e["event"] == "idle" for e in events):
        raise RuntimeError(f"the churn worker ended before the kill (round {round_index}):\n{stderr}")
    replay = Replay(worker)
    for event in events:
        replay.feed(event)
    return replay, location


async def _verify_round(ctx: RowContext, round_index: int, replay: Replay, location: str) -> None:
    """Reopen the killed worker's location: every reported op intact, the in-flight one either way."""
    store = await ctx.open_store(location)
    queue = store.queue(KILL_QUEUE)
    flight = replay.in_flight
    flight_op = flight["op"] if flight is not None else "none"
    where = f"kill -9 round {round_index} after {replay.reported} reported ops, op in flight: {flight_op}"
    unreported: list[JobId] = []
    present = 0
    for job_id, expected in replay.jobs.items():
        actual = await queue.get_job(job_id)
        present += actual is not None
        if _matches(expected, actual):
            continue
        if flight is not None and flight.get("job") == job_id and _matches(_after(expected, flight), actual):
            continue
        claimed = replay.unreported_claim(expected)
        if claimed is not None and _matches(claimed, actual):
            unreported.append(job_id)
            continue
        expect(
            False,
            CLAUSE,
            did=f"({where}) left job {job_id!r} as {_show(actual)} after the reopen",
            demands=f"every reported op intact: {_describe(expected)}",
        )
    expect(
        len(unreported) <= 1,
        CLAUSE,
        did=f"({where}) shows jobs {unreported} claimed by no reported claim",
        demands="at most the one in-flight claim to have taken effect",
    )
    stored = await ctx.stored_jobs(location)
    allowed = {present, present + 1} if flight_op == "enqueue" else {present}
    expect(
        stored in allowed,
        CLAUSE,
        did=f"({where}) holds {stored} jobs after the reopen, {present} of them reported",
        demands="nothing but the reported jobs" + (" and the in-flight enqueue" if flight_op == "enqueue" else ""),
    )
    await store.close()


async def _leg_kill(ctx: RowContext) -> None:
    """Several churn workers, each on its own location, run side by side and die at their own moments.

    Running the rounds at once keeps the leg to about one process start-up; each
    is verified on its own location once every worker is dead.
    """
    rng = random.Random(ctx.seed)
    kill_points = [rng.randint(*KILL_AFTER_OPS) for _ in range(KILL_ROUNDS)]
    outcomes = await asyncio.gather(
        *(_kill_round(ctx, index, after) for index, after in enumerate(kill_points)), return_exceptions=True
    )
    rounds: list[tuple[Replay, str]] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        rounds.append(outcome)
    for index, (replay, location) in enumerate(rounds):
        await _verify_round(ctx, index, replay, location)
    reported = sum(replay.reported for replay, _ in rounds)
    in_flight = [replay.in_flight["op"] if replay.in_flight is not None else "none" for replay, _ in rounds]
    ctx.note(
        f"kill -9 leg: {KILL_ROUNDS} kills, {reported} reported ops checked after reopen; "
        f"ops in flight at the kills: {', '.join(in_flight)}"
    )


async def durability(ctx: RowContext) -> None:
    """P3: every committed enqueue, ack, retry, fail and cancel survives close+reopen and kill -9+reopen."""
    await ctx.leg("close and reopen", (CLAUSE,), _leg_close_and_reopen)
    await ctx.leg("kill -9 and reopen", (CLAUSE,), _leg_kill)


ROW = row("durability", (CLAUSE,), requires=(Capability.DURABLE,))(durability)
