"""Leg "kill -9 and reopen" of row durability (contract P3): a SIGKILLed writer loses no reported op.

Part of the suite.

A worker process (``worker.py churn``) runs a seeded random mix of enqueue,
claim, ack, retry, fail and cancel, one op at a time, writing a line once each
op has returned, with the job as the engine's own ``get_job`` showed it right
after the op. The parent kills it with SIGKILL right after a seeded random
number of reported ops (no sleeping), reopens the location and checks every
job the worker reported: it must read back exactly as the engine last showed it
before the kill (every field; gone if it was gone), and the oracle must count
those jobs and nothing else. The expectation is the engine's own pre-kill read,
never a model of what an op should do: whether a retry leaves a job ready or a
fail leaves it dead, with which last_error, is R1, R4, D1's business, checked by
other rows, so an engine that reads back durably what it did is never charged
P3 for what it did. Five workers, each on its own location, run side by side and
are killed at five seeded random moments.

The one op in flight at the kill (announced, not yet reported) may or may not
have happened. Its job may read back as last reported, or as a state that kind
of op can leave: gone after an ack or a cancel (the contract's outcome, H2 and
B2), stored after a retry, fail or claim, with its identity unchanged (id,
queue, payload, priority, max_attempts and the stamps of its enqueue), whatever
its state, attempts, lease or error; and the other outcome too when the engine
showed it after a reported op of the same kind in this run (a library whose
fail deletes a job). An in-flight claim may have taken one stored job (it reads
back processing, its identity unchanged); an in-flight enqueue may have added
one job. This keeps the leg's power: only that one job of a round is judged
loosely, and even it may not lose its payload or come back after it was gone,
while every other reported job must be exactly what the engine showed, so an op
acknowledged before it committed, a buffered write or a lost file shows as a
job missing, back, or rolled back to an older read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.processes import side_by_side, spawn_worker
from alkstore_contract.suite.worker import snapshot
from alkstore_contract.types import JOB_FIELDS, JobId, JobState

CLAUSE = "P3"
LONG_LEASE_S = 3600.0
"""No lease lapses while a churn worker runs, so no job changes but by a reported op."""
KILL_ROUNDS = 5
KILL_AFTER_OPS = (0, 60)
"""The SIGKILL lands right after the churn worker reported this many ops (a seeded draw): a random
moment in the worker's life that needs no sleeping, so the row runs as fast as the worker does."""
CHILD_START_TIMEOUT_S = 60.0
KILL_QUEUE = "durability-kill"

Snapshot = dict[str, Any] | None
"""A job as a churn line carries it (``worker.snapshot``); ``None``: gone."""
CHANGED_BY_OPS = ("state", "attempts", "run_at", "lease_expires_at", "claimed_by", "last_error", "died_at")
"""The fields a claim, retry or fail may change; the others are the job's identity, fixed at its enqueue."""
IDENTITY = tuple(name for name in JOB_FIELDS if name not in CHANGED_BY_OPS)
REMOVING = ("ack", "cancel")
"""Op kinds whose outcome in the contract is the job gone (H2, B2); a claim, retry or fail leaves it stored."""


@dataclass(frozen=True)
class Reported:
    """The last report of one job: how the engine showed it right after the op, and which op that was."""

    job: Snapshot
    cause: str


def _same_identity(first: dict[str, Any], second: dict[str, Any]) -> bool:
    return all(first[name] == second[name] for name in IDENTITY)


def _show(job: Snapshot) -> str:
    if job is None:
        return "gone"
    return ", ".join(f"{name} {job[name]!r}" for name in CHANGED_BY_OPS)


def _differences(expected: Snapshot, actual: Snapshot) -> str:
    """What differs between the reported read and the one after the reopen, field by field."""
    if expected is None or actual is None:
        return f"{_show(actual)}, where the engine showed it {_show(expected)}"
    changed = (name for name in JOB_FIELDS if actual[name] != expected[name])
    return ", ".join(f"{name} {actual[name]!r} (was {expected[name]!r})" for name in changed)


@dataclass
class Replay:
    """The churn worker's reports: each job as the engine last showed it, and the op in flight at the end."""

    jobs: dict[JobId, Reported] = field(default_factory=dict)
    in_flight: dict[str, Any] | None = None
    """The ``begin`` line of the op the kill interrupted, if any."""
    reported: int = 0
    left_stored: dict[str, set[bool]] = field(default_factory=dict)
    """Per op kind, whether its successful reported ops left their job stored (True) or gone (False)."""

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
        kind = event["op"]
        expect(
            kind == "enqueue" or job_id in self.jobs,
            CLAUSE,
            did=f"reported op {event} on job {job_id!r}, which no reported enqueue created",
            demands="only the jobs this worker enqueued at a fresh location",
        )
        after: Snapshot = event["after"]
        self.jobs[job_id] = Reported(after, f"{kind} (op #{event['seq']})")
        if event.get("ok", True):
            self.left_stored.setdefault(kind, set()).add(after is not None)

    def _may_leave(self, kind: str, stored: bool) -> bool:
        """Whether an op of ``kind`` can leave its job stored (or gone): the contract's outcome, or one seen here."""
        return stored == (kind not in REMOVING) or stored in self.left_stored.get(kind, set())

    def in_flight_left(self, job_id: JobId, actual: Snapshot) -> bool:
        """Whether the op in flight, if it names ``job_id``, could have left the job as ``actual``."""
        flight = self.in_flight
        if flight is None or flight.get("job") != job_id:
            return False
        last = self.jobs[job_id].job
        if actual is None:
            return last is not None and self._may_leave(flight["op"], stored=False)
        return last is not None and _same_identity(last, actual) and self._may_leave(flight["op"], stored=True)

    def unreported_claim(self, last: Snapshot, actual: Snapshot) -> bool:
        """Whether the op in flight was a claim that could have taken this job: it reads back processing, same job."""
        if self.in_flight is None or self.in_flight["op"] != "claim" or last is None or actual is None:
            return False
        return actual["state"] == JobState.PROCESSING and _same_identity(last, actual)


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

    def replay(self) -> Replay:
        """What each job must look like after the interruption: as the engine last showed it to the worker."""
        replay = Replay()
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
    return churn.replay(), location


async def verify_round(ctx: RowContext, crash: str, replay: Replay, location: str) -> None:
    """Reopen the location of a worker that ``crash`` (e.g. ``kill -9 round 2``) interrupted: every reported job
    as the engine last showed it, the in-flight op either way."""
    store = await ctx.open_store(location)
    queue = store.queue(KILL_QUEUE)
    flight = replay.in_flight
    flight_op = flight["op"] if flight is not None else "none"
    where = f"{crash} after {replay.reported} reported ops, op in flight: {flight_op}"
    unreported: list[JobId] = []
    present = 0
    for job_id, reported in replay.jobs.items():
        actual = json.loads(json.dumps(snapshot(await queue.get_job(job_id))))
        present += actual is not None
        if actual == reported.job or replay.in_flight_left(job_id, actual):
            continue
        if replay.unreported_claim(reported.job, actual):
            unreported.append(job_id)
            continue
        expect(
            False,
            CLAUSE,
            did=f"({where}) read back job {job_id!r} after the reopen as {_differences(reported.job, actual)}",
            demands=f"every reported op intact: the job as the engine showed it right after {reported.cause}",
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
    rounds = await side_by_side(_kill_round(ctx, index, after) for index, after in enumerate(kill_points))
    for index, (replay, location) in enumerate(rounds):
        await verify_round(ctx, f"kill -9 round {index}", replay, location)
    reported = sum(replay.reported for replay, _ in rounds)
    in_flight = [replay.in_flight["op"] if replay.in_flight is not None else "none" for replay, _ in rounds]
    ctx.note(
        f"kill -9 leg: {KILL_ROUNDS} kills, {reported} reported ops checked after reopen; "
        f"ops in flight at the kills: {', '.join(in_flight)}"
    )
