"""Row network_history (contract N4; N1, N2): a history of concurrent workers while the wire is cut at random.

Part of the suite.

Four workers on two stores and a producer on a third, every store's
connections through the suite's fault proxy, work one queue (preloaded through
a store straight to the server) while a nemesis, seeded by the row's seed,
stalls the wire once for longer than N1's bound, then resets every
connection, stalls the wire for up to twice the adapter's op bound, refuses
new connections, or slows every chunk, with short pauses between, for
``FAULT_WINDOW_S``. Then the faults stop and the workers drain
the queue.

Every op is timed against N1's bound (a hang, or an error other than
``StoreUnavailable``, fails N1); once the faults have been over for the
adapter's ``reconnect_within_s``, an op that still raises ``StoreUnavailable``
fails N2. Every handout (job, worker, claim, lease) and
every ack is recorded; an op that raised ``StoreUnavailable`` is indeterminate,
as Jepsen treats it: an enqueue in doubt may have stored its job (every
payload carries a tag, and a job whose tag belongs to an enqueue in doubt
counts as enqueued when it shows up), an ack in doubt may have completed its
job. The history checker (``alkstore_contract.suite.history``) then demands: no job
handed to a second claim while an earlier claim's lease was live or after it
was acked, no handout of an id no enqueue stored, no job gone without an ack
(confirmed or in doubt), and no tag stored under two ids. Under the manual
clock the row finally moves time past every lease and drains what lost claims
left behind (N3); on the system clock those jobs are counted as still stored.

When it fails, check what ``network_faults`` says, and that nothing in the
engine retries a statement whose answer was lost.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.history import ClientHistory, Release
from alkstore_contract.suite.network import Outcome, Wire, open_wire
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Queue
from alkstore_contract.types import JobId, QueueOpts

QUEUE = "n4"
OPTS = QueueOpts(visibility_timeout_s=600, max_attempts=50)
"""A lease far longer than the row: any second handout during it is a duplicate, never a reclaim."""
PRELOADED = 40
WORKER_STORES = 2
WORKERS_PER_STORE = 2
BATCH = 3
FAULT_WINDOW_S = 4.0
"""How long the nemesis runs (real time on both clocks: the wire does not follow the manual clock)."""
DRAIN_LIMIT_S = 20.0
"""How long the workers may take to drain the queue once the faults are over."""
PAUSE_S = (0.1, 0.4)
LONG_STALL_EXTRA_S = 0.5
"""The opening stall outlasts N1's bound by this much, so every client's op in it must fail in time."""


@dataclass
class History(ClientHistory):
    """What the clients saw: confirmed results, ops in doubt, and ops that broke N1."""

    failed_ops: Counter[str] = field(default_factory=Counter)
    broken: list[str] = field(default_factory=list)
    """N1 violations: ops that hung or raised something other than ``StoreUnavailable``."""
    unrecovered: list[str] = field(default_factory=list)
    """N2 violations: ops that still met an outage once the faults had been over for ``reconnect_within_s``."""
    recovered: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the faults have been over for the adapter's ``reconnect_within_s`` and its slack."""

    def judge(self, outcome: Outcome[Any]) -> bool:
        """True when the op succeeded; counts an op in doubt; records an N1 or N2 violation."""
        if outcome.error is None and not outcome.hung:
            return True
        if not outcome.unavailable:
            self.broken.append(outcome.describe())
        elif self.recovered.is_set():
            self.unrecovered.append(outcome.describe())
        else:
            self.failed_ops[outcome.what] += 1
        return False

    @property
    def stopped(self) -> bool:
        """A violation was seen: the clients stop, and the row reports it."""
        return bool(self.broken or self.unrecovered)


async def _worker(wire: Wire, queue: Queue, name: str, history: History) -> None:
    """Claim and ack until the queue is drained after the faults; stop at the first violation."""
    while not history.stopped:
        claimed = await wire.bounded("claim_batch()", queue.claim_batch(name, BATCH))
        if not history.judge(claimed):
            await asyncio.sleep(0.02)
            continue
        handles = claimed.value or []
        if not handles:
            if history.recovered.is_set():
                return
            await asyncio.sleep(0.02)
            continue
        for handle in handles:
            job = handle.job
            if job.lease_expires_at is None or not isinstance(job.payload, dict):
                history.broken.append(f"claim_batch() handed out {job!r} without a lease or with a foreign payload")
                return
            claim = history.handed_out(job, name)
            acked = await wire.bounded("ack()", handle.ack())
            if history.judge(acked):
                history.releases.append(Release(job.id, claim, "ack", bool(acked.value)))
            elif acked.unavailable:
                history.acks_in_doubt.add(job.id)


async def _producer(wire: Wire, queue: Queue, history: History, stop: asyncio.Event) -> None:
    number = 0
    while not stop.is_set() and not history.stopped:
        number += 1
        tag = f"p{number}"
        outcome = await wire.bounded("enqueue()", queue.enqueue({"tag": tag}))
        if history.judge(outcome):
            assert outcome.value is not None
            history.enqueued.add(outcome.value)
        elif outcome.unavailable:
            history.tags_in_doubt.add(tag)
        await asyncio.sleep(0.02)


async def _nemesis(wire: Wire, rng: random.Random) -> None:
    """One stall longer than N1's bound, then random faults for ``FAULT_WINDOW_S``; the proxy records each."""
    loop = asyncio.get_running_loop()
    proxy = wire.proxy
    async with proxy.stalled():
        await asyncio.sleep(wire.op_bound_s + LONG_STALL_EXTRA_S)
    until = loop.time() + FAULT_WINDOW_S
    while loop.time() < until:
        kind = rng.choice(("reset", "stall", "refuse", "latency"))
        if kind == "reset":
            proxy.reset()
        elif kind == "stall":
            async with proxy.stalled():
                await asyncio.sleep(rng.uniform(0.1, 2 * wire.adapter.op_timeout_s))
        elif kind == "refuse":
            async with proxy.refusing():
                proxy.reset()
                await asyncio.sleep(rng.uniform(0.1, 0.6))
        else:
            async with proxy.delayed(rng.uniform(0.01, 0.08)):
                await asyncio.sleep(rng.uniform(0.2, 0.6))
        await asyncio.sleep(rng.uniform(*PAUSE_S))


async def _drain_stranded(ctx: RowContext, queue: Queue, history: History) -> None:
    """Manual clock only: past every lease, a direct store reclaims and acks what lost claims left (N3)."""
    await ctx.advance(OPTS.visibility_timeout_s + ctx.unit_s)
    while handles := await queue.claim_batch("drain", BATCH):
        for handle in handles:
            claim = history.handed_out(handle.job, "drain")
            history.releases.append(Release(handle.job.id, claim, "ack", await handle.ack()))


async def network_history(ctx: RowContext) -> None:
    """N4: no lost job, no job completed by two claims, no unexpected id across random cuts and stalls."""
    history = History()
    direct = await ctx.open_store()
    direct_queue = direct.queue(QUEUE, OPTS)
    preloaded = await direct_queue.enqueue_many([{"tag": f"i{n}"} for n in range(PRELOADED)])
    history.enqueued.update(preloaded)
    async with open_wire(ctx) as wire:
        producer_store = await wire.open_store()
        worker_queues = [(await wire.open_store()).queue(QUEUE, OPTS) for _ in range(WORKER_STORES)]
        stop = asyncio.Event()

        async def run_nemesis() -> None:
            await _nemesis(wire, random.Random(ctx.seed))
            stop.set()
            await asyncio.sleep(wire.reconnect_bound_s)
            history.recovered.set()

        limit_s = FAULT_WINDOW_S + DRAIN_LIMIT_S + 4 * wire.reconnect_bound_s
        clients = asyncio.gather(
            run_nemesis(),
            _producer(wire, producer_store.queue(QUEUE, OPTS), history, stop),
            *(
                _worker(wire, queue, f"s{s}w{w}", history)
                for s, queue in enumerate(worker_queues)
                for w in range(WORKERS_PER_STORE)
            ),
        )
        done, _ = await asyncio.wait({clients}, timeout=limit_s)
        if not done:
            clients.cancel()
        faults = Counter(fault.kind for fault in wire.proxy.faults)
        reached = sum(fault.reached for fault in wire.proxy.faults)
        reconnect_bound_s = wire.reconnect_bound_s
    expect(
        not history.broken,
        "N1",
        did=f"{history.broken[0] if history.broken else ''} while the wire was being cut",
        demands="every op to return or raise StoreUnavailable within the adapter's op_timeout_s",
    )
    expect(
        not history.unrecovered,
        "N2",
        did=f"{history.unrecovered[0] if history.unrecovered else ''}, once the faults had been over for "
        f"{reconnect_bound_s} s",
        demands="the same open stores to serve ops again within the adapter's reconnect_within_s",
    )
    expect(
        bool(done),
        "N4",
        did=f"kept its workers from draining the queue within {limit_s:.0f} s after the faults began",
        demands="the workers to drain the queue once the faults are over",
    )
    clients.result()
    if ctx.manual:
        await _drain_stranded(ctx, direct_queue, history)
    _check(ctx, history, await _still_present(direct_queue, history), faults, reached)


async def _still_present(queue: Queue, history: History) -> list[JobId]:
    """Every known id (enqueued, or seen in a handout) that the store still holds, read straight from it."""
    known = history.enqueued | set(history.tag_of)
    return [job_id for job_id in known if await queue.get_job(job_id) is not None]


def _check(ctx: RowContext, history: History, still_present: list[JobId], faults: Counter[str], reached: int) -> None:
    verdict = history.verdict(still_present)
    summary = (
        f"{verdict.describe()} (of those lost, {len(set(verdict.lost) & history.acks_in_doubt)} went after an "
        f"ack in doubt: indeterminate, not lost); faults {dict(faults)}, {reached} of them touched the engine's "
        f"connections; "
        f"ops failed with StoreUnavailable {dict(history.failed_ops)}; {len(still_present)} jobs still stored"
    )
    ctx.note(f"N4 history: {summary}")
    expect(
        not verdict.duplicated,
        "N4",
        did=f"handed a job to a second claim while an earlier one was live or acked: {summary}",
        demands="no job completed by two claims across faults",
    )
    expect(
        not verdict.unexpected,
        "N4",
        did=f"handed out ids no enqueue stored: {summary}",
        demands="no unexpected id (an enqueue retried behind the caller's back stores one)",
    )
    unexplained = sorted(set(verdict.lost) - history.acks_in_doubt, key=repr)
    expect(
        not unexplained,
        "N4",
        did=f"lost jobs {unexplained[:10]} (gone without a confirmed or doubtful ack): {summary}",
        demands="every id an enqueue returned to end acked or dead, or still be stored",
    )
    ids_of: dict[str, set[JobId]] = {}
    for job_id, tag in history.tag_of.items():
        ids_of.setdefault(tag, set()).add(job_id)
    twice = {tag: sorted(ids, key=repr) for tag, ids in ids_of.items() if len(ids) > 1}
    expect(
        not twice,
        "N4",
        did=f"stored one enqueue's payload under several ids {dict(list(twice.items())[:5])}: {summary}",
        demands="an enqueue stored at most once (N3), whatever the faults",
    )
    expect(
        not ctx.manual or not still_present,
        "N4",
        did=f"still held {len(still_present)} jobs after every lease had passed and the queue was drained: {summary}",
        demands="jobs a lost claim held to be claimable once its lease passed (N3)",
    )


ROW = row("network_history", ("N1", "N2", "N4"), requires=(Capability.NETWORKED,))(network_history)
