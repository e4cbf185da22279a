"""Leg "kill -9 and reopen" of row durability (contract P3): a SIGKILLed writer loses no reported op.

Part of the suite.

A worker process (``worker.py churn``) runs a seeded random mix of enqueue,
claim, ack, retry, fail and cancel, one op at a time, writing a line once each
op has returned. The parent kills it with SIGKILL right after a seeded random
number of reported ops (no sleeping), reopens the location and checks every
reported op: a reported enqueue exists unless a later reported ack or cancel
removed it; a reported successful ack or cancel is gone; a reported retry left
the job ready (dead when its attempts were spent), a reported fail left it
dead, each with the reported attempts and last_error; a reported claim left it
processing with its lease and claimant. Five workers, each on its own location,
run side by side and are killed at five seeded random moments. The one op that
was in flight at the kill (announced, not yet reported) may or may not have
happened: its job may show the state before or after it (an in-flight claim may
have claimed one ready job; an in-flight enqueue may have added one job) —
nothing else may differ.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.expected import LAST_ERROR_FAILED, LAST_ERROR_MAX_ATTEMPTS
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.processes import spawn_worker
from alkstore_contract.types import Job, JobId, JobState

CLAUSE = "P3"
LONG_LEASE_S = 3600.0
"""No lease lapses while a churn worker runs, so a reported claim must come back processing."""
KILL_ROUNDS = 5
KILL_AFTER_OPS = (0, 60)
"""The SIGKILL lands right after the churn worker reported this many ops (a seeded draw): a random
moment in the worker's life that needs no sleeping, so the row runs as fast as the worker does."""
CHILD_START_TIMEOUT_S = 60.0
KILL_QUEUE = "durability-kill"

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


async def read_lines(
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


async def first_of(reader: asyncio.Future[None], event: asyncio.Event) -> None:
    """Wait for ``event``, or for the reader to end (the child died or closed its output)."""
    waiting: asyncio.Future[Any] = asyncio.ensure_future(event.wait())
    pending: set[asyncio.Future[Any]] = {waiting, reader}
    await asyncio.wait(pending, timeout=CHILD_START_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()


async def kill_worker(process: asyncio.subprocess.Process, reader: asyncio.Future[None]) -> str:
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


@dataclass
class Churn:
    """A churn worker that has reported the ops it was waited for, still running, and what it reported so far."""

    process: asyncio.subprocess.Process
    reader: asyncio.Future[None]
    events: list[dict[str, Any]]

    def replay(self, worker: str) -> Replay:
        """What each job must look like after the interruption, from the ops reported."""
        replay = Replay(worker)
        for event in self.events:
            replay.feed(event)
        return replay


async def churn_until(ctx: RowContext, location: str, worker: str, churn_seed: int, ops: int, before: str) -> Churn:
    """Start a churn worker on ``location`` and return once it has reported ``ops`` ops, still running.

    Shared by the client kill and the server crash: a worker that never started, or that ended before
    ``before`` (the interruption, named in the error), is a defect of the run, not a verdict.
    """
    process = await spawn_worker(
        ctx,
        "churn",
        location=location,
        queue=KILL_QUEUE,
        opts={"visibility_timeout_s": LONG_LEASE_S, "max_attempts": 3},
        worker_prefix=worker,
        churn_seed=churn_seed,
    )
    events: list[dict[str, Any]] = []
    started = asyncio.Event()
    reported = Counted(ops)
    reader = asyncio.ensure_future(read_lines(process, events, started, reported))
    await first_of(reader, started)
    if not started.is_set():
        stderr = await kill_worker(process, reader)
        raise RuntimeError(f"the churn worker did not start (exit {process.returncode}):\n{stderr}")
    await first_of(reader, reported.reached)
    if reader.done() or process.returncode is not None:
        stderr = await kill_worker(process, reader)
        raise RuntimeError(f"the churn worker ended before {before}:\n{stderr}")
    return Churn(process, reader, events)


async def _kill_round(ctx: RowContext, round_index: int, kill_after: int) -> tuple[Replay, str]:
    """Run one churn worker on a fresh location and SIGKILL it right after its ``kill_after``-th reported op."""
    location = await ctx.new_location()
    worker = f"churn{round_index}"
    churn = await churn_until(
        ctx, location, worker, ctx.seed * 31 + round_index, kill_after, f"the kill (round {round_index})"
    )
    stderr = await kill_worker(churn.process, churn.reader)
    if any(e["event"] == "idle" for e in churn.events):
        raise RuntimeError(f"the churn worker ended before the kill (round {round_index}):\n{stderr}")
    return churn.replay(worker), location


async def verify_round(ctx: RowContext, crash: str, replay: Replay, location: str) -> None:
    """Reopen the location of a worker that ``crash`` (e.g. ``kill -9 round 2``) interrupted: every reported op
    intact, the in-flight one either way."""
    store = await ctx.open_store(location)
    queue = store.queue(KILL_QUEUE)
    flight = replay.in_flight
    flight_op = flight["op"] if flight is not None else "none"
    where = f"{crash} after {replay.reported} reported ops, op in flight: {flight_op}"
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


async def leg_kill(ctx: RowContext) -> None:
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
        await verify_round(ctx, f"kill -9 round {index}", replay, location)
    reported = sum(replay.reported for replay, _ in rounds)
    in_flight = [replay.in_flight["op"] if replay.in_flight is not None else "none" for replay, _ in rounds]
    ctx.note(
        f"kill -9 leg: {KILL_ROUNDS} kills, {reported} reported ops checked after reopen; "
        f"ops in flight at the kills: {', '.join(in_flight)}"
    )
