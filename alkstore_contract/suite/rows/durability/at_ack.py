"""Leg "kill -9 at the acknowledgement" of row durability (contract P3): what an op returned is committed.

Part of the suite.

A kill at a random moment rarely lands inside a commit window of a few
milliseconds: an engine that answers a write and commits it a moment later
(a group commit, a buffer flushed on a timer or when read) survives it. This
leg kills at the worst moment instead. A worker process (``worker.py burst``)
runs a seeded mix of writes (enqueue, enqueue_many, claim, ack, retry, fail,
heartbeat, cancel) with no read in between, writes a ``told`` line of what
each returned, and right after the line of its last write (of a kind the seed
picks per round, so every kind is a kill point over a few seeds) it SIGKILLs
its own process group: the worker and every engine process it started die
together, before the engine runs another instruction. The process group is
the worker's own (``spawn_worker(own_group=True)``), never the suite's.

The reopened location is judged against what the suite was *told*, never
against the engine's own reads (there were none, so none could flush a
buffer): an enqueued job is stored with a payload of its enqueue (of its
batch, for ``enqueue_many``: which id got which payload is E11's business); an
acked or cancelled job is gone; a retried or failed job is no longer held by
its claim (a fail may leave it gone: whether a fail keeps a dead job is D1's
business, as what state a retry leaves is R1's); a heartbeat's lease is kept
(the lease differs from the claim's: by how much is H3's business); and
nothing else is stored. Claims are not among P3's writes: a claimed job may read back
claimed or as before its claim.

``judge_told`` and ``run_burst`` are shared with the server-crash leg, whose
worker stops (SIGSTOP) at the same moment so the server dies while the
engine holds whatever it has not committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.processes import side_by_side, spawn_worker
from alkstore_contract.suite.worker import BURST_HEARTBEAT_FACTOR, snapshot
from alkstore_contract.types import JobId, JobState

CLAUSE = "P3"
AT_ACK_ROUNDS = 4
"""Workers killed per run, side by side, each on its own location (a few process start-ups)."""
WRITE_KINDS = ("enqueue", "enqueue_many", "ack", "retry", "fail", "heartbeat", "cancel")
"""The kinds of write the kill follows, one per round, rotated by the seed."""
OPS_BEFORE = (6, 40)
"""How many seeded writes run before the last one (a seeded draw per round)."""
LEASE_S = 3600.0
"""No lease lapses during a burst, so only a told op changes a job."""
BURST_TIMEOUT_S = 60.0
"""How long a burst worker may take from its start to its last line, before the run gives up on it."""
BURST_QUEUE = "durability-at-ack"

Snapshot = dict[str, Any] | None


@dataclass
class Told:
    """One job as the suite was told: its enqueue's payloads, the last op acknowledged on it, and its claim."""

    payloads: list[object]
    """The payloads of the enqueue that returned this id: one, or its batch's (E11 judges which is whose)."""
    op: str
    seq: int
    claim: Snapshot = None
    """The job as its last told claim handed it out (``None`` before any claim)."""


@dataclass
class Burst:
    """What a burst worker was told, job by job, and the kind and number of its last op."""

    jobs: dict[JobId, Told] = field(default_factory=dict)
    last: str = "none"
    ops: int = 0

    def feed(self, event: dict[str, Any]) -> None:
        if event["event"] != "told":
            return
        op, seq = event["op"], event["seq"]
        self.last, self.ops = op, self.ops + 1
        batch = [job["payload"] for job in event.get("jobs", ())]
        for job in event.get("jobs", ()):
            self.jobs[job["id"]] = Told(batch, op, seq)
        claimed = event.get("claimed")
        if claimed is not None:
            told = self.jobs[claimed["id"]]
            told.op, told.seq, told.claim = op, seq, claimed
        if event.get("ok"):
            told = self.jobs[event["job"]]
            told.op, told.seq = op, seq


def a_write(kind: str) -> str:
    """``kind`` with its article, for the messages: "an enqueue", "a retry"."""
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _lease(job: dict[str, Any]) -> datetime | None:
    value = job.get("lease_expires_at")
    return None if value is None else datetime.fromisoformat(value)


def _held_by_claim(claim: Snapshot, actual: dict[str, Any]) -> bool:
    """Whether ``actual`` is still the job as its claim handed it out: processing, same worker, same lease."""
    return (
        claim is not None
        and actual["state"] == JobState.PROCESSING
        and actual["claimed_by"] == claim["claimed_by"]
        and actual["lease_expires_at"] == claim["lease_expires_at"]
    )


def _kept_heartbeat(told: Told, actual: dict[str, Any]) -> bool:
    """A told heartbeat's lease is kept: the job is still held by its claimant, under a lease other than the claim's.

    The heartbeat asked for twice the visibility timeout (H3: ``now + extend``), so on any clock its lease
    differs from the claim's; by how much is H3's business, so any change counts as the write kept.
    """
    if told.claim is None or actual["state"] != JobState.PROCESSING:
        return False
    return actual["claimed_by"] == told.claim["claimed_by"] and _lease(actual) != _lease(told.claim)


def told_problem(told: Told, actual: Snapshot) -> str | None:
    """How ``actual`` (the job after the crash) contradicts the last op the suite was told of; ``None``: it does not."""
    if actual is None:
        if told.op in ("ack", "cancel", "fail"):
            return None
        return f"gone, although the engine acknowledged its {told.op} (op #{told.seq}), which leaves it stored"
    if actual["payload"] not in told.payloads:
        sent = told.payloads[0] if len(told.payloads) == 1 else f"one of {told.payloads!r}"
        return f"with payload {actual['payload']!r}, enqueued with {sent!r}"
    if told.op in ("ack", "cancel"):
        return f"stored ({actual['state']}), although the engine acknowledged its {told.op} (op #{told.seq})"
    if told.op in ("retry", "fail") and _held_by_claim(told.claim, actual):
        return (
            f"still processing under its claim (lease {actual['lease_expires_at']}), although the engine "
            f"acknowledged its {told.op} (op #{told.seq}), which releases it"
        )
    if told.op == "heartbeat" and not _kept_heartbeat(told, actual):
        claim_lease = None if told.claim is None else told.claim["lease_expires_at"]
        return (
            f"{actual['state']} with lease {actual['lease_expires_at']} (the claim's was {claim_lease}), although "
            f"the engine acknowledged its heartbeat (op #{told.seq}) setting the lease to now + "
            f"{BURST_HEARTBEAT_FACTOR} visibility timeouts"
        )
    return None


async def judge_told(ctx: RowContext, crash: str, burst: Burst, location: str) -> None:
    """Reopen ``location`` and hold every job to what the suite was told before ``crash``; nothing else stored."""
    store = await ctx.open_store(location)
    queue = store.queue(BURST_QUEUE)
    where = f"{crash} right after the engine acknowledged op #{burst.ops}, {a_write(burst.last)}"
    present = 0
    for job_id, told in burst.jobs.items():
        actual = json.loads(json.dumps(snapshot(await queue.get_job(job_id))))
        present += actual is not None
        problem = told_problem(told, actual)
        expect(
            problem is None,
            CLAUSE,
            did=f"({where}) read back job {job_id!r} after the reopen {problem}",
            demands="every write the engine acknowledged committed before it answered: "
            "nothing acknowledged is lost or undone by a kill -9 that follows the answer",
        )
    stored = await ctx.stored_jobs(location)
    expect(
        stored == present,
        CLAUSE,
        did=f"({where}) holds {stored} jobs after the reopen, of which {present} are jobs it acknowledged",
        demands="nothing stored but the acknowledged jobs",
    )
    await store.close()


def _end_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the worker's process group (the worker and its engine processes); already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _read_burst(process: asyncio.subprocess.Process, burst: Burst) -> bool:
    """Feed every complete line to ``burst``; ``True`` once the worker announced its end (a kill or stop)."""
    assert process.stdout is not None
    while True:
        line = await process.stdout.readline()
        if not line.endswith(b"\n"):
            return False
        event = json.loads(line)
        burst.feed(event)
        if event["event"] == "ending":
            return True


@dataclass
class Stopped:
    """A burst worker at its end: what it was told, and the process (stopped or dead) to kill and reap."""

    burst: Burst
    process: asyncio.subprocess.Process

    async def kill(self) -> str:
        """SIGKILL the group, reap the worker, and hand back its stderr."""
        _end_group(self.process)
        await self.process.wait()
        assert self.process.stderr is not None
        return (await self.process.stderr.read()).decode(errors="replace")[-4000:]


async def run_burst(
    ctx: RowContext, location: str, *, worker: str, churn_seed: int, ops: int, last: str, then: str
) -> Stopped:
    """Start a burst worker on ``location`` and return once it killed (``then="kill"``) or stopped its group.

    A worker that ends any other way, or not within ``BURST_TIMEOUT_S``, is a
    defect of the run (raised with its stderr), never a verdict; its group is
    killed whatever happens.
    """
    process = await spawn_worker(
        ctx,
        "burst",
        own_group=True,
        location=location,
        queue=BURST_QUEUE,
        opts={"visibility_timeout_s": LEASE_S, "max_attempts": 3},
        worker_prefix=worker,
        churn_seed=churn_seed,
        ops=ops,
        last=last,
        then=then,
    )
    stopped = Stopped(Burst(), process)
    try:
        ended = await asyncio.wait_for(_read_burst(process, stopped.burst), BURST_TIMEOUT_S)
    except BaseException:
        await stopped.kill()
        raise
    if not ended:
        stderr = await stopped.kill()
        raise RuntimeError(
            f"the burst worker {worker} ended before its last write (exit {process.returncode}):\n{stderr}"
        )
    return stopped


async def _round(ctx: RowContext, index: int, ops: int, last: str) -> tuple[Burst, str]:
    location = await ctx.new_location()
    stopped = await run_burst(
        ctx, location, worker=f"burst{index}", churn_seed=ctx.seed * 41 + index, ops=ops, last=last, then="kill"
    )
    await stopped.kill()
    return stopped.burst, location


async def leg_kill_at_ack(ctx: RowContext) -> None:
    """``AT_ACK_ROUNDS`` workers side by side, each killed right after the acknowledgement of its last write."""
    rng = random.Random(ctx.seed * 43)
    kinds = [WRITE_KINDS[(ctx.seed + index) % len(WRITE_KINDS)] for index in range(AT_ACK_ROUNDS)]
    rounds = await side_by_side(_round(ctx, index, rng.randint(*OPS_BEFORE), kind) for index, kind in enumerate(kinds))
    for index, (burst, location) in enumerate(rounds):
        await judge_told(ctx, f"kill -9 round {index}", burst, location)
    ctx.note(
        f"kill -9 at the acknowledgement: {len(rounds)} kills, right after {', '.join(map(a_write, kinds))}; "
        f"{sum(burst.ops for burst, _ in rounds)} acknowledged ops checked after reopen"
    )
