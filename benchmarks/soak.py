"""Soak: worker processes churn through jobs while faults are injected, then the history is checked.

``python benchmarks/soak.py --engine sqlite --processes 4 --jobs 2000 --seconds 60``
(``--engine postgres`` uses ``$ALKSTORE_PG_DSN`` or the default DSN;
``--quick`` is a ~15 s run that tests/test_soak_quick.py makes CI do).

The parent feeds 95 % of ``--jobs`` jobs over 90 % of the run into one queue on a
fresh location. ``--processes`` worker processes (this file with
``--worker``) claim them in small batches and, for each job, mostly ack, but
sometimes retry (with the backoff curve, or a short explicit delay) or fail;
some heartbeat through work longer than the lease, and some sleep past their
lease so it lapses and another worker reclaims the job (short visibility
timeout). The parent SIGKILLs a random worker every few seconds, mid-whatever,
and starts a replacement. Every worker logs each handout and each release to
its own file, one JSON line written with one ``write`` as soon as the op
returned, and announces each release before awaiting it, so the parent knows
the one release per task, at most, that a kill left in flight.

At the deadline a last burst of jobs (5 %) is enqueued, one more worker is
killed and the others are told to stop (SIGTERM: finish the batch in hand,
exit). The parent then drains: sweep, claim and ack until every job is
acked or dead, waiting for leases to lapse. The history checker (contract C4)
reads every log and the final state: no job handed out twice under
overlapping leases, none lost (every job acked, or dead by fail, max attempts
or expiry: those are accounted for), none unexpected, none stranded. A
release left in flight by a kill has an unknown outcome: an ack counts as done
when the job is gone and nobody was handed it later (a deleted job can never
be claimed again); a retry or fail counts as having handed the job back,
which can only hide an overlap, never invent one. The summary prints the
figures; the exit status is 0 only when lost, duplicated, unexpected and
stranded are all 0.

``--network-faults`` (an engine declaring ``networked``, e.g. postgres) also
puts the suite's fault proxy (``alkstore_contract.suite.fault_proxy``) between the
workers and the server: the workers open their stores through it
(``location_via``), and the parent resets every connection, stalls the wire
for up to two seconds or refuses new connections, at random, until the
deadline, besides the kills. A worker op that raises ``StoreUnavailable`` is
logged and the worker goes on (a claim in doubt leaves its jobs to lapse); a
release that raised is in doubt, and resolved like one a kill left in flight.
The summary adds the faults injected and the ops that failed (contract N4).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from alkstore_contract.adapter import Capability, EngineAdapter, NetworkedAdapter
from alkstore_contract.errors import StoreUnavailable
from alkstore_contract.suite.fault_proxy import FaultProxy
from alkstore_contract.suite.history import (
    Handout,
    Release,
    Verdict,
    check_history,
    handout_from_event,
    handout_from_job,
)
from alkstore_contract.suite.registry import load_adapter
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import JobId, JobState, QueueOpts

QUEUE = "soak"
SCRIPT = os.path.abspath(__file__)
RETRY_ERROR = "soak: retry"
FAIL_ERROR = "soak: fail"
TASKS_PER_WORKER = 2
STOP_GRACE_S = 20.0
"""How long stopped workers get to finish the batch in hand before they are killed too."""
DRAIN_TIMEOUT_S = 30.0
OPEN_ATTEMPTS = 50
"""How often a worker tries to open its store through a wire that may be cut at that moment."""
NETWORK_PAUSE_S = (0.5, 3.0)
"""Between two network faults."""
FINAL_BURST_SHARE = 20
"""One job in this many is held back and enqueued at the deadline, just before the workers stop."""


@dataclass(frozen=True)
class Plan:
    """The knobs of one run; each is echoed in the summary."""

    engine: str
    processes: int
    jobs: int
    seconds: float
    seed: int
    visibility_timeout_s: float
    max_attempts: int
    backoff_base_s: float
    kill_every_s: tuple[float, float]
    work_s: float
    p_lapse: float
    p_heartbeat: float
    p_retry: float
    p_fail: float
    p_expires: float
    network_faults: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Plan:
        quick = bool(args.quick)
        return cls(
            engine=args.engine,
            processes=args.processes if args.processes is not None else (3 if quick else 4),
            jobs=args.jobs if args.jobs is not None else (600 if quick else 2000),
            seconds=args.seconds if args.seconds is not None else (10.0 if quick else 60.0),
            seed=args.seed,
            visibility_timeout_s=0.5 if quick else 1.0,
            max_attempts=3,
            backoff_base_s=0.05,
            kill_every_s=(0.8, 1.6) if quick else (2.0, 5.0),
            work_s=0.01,
            p_lapse=0.03,
            p_heartbeat=0.05,
            p_retry=0.12,
            p_fail=0.03,
            p_expires=0.05,
            network_faults=bool(args.network_faults),
        )

    def opts(self) -> QueueOpts:
        return QueueOpts(
            visibility_timeout_s=self.visibility_timeout_s,
            max_attempts=self.max_attempts,
            backoff_base_s=self.backoff_base_s,
        )


# --- the worker process ------------------------------------------------------------------------------


class EventLog:
    """One JSON line per event, each written with a single ``write`` so a kill never tears one in two."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def emit(self, **event: Any) -> None:
        os.write(self._fd, (json.dumps(event) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


class WorkerTask:
    """One claim loop of a worker process: claim a batch, work each job, release it some way."""

    def __init__(self, queue: Queue, name: str, plan: Plan, log: EventLog, rng: random.Random) -> None:
        self.queue = queue
        self.name = name
        self.plan = plan
        self.log = log
        self.rng = rng
        self.claims = 0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                if self.rng.random() < 0.03:
                    await self.queue.sweep_expired()
                handles = await self.queue.claim_batch(self.name, self.rng.randint(1, 3))
            except StoreUnavailable:
                self.log.emit(event="unavailable", op="claim_batch")
                await asyncio.sleep(0.05)
                continue
            if not handles:
                await asyncio.sleep(self.rng.uniform(0.01, 0.05))
                continue
            claims = []
            for handle in handles:
                self.claims += 1
                claims.append(f"{self.name}#{self.claims}")
                job = handle.job
                self.log.emit(
                    event="handout",
                    job=job.id,
                    worker=self.name,
                    claim=claims[-1],
                    lease=job.lease_expires_at.isoformat() if job.lease_expires_at else None,
                    vt=job.visibility_timeout_s,
                    attempts=job.attempts,
                )
            for handle, claim in zip(handles, claims, strict=True):
                await self.work(handle)
                await self.release(handle, claim)

    async def work(self, handle: JobHandle) -> None:
        """Usually a few milliseconds; sometimes past the lease (a lapse), or longer but heartbeating."""
        vt = self.plan.visibility_timeout_s
        roll = self.rng.random()
        if roll < self.plan.p_lapse:
            self.log.emit(event="lapse", job=handle.job.id)
            await asyncio.sleep(vt * 1.5)
        elif roll < self.plan.p_lapse + self.plan.p_heartbeat:
            await asyncio.sleep(vt * 0.6)
            try:
                self.log.emit(event="heartbeat", job=handle.job.id, ok=await handle.heartbeat())
            except StoreUnavailable:
                self.log.emit(event="unavailable", op="heartbeat")
            await asyncio.sleep(vt * 0.6)
        else:
            await asyncio.sleep(self.rng.uniform(0, self.plan.work_s))

    async def release(self, handle: JobHandle, claim: str) -> None:
        """Announce the release, await it, report it: a kill in between leaves the announcement alone.

        A release that raised ``StoreUnavailable`` is reported as in doubt, its outcome unknown.
        """
        roll = self.rng.random()
        op = "retry" if roll < self.plan.p_retry else "fail" if roll < self.plan.p_retry + self.plan.p_fail else "ack"
        self.log.emit(event="begin", job=handle.job.id, claim=claim, op=op)
        try:
            if op == "ack":
                ok = await handle.ack()
            elif op == "retry":
                ok = await handle.retry(error=RETRY_ERROR, delay=self.rng.choice((None, 0, 0.05)))
            else:
                ok = await handle.fail(error=FAIL_ERROR)
        except StoreUnavailable:
            self.log.emit(event="doubt", job=handle.job.id, claim=claim, op=op)
            return
        self.log.emit(event="release", job=handle.job.id, claim=claim, op=op, ok=ok)


async def worker_main(spec: dict[str, Any]) -> None:
    plan = Plan(**{**spec["plan"], "kill_every_s": tuple(spec["plan"]["kill_every_s"])})
    adapter = load_adapter(plan.engine)
    log = EventLog(spec["log"])
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    rng = random.Random(spec["seed"])
    store = await open_through_faults(adapter, spec["location"], spec["seed"])
    try:
        queue = store.queue(QUEUE, plan.opts())
        tasks = [
            WorkerTask(queue, f"{spec['name']}t{index}", plan, log, random.Random(rng.random()))
            for index in range(TASKS_PER_WORKER)
        ]
        log.emit(event="started")
        await asyncio.gather(*(task.run(stop) for task in tasks))
        log.emit(event="stopped")
    finally:
        await store.close()
        log.close()


async def open_through_faults(adapter: EngineAdapter, location: str, seed: int) -> Store:
    """Open a store, trying again while the wire is cut (only a networked soak cuts it)."""
    for _ in range(OPEN_ATTEMPTS - 1):
        try:
            return await adapter.open_store(location, seed=seed)
        except StoreUnavailable:
            await asyncio.sleep(0.2)
    return await adapter.open_store(location, seed=seed)


# --- the parent: feed, kill, stop, drain ------------------------------------------------------------------


@dataclass
class Worker:
    name: str
    log: Path
    process: asyncio.subprocess.Process
    killed: bool = False


@dataclass
class Soak:
    """One run: the location, the workers past and present, and what the parent did itself."""

    plan: Plan
    adapter: EngineAdapter
    location: str
    logdir: Path
    rng: random.Random
    workers: list[Worker] = field(default_factory=list)
    enqueued: list[JobId] = field(default_factory=list)
    drain_handouts: list[Handout] = field(default_factory=list)
    drain_releases: list[Release] = field(default_factory=list)
    kills: int = 0
    stop_kills: int = 0
    proxy: FaultProxy | None = None
    """The fault proxy the workers connect through (``--network-faults``), else ``None``."""
    worker_location: str = ""
    """Where the workers open their stores: the location, or the same location through the proxy."""

    async def spawn(self) -> None:
        index = len(self.workers)
        name = f"p{index}"
        log = self.logdir / f"{name}.jsonl"
        spec = {
            "plan": asdict(self.plan),
            "location": self.worker_location or self.location,
            "name": name,
            "seed": self.rng.randrange(2**31),
            "log": str(log),
        }
        stderr_fd = os.open(self.logdir / f"{name}.stderr", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                SCRIPT,
                "--worker",
                json.dumps(spec),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr_fd,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
        finally:
            os.close(stderr_fd)  # the child has its own copy
        self.workers.append(Worker(name, log, process))

    def live(self) -> list[Worker]:
        return [w for w in self.workers if w.process.returncode is None]

    async def feed(self, queue: Queue, jobs: int, until: float) -> None:
        """Enqueue ``jobs`` more jobs by ``until`` (loop time), in small batches; some may expire before they run."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        steps = max(1, int((until - start) / 0.1))
        per_step = -(-jobs // steps)
        total = len(self.enqueued) + jobs
        while len(self.enqueued) < total:
            count = min(per_step, total - len(self.enqueued))
            if self.rng.random() < self.plan.p_expires:
                self.enqueued += await queue.enqueue_many(
                    [{"n": len(self.enqueued) + i} for i in range(count)], expires=self.rng.uniform(0.5, 3.0)
                )
            else:
                self.enqueued += await queue.enqueue_many([{"n": len(self.enqueued) + i} for i in range(count)])
            await asyncio.sleep(max(0.0, start + 0.1 * (jobs - (total - len(self.enqueued))) / per_step - loop.time()))

    async def kill_now_and_then(self, until: float) -> None:
        """SIGKILL a random worker every few seconds and start a replacement, until ``until``."""
        loop = asyncio.get_running_loop()
        while True:
            pause = self.rng.uniform(*self.plan.kill_every_s)
            if loop.time() + pause >= until:
                return
            await asyncio.sleep(pause)
            self.check_no_worker_died()
            await self.kill(self.rng.choice(self.live()))
            await self.spawn()

    async def cut_now_and_then(self, until: float) -> None:
        """Reset, stall or refuse the workers' connections at random until ``until`` (``--network-faults``)."""
        if self.proxy is None:
            return
        loop = asyncio.get_running_loop()
        while True:
            pause = self.rng.uniform(*NETWORK_PAUSE_S)
            if loop.time() + pause >= until:
                return
            await asyncio.sleep(pause)
            kind = self.rng.choice(("reset", "stall", "refuse"))
            if kind == "reset":
                self.proxy.reset()
            elif kind == "stall":
                async with self.proxy.stalled():
                    await asyncio.sleep(self.rng.uniform(0.2, 2.0))
            else:
                async with self.proxy.refusing():
                    self.proxy.reset()
                    await asyncio.sleep(self.rng.uniform(0.2, 1.0))

    async def kill(self, victim: Worker) -> None:
        victim.process.kill()
        await victim.process.wait()
        victim.killed = True
        self.kills += 1

    def check_no_worker_died(self, *, stopped: bool = False) -> None:
        """Raise, with its stderr, if a worker ended on its own (or, once ``stopped``, ended badly)."""
        for worker in self.workers:
            code = worker.process.returncode
            # SIGTERM kills a worker still starting up (before its handler): it had claimed nothing yet.
            if code is not None and not worker.killed and not (stopped and code in (0, -signal.SIGTERM)):
                stderr = (self.logdir / f"{worker.name}.stderr").read_text(errors="replace")[-4000:]
                raise RuntimeError(f"worker {worker.name} exited with {worker.process.returncode}:\n{stderr}")

    async def stop_workers(self) -> None:
        """SIGKILL one worker (the drain must wait out its leases), SIGTERM the rest to finish their batch.

        A stopped worker that does not finish within ``STOP_GRACE_S`` is killed too.
        """
        await self.kill(self.rng.choice(self.live()))
        live = self.live()
        for worker in live:
            worker.process.send_signal(signal.SIGTERM)
        for worker in live:
            try:
                await asyncio.wait_for(worker.process.wait(), STOP_GRACE_S)
            except TimeoutError:
                worker.process.kill()
                await worker.process.wait()
                worker.killed = True
                self.stop_kills += 1
        self.check_no_worker_died(stopped=True)

    async def drain(self, queue: Queue) -> None:
        """Sweep, claim and ack until every job is acked or dead, waiting for leases and backoffs to run out."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DRAIN_TIMEOUT_S
        unresolved = set(self.enqueued)
        claims = 0
        while unresolved and loop.time() < deadline:
            await queue.sweep_expired()
            handles = await queue.claim_batch("drain", 50)
            for handle in handles:
                claims += 1
                job = handle.job
                assert job.lease_expires_at is not None
                claim = f"drain#{claims}"
                self.drain_handouts.append(
                    handout_from_job(
                        job.id, "drain", claim, job.lease_expires_at, job.visibility_timeout_s, job.attempts
                    )
                )
                self.drain_releases.append(Release(job.id, claim, "ack", await handle.ack()))
            if handles:
                continue
            for job_id in list(unresolved):
                left = await queue.get_job(job_id)
                if left is None or left.state == JobState.DEAD:
                    unresolved.discard(job_id)
            if unresolved:
                await asyncio.sleep(0.1)


# --- reading the logs and judging -----------------------------------------------------------------------


@dataclass
class History:
    """Everything the logs say, plus the final state of every job."""

    handouts: list[Handout] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)
    in_flight: list[dict[str, Any]] = field(default_factory=list)
    """Releases announced by a worker that was killed before it could report them, or that raised
    ``StoreUnavailable``: their outcome is unknown."""
    events: Counter[str] = field(default_factory=Counter)
    torn_lines: int = 0


def read_logs(soak: Soak) -> History:
    history = History()
    for worker in soak.workers:
        pending: dict[str, dict[str, Any]] = {}
        lines = worker.log.read_text().split("\n") if worker.log.exists() else []
        for line in lines:
            if not line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                history.torn_lines += 1
                continue
            kind = event["event"]
            if kind == "handout":
                history.handouts.append(handout_from_event(event))
            elif kind == "begin":
                pending[event["claim"]] = event
            elif kind == "doubt":
                history.in_flight.append(pending.pop(event["claim"], event))
                history.events[f"{event['op']}_in_doubt"] += 1
            elif kind == "unavailable":
                history.events[f"unavailable_{event['op']}"] += 1
            elif kind == "release":
                pending.pop(event["claim"], None)
                history.releases.append(Release(event["job"], event["claim"], event["op"], bool(event["ok"])))
                history.events[f"{event['op']}_{'ok' if event['ok'] else 'fenced'}"] += 1
            elif kind == "heartbeat":
                history.events[f"heartbeat_{'ok' if event['ok'] else 'fenced'}"] += 1
            else:
                history.events[kind] += 1
        if pending and not worker.killed:
            raise RuntimeError(f"worker {worker.name} stopped cleanly with releases unreported: {list(pending)}")
        history.in_flight += pending.values()
    return history


def resolve_in_flight(history: History, gone: set[JobId]) -> Counter[str]:
    """Give each release a kill (or an outage) left in flight the only outcome consistent with what followed.

    An ack took effect iff the job is gone and no later handout of it exists
    (a deleted job is never claimed again); a retry or fail is counted as
    having handed the job back, which can only hide an overlap.
    """
    outcomes: Counter[str] = Counter()
    claimed_at = {h.claim: h.claimed_at for h in history.handouts}
    for event in history.in_flight:
        job_id, claim, op = event["job"], event["claim"], event["op"]
        if op == "ack":
            later = any(h.job_id == job_id and h.claimed_at > claimed_at[claim] for h in history.handouts)
            ok = job_id in gone and not later
        else:
            ok = True
        outcomes[f"{op}_{'done' if ok else 'not_done'}"] += 1
        history.releases.append(Release(job_id, claim, op, ok))
    return outcomes


@dataclass
class Outcome:
    verdict: Verdict
    acked: int
    dead: Counter[str]
    stranded: list[JobId]
    in_flight: Counter[str]

    @property
    def ok(self) -> bool:
        return self.verdict.ok and not self.stranded


async def judge(soak: Soak, queue: Queue, history: History) -> Outcome:
    history.handouts += soak.drain_handouts
    history.releases += soak.drain_releases
    present: list[JobId] = []
    dead: Counter[str] = Counter()
    stranded: list[JobId] = []
    gone: set[JobId] = set()
    for job_id in soak.enqueued:
        job = await queue.get_job(job_id)
        if job is None:
            gone.add(job_id)
            continue
        present.append(job_id)
        if job.state == JobState.DEAD:
            dead[job.last_error or "?"] += 1
        else:
            stranded.append(job_id)
    in_flight = resolve_in_flight(history, gone)
    verdict = check_history(soak.enqueued, history.handouts, history.releases, still_present=present)
    acked = len({r.job_id for r in history.releases if r.op == "ack" and r.succeeded})
    return Outcome(verdict, acked, dead, stranded, in_flight)


def summary(soak: Soak, history: History, outcome: Outcome, elapsed_s: float, drain_s: float) -> str:
    plan = soak.plan
    verdict = outcome.verdict
    events = history.events
    dead = outcome.dead
    lines = [
        f"alkstore soak: engine={plan.engine} processes={plan.processes} jobs={plan.jobs} seconds={plan.seconds:g} "
        f"seed={plan.seed} vt={plan.visibility_timeout_s:g}s max_attempts={plan.max_attempts} "
        f"network_faults={'on' if plan.network_faults else 'off'} "
        f"backoff_base={plan.backoff_base_s:g}s kill_every={plan.kill_every_s[0]:g}-{plan.kill_every_s[1]:g}s",
        f"  ran {elapsed_s:.1f} s (drain {drain_s:.1f} s), {len(soak.workers)} worker processes in all",
        f"  jobs: enqueued {len(soak.enqueued)}, processed (acked) {outcome.acked}, "
        f"dead {sum(dead.values())} (failed {dead[FAIL_ERROR]}, retries exhausted {dead[RETRY_ERROR]}, "
        f"lapses exhausted {dead['max attempts exceeded']}, expired {dead['expired']})",
        f"  handouts {verdict.handouts} ({len(soak.drain_handouts)} by the drain), "
        f"handed out again after a retry or a lapsed lease {len(verdict.recovered)} jobs",
        f"  faults: kills {soak.kills} (+{soak.stop_kills} at stop), lapses {events['lapse']}, "
        f"retries {events['retry_ok']}, fails {events['fail_ok']}, heartbeats {events['heartbeat_ok']}, "
        f"fenced releases {events['ack_fenced'] + events['retry_fenced'] + events['fail_fenced']}, "
        f"releases in flight at a kill or an outage {sum(outcome.in_flight.values())} {dict(outcome.in_flight)}",
    ]
    if soak.proxy is not None:
        faults = Counter(fault.kind for fault in soak.proxy.faults)
        failed = {key.removeprefix("unavailable_"): n for key, n in events.items() if key.startswith("unavailable_")}
        in_doubt = {key: n for key, n in events.items() if key.endswith("_in_doubt")}
        lines.append(
            f"  network faults: resets {faults['reset']}, stalls {faults['stall']}, refusals {faults['refuse']}; "
            f"ops failed with StoreUnavailable {sum(failed.values()) + sum(in_doubt.values())} "
            f"(claims/sweeps/heartbeats {failed}, releases in doubt {in_doubt})"
        )
    lines += [
        f"  lost {len(verdict.lost)}, duplicated {len(verdict.duplicated)}, unexpected {len(verdict.unexpected)}, "
        f"stranded {len(outcome.stranded)}",
        f"  verdict: {'OK' if outcome.ok else 'FAILED'}",
    ]
    if not outcome.ok:
        lines.append(f"  {verdict.describe()}; stranded {outcome.stranded[:10]}")
    return "\n".join(lines) + "\n"


async def run(plan: Plan, keep: bool) -> int:
    adapter = load_adapter(plan.engine)
    reason = await adapter.unavailable_reason()
    if reason is not None:
        sys.stderr.write(f"soak: engine {plan.engine} cannot run here: {reason}\n")
        return 2
    if Capability.MULTI_PROCESS not in adapter.capabilities:
        sys.stderr.write(f"soak: engine {plan.engine} does not declare multi_process; the soak needs it\n")
        return 2
    if plan.network_faults and (
        Capability.NETWORKED not in adapter.capabilities or not isinstance(adapter, NetworkedAdapter)
    ):
        sys.stderr.write(f"soak: engine {plan.engine} does not declare networked; --network-faults needs it\n")
        return 2
    location = await adapter.create_location()
    logdir = Path(tempfile.mkdtemp(prefix="alkstore-soak-"))
    soak = Soak(plan, adapter, location, logdir, random.Random(plan.seed))
    if plan.network_faults and isinstance(adapter, NetworkedAdapter):
        soak.proxy = FaultProxy(*adapter.server_address(location))
        await soak.proxy.start()
        soak.worker_location = adapter.location_via(location, *soak.proxy.address)
    store = await adapter.open_store(location, seed=plan.seed)
    try:
        queue = store.queue(QUEUE, plan.opts())
        loop = asyncio.get_running_loop()
        started = loop.time()
        until = started + plan.seconds
        for _ in range(plan.processes):
            await soak.spawn()
        burst = max(1, plan.jobs // FINAL_BURST_SHARE)
        await asyncio.gather(
            soak.feed(queue, plan.jobs - burst, started + plan.seconds * 0.9),
            soak.kill_now_and_then(until),
            soak.cut_now_and_then(until),
        )
        await asyncio.sleep(max(0.0, until - loop.time()))
        # A last burst the workers are busy with when one of them is killed and the rest are stopped:
        # the drain then has ready jobs to take and a dead worker's leases to wait out.
        await soak.feed(queue, burst, loop.time())
        await asyncio.sleep(plan.visibility_timeout_s / 4)
        await soak.stop_workers()
        drain_started = loop.time()
        await soak.drain(queue)
        drain_s = loop.time() - drain_started
        history = read_logs(soak)
        outcome = await judge(soak, queue, history)
        sys.stdout.write(summary(soak, history, outcome, loop.time() - started, drain_s))
        if keep:
            sys.stdout.write(f"  logs kept in {logdir}; location {location}\n")
        return 0 if outcome.ok else 1
    finally:
        for worker in soak.live():
            worker.process.kill()
            with contextlib.suppress(ProcessLookupError):
                await worker.process.wait()
        await store.close()
        if soak.proxy is not None:
            await soak.proxy.close()
        if not keep:
            await adapter.drop_location(location)
            shutil.rmtree(logdir, ignore_errors=True)


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        asyncio.run(worker_main(json.loads(sys.argv[2])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engine", default="sqlite", help="engine (needs multi_process): sqlite, postgres, or package.module:adapter"
    )
    parser.add_argument("--processes", type=int, help="worker processes at a time (default 4; quick 3)")
    parser.add_argument("--jobs", type=int, help="jobs to feed (default 2000; quick 400)")
    parser.add_argument("--seconds", type=float, help="how long workers run and faults are injected (default 60)")
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice (default 1)")
    parser.add_argument("--quick", action="store_true", help="a ~15 s run for CI")
    parser.add_argument("--keep", action="store_true", help="keep the logs and the location")
    parser.add_argument(
        "--network-faults",
        action="store_true",
        help="route the workers through a fault proxy that resets, stalls and refuses connections (needs networked)",
    )
    args = parser.parse_args()
    started = time.monotonic()
    code = asyncio.run(run(Plan.from_args(args), args.keep))
    sys.stdout.write(f"  wall time {time.monotonic() - started:.1f} s\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
