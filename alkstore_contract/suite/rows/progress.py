"""Row progress (contract G1, G2): a claim never gives up while work is there.

Part of the suite.

C4's rows drain a queue with workers that claim again after an empty claim, so
a claim that races another, gives up and returns nothing passes them. Here
every worker stops at its first empty claim: the drain must still end with
every job handed out (G2), and, where the row can count (tasks in this
process), no empty claim may return while more than N jobs were left (G1).

Legs: N tasks on one store (every engine); N stores on one location
(``shared_location``); OS processes started together, each stopping at its
first empty claim (``multi_process``): there a worker whose claim came back
empty asks the oracle (``count_stored_jobs``) how many jobs are still stored,
which counts the ones other workers hold too, so the leg judges G1 from 2N
stored jobs.

When it fails, check that a claim which meets a row another claim is taking
skips it and takes the next one (Postgres: ``FOR UPDATE SKIP LOCKED`` in the
statement that selects the candidates) rather than failing its update and
returning nothing; that a claim does not give up on a lock timeout or a busy
database by returning an empty result (raise, or wait); and that a batch
claim counts what it actually took.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.processes import finish, spawn_drainers, start_together
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue
from alkstore_contract.types import JobId, QueueOpts

WORKERS = 6
JOBS = 240
PROCESSES = 3
STORES_PER_PROCESS = 2
LONG_LEASE_S = 3600.0
"""No lease may lapse during a drain: a job then only ever goes from claimable to handed out."""


@dataclass
class Drain:
    """What one drain by in-process workers saw: how many jobs were handed out, and every early empty claim."""

    jobs: int
    workers: int
    handed_out: set[JobId] = field(default_factory=set)
    early_empty: list[str] = field(default_factory=list)
    """One line per empty claim that returned while more than ``workers`` jobs were left (G1)."""

    async def work(self, queue: Queue, worker: str) -> None:
        """Claim one job at a time and ack it; stop at the first empty claim, judging it by what was left."""
        while True:
            handle = await queue.claim_one(worker)
            if handle is None:
                left = self.jobs - len(self.handed_out)
                if left > self.workers:
                    self.early_empty.append(f"{worker}'s claim returned None with {left} jobs never handed out")
                return
            self.handed_out.add(handle.job.id)
            await handle.ack()
            await asyncio.sleep(0)

    def judge(self, leg: str) -> None:
        early = self.early_empty
        expect(
            not early,
            "G1",
            did=f"({leg}) gave {len(early)} empty claims while jobs were left: {'; '.join(early[:3])}",
            demands=f"no claim returns nothing while more than {self.workers} jobs (the workers) are claimable",
        )
        expect_all_handed_out(leg, len(self.handed_out), self.jobs)


def expect_all_handed_out(leg: str, handed_out: int, jobs: int) -> None:
    """G2: the drain whose workers stopped at their first empty claim handed every job out."""
    expect(
        handed_out == jobs,
        "G2",
        did=f"({leg}) handed out {handed_out} of {jobs} jobs before every worker met an empty claim",
        demands="a drain whose workers stop at their first empty claim hands out every job",
    )


async def _fill(queue: Queue) -> None:
    await queue.enqueue_many([{"job": i} for i in range(JOBS)])


OPTS = QueueOpts(visibility_timeout_s=LONG_LEASE_S)


async def _leg_one_store(ctx: RowContext) -> None:
    queue = (await ctx.open_store()).queue("progress-tasks", OPTS)
    await _fill(queue)
    drain = Drain(JOBS, WORKERS)
    await asyncio.gather(*(drain.work(queue, f"task{i}") for i in range(WORKERS)))
    drain.judge(f"{WORKERS} tasks on one store")


async def _leg_stores(ctx: RowContext) -> None:
    location = await ctx.new_location()
    stores = [await ctx.open_store(location) for _ in range(WORKERS)]
    await _fill(stores[0].queue("progress-stores", OPTS))
    drain = Drain(JOBS, WORKERS)
    await asyncio.gather(
        *(drain.work(store.queue("progress-stores", OPTS), f"store{i}") for i, store in enumerate(stores))
    )
    drain.judge(f"{WORKERS} stores on one location")


async def _leg_processes(ctx: RowContext) -> None:
    location = await ctx.new_location()
    await _fill((await ctx.open_store(location)).queue("progress-procs", OPTS))
    processes = await spawn_drainers(
        ctx, location, "progress-procs", LONG_LEASE_S, PROCESSES, STORES_PER_PROCESS, barrier=True, count_left=True
    )
    await start_together(processes)
    events = [event for events in await asyncio.gather(*(finish(p) for p in processes)) for event in events]
    leg = f"{PROCESSES} OS processes × {STORES_PER_PROCESS} stores"
    workers = PROCESSES * STORES_PER_PROCESS
    # Stored jobs = never handed out + held and not yet acked (at most one per other worker): 2N stored
    # when an empty claim came back means more than N were never handed out.
    early = [
        f"{event['worker']}'s claim returned nothing with {event['stored']} jobs still stored"
        for event in events
        if event["event"] == "empty" and event["stored"] >= 2 * workers
    ]
    expect(
        not early,
        "G1",
        did=f"({leg}) gave {len(early)} empty claims while jobs were left: {'; '.join(early[:3])}",
        demands=f"no claim returns nothing while more than {workers} jobs (the workers) are claimable "
        f"(counted by the oracle right after it: {2 * workers} or more still stored)",
    )
    handed_out = {event["job"] for event in events if event["event"] == "handout"}
    expect_all_handed_out(leg, len(handed_out), JOBS)


async def progress(ctx: RowContext) -> None:
    """G1 and G2 under tasks, stores on one location and OS processes."""
    await ctx.leg("tasks on one store", ("G1", "G2"), _leg_one_store)
    for capability, name, clauses, leg in (
        (Capability.SHARED_LOCATION, "stores on one location", ("G1", "G2"), _leg_stores),
        (Capability.MULTI_PROCESS, "processes", ("G1", "G2"), _leg_processes),
    ):
        if ctx.has(capability):
            await ctx.leg(name, clauses, leg)
        else:
            ctx.not_exercised(clauses, f"the engine does not declare {capability}", leg=name)


ROW = row("progress", ("G1", "G2"))(progress)
