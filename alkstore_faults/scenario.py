"""One run of the workload under one fault: broker, workers, the fault, the wait for recovery, the library's
own final state of each job (``inspect``, protocol 2), the checker.

The workload and the choice among in-flight runs come from the seed; the library's own scheduling does not,
so a replay repeats the same jobs, the same fault and the same timing, not necessarily the same job faulted.
Every fault but ``startup`` strikes at steady state: once every worker has taken a job (its first ``start``
record), or the runner's declared warm-up has passed; ``startup`` kills the first worker to take a job as soon
as its first ``start`` is seen, so a race in a library's start-up is reported in a column of its own.
Everything started here is stopped in ``finally``, whatever fails.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alkstore_contract.suite.fault_proxy import FaultProxy
from alkstore_faults.brokers import start_broker
from alkstore_faults.checker import FaultEvent, Job, Library, Verdict, check
from alkstore_faults.handler_records import Run, read_ledgers, runs_of
from alkstore_faults.runner_program import Description, Runner
from alkstore_faults.worker_group import WorkerPool

WORKERS = 2
JOBS = 6
IN_FLIGHT_TIMEOUT_S = 60.0
POLL_S = 0.05
PAUSE_TRIES = 5
"""Picks of a run to pause before the pause strikes anyway: on a loaded machine a short handler can end between
the ledger's read and the signal, and a pause of a worker with no job in flight reaches nothing (``_hit``)."""
SETTLE_S = 1.0
ACK_WAIT_S = 3.0
"""How long after a run ended ok the harness waits for its ``ack`` record, for a runner that writes them."""
BROKER_DOWN_S = 1.0
STEADY_TIMEOUT_S = 15.0
"""How long the harness waits for steady state before it strikes anyway (the event's detail says so)."""


@dataclass
class FaultRun:
    """What one run saw: the fault events, the runs, the verdict, and what could not be done."""

    fault: str
    round: int
    seed: int
    jobs: list[Job]
    events: list[FaultEvent] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    verdict: Verdict | None = None
    reached: bool = False
    error: str | None = None
    skipped_lines: list[str] = field(default_factory=list)
    seconds: float = 0.0
    pids: list[int] = field(default_factory=list)
    """The process-group leaders of the run's workers, so a test can see that none is left running."""
    restarts: list[dict[str, object]] = field(default_factory=list)
    """The workers that exited on their own during the run and were restarted (``WorkerPool.supervise``)."""
    states: list[dict[str, Any]] | None = None
    """What the library holds for each job after the workers stopped (``inspect``); ``None`` for protocol 1."""
    kept: Path | None = None
    """The run's scratch directory (jobs, ledgers, worker logs, state), when ``--keep`` asked to keep it."""


def workload(rng: random.Random, fault: str, description: Description) -> list[Job]:
    """The jobs of a run: ``JOBS`` of 0.5–1.5 s; under ``slow_handler`` the first outlives the lease."""
    jobs = [Job(f"j{index:04d}", round(rng.uniform(0.5, 1.5), 3)) for index in range(JOBS)]
    if fault == "slow_handler":
        jobs[0] = Job(jobs[0].id, round(description.lease_s * 1.25 + 1, 3))
    return jobs


def pause_s(description: Description) -> float:
    """How long a worker stays stopped: past its lease, with slack for a loaded machine."""
    return description.lease_s * 1.25 + 2


def _open_runs(ledgers: Path, pool: WorkerPool) -> list[Run]:
    records, _ = read_ledgers(ledgers)
    return [run for run in runs_of(records) if run.end is None and pool.alive(run.worker)]


async def _steady(ledgers: Path, pool: WorkerPool, description: Description, jobs: list[Job]) -> str:
    """Wait for steady state: every live worker has taken a job (a ``start`` record in its ledger), or the
    runner's declared ``warmup_s`` has passed since the workers started; at most ``STEADY_TIMEOUT_S``, and no
    longer once every job has been taken (a worker that starts late may find none left). Returns what was
    reached, for the fault's detail."""
    started = time.monotonic()
    deadline = started + STEADY_TIMEOUT_S
    while time.monotonic() < deadline:
        records, _ = read_ledgers(ledgers)
        took = {record.worker for record in records if record.ev == "start"}
        live = [worker for worker in pool.processes if pool.alive(worker)]
        if live and all(worker in took for worker in live):
            return "at steady state (every worker had taken a job)"
        if description.warmup_s and time.monotonic() - started >= description.warmup_s:
            return f"at steady state (the runner's warm-up of {description.warmup_s} s had passed)"
        if {job.id for job in jobs} <= {record.job for record in records if record.ev == "start"}:
            return "NOT at steady state: every job was taken before every worker had taken one"
        await asyncio.sleep(POLL_S)
    return f"NOT at steady state: not every worker had taken a job after {STEADY_TIMEOUT_S} s"


async def _wait_in_flight(ledgers: Path, pool: WorkerPool, job: str | None = None) -> list[Run]:
    """The runs in flight on live workers (of ``job`` when given), as soon as there is one; ``[]`` on timeout."""
    deadline = time.monotonic() + IN_FLIGHT_TIMEOUT_S
    while time.monotonic() < deadline:
        runs = [run for run in _open_runs(ledgers, pool) if job is None or run.job == job]
        if runs:
            return runs
        await asyncio.sleep(POLL_S)
    return []


def _stopped_in_flight(ledgers: Path, pool: WorkerPool, victim: Run) -> bool:
    """Stop ``victim``'s worker and read its ledger while it stands still: True, left stopped, when the run is
    still in flight; else False, the worker continued at once (its job ended between the read and the signal)."""
    pool.pause(victim.worker)
    records, _ = read_ledgers(ledgers)
    same = (victim.job, victim.worker, victim.start)
    if any(run.end is None for run in runs_of(records) if (run.job, run.worker, run.start) == same):
        return True
    pool.resume(victim.worker)
    return False


def _done(ledgers: Path, pool: WorkerPool, jobs: list[Job]) -> bool:
    """Every job meant to succeed completed, no live worker is still in a handler, and, when the runner writes
    ``ack`` records (one is in the ledger), no run of a live worker that ended ok in the last ``ACK_WAIT_S``
    still waits for its own: a late completion's ack comes after the run of the workload looks done."""
    records, _ = read_ledgers(ledgers)
    runs = runs_of(records)
    completed = {run.job for run in runs if run.ok}
    if any(job.id not in completed for job in jobs if not job.fail):
        return False
    if any(run.end is None and pool.alive(run.worker) for run in runs):
        return False
    if not any(record.ev == "ack" for record in records):
        return True
    now = time.monotonic()
    return not any(
        run.ok and run.accepted is None and run.end is not None and now - run.end < ACK_WAIT_S
        for run in runs
        if pool.alive(run.worker)
    )


def _hit(event: FaultEvent, runs: list[Run]) -> list[str]:
    """The jobs of ``event`` whose run was really in flight when it struck (on its worker, for a worker's fault).

    The harness reads the ledger a moment before it strikes; a run that ended in that moment was not hit, and a
    fault that hit no run reached nothing: the run of the workload is then no evidence either way.
    """
    return [
        job
        for job in event.jobs
        if any(
            run.job == job
            and (event.worker is None or run.worker == event.worker)
            and run.start < event.at
            and (run.end is None or run.end > event.at)
            for run in runs
        )
    ]


async def _settle(ledgers: Path, pool: WorkerPool, jobs: list[Job], deadline: float) -> None:
    """Wait until the run is done (``_done``) or the recovery window has passed: the ledger is a file to poll."""
    while time.monotonic() < deadline:
        pool.supervise()
        if _done(ledgers, pool, jobs):
            return
        await asyncio.sleep(POLL_S * 4)


async def _inject(
    fault: str,
    rng: random.Random,
    description: Description,
    pool: WorkerPool,
    ledgers: Path,
    jobs: list[Job],
    broker: Any,
    proxy: FaultProxy | None,
) -> FaultEvent | None:
    """Inject ``fault`` once a job is in flight; ``None`` when no job ever was (the fault reached nothing)."""
    if fault == "startup":
        runs = await _wait_in_flight(ledgers, pool)
        if not runs:
            return None
        first = min(runs, key=lambda run: run.start)
        at = pool.kill9(first.worker)
        pool.start()
        after = at - pool.launched[first.worker]
        detail = f"SIGKILL of the worker's process group at its first job, {after:.2f} s after it was started"
        return FaultEvent(fault, at, at, first.worker, [first.job], detail)
    target_job = jobs[0].id if fault == "slow_handler" else None
    steady = await _steady(ledgers, pool, description, jobs)
    await asyncio.sleep(rng.uniform(0.0, 0.5))
    for _ in range(PAUSE_TRIES):
        runs = await _wait_in_flight(ledgers, pool, target_job)
        if not runs:
            return None
        victim = rng.choice(sorted(runs, key=lambda run: (run.job, run.worker)))
        if fault != "pause" or _stopped_in_flight(ledgers, pool, victim):
            break
    in_flight = sorted({run.job for run in runs})
    event = await _strike(fault, description, pool, broker, proxy, jobs, runs, victim, in_flight)
    event.detail += f", {steady}"
    return event


async def _strike(
    fault: str,
    description: Description,
    pool: WorkerPool,
    broker: Any,
    proxy: FaultProxy | None,
    jobs: list[Job],
    runs: list[Run],
    victim: Run,
    in_flight: list[str],
) -> FaultEvent:
    """Strike ``fault`` now, at ``victim`` (a worker's fault) or at the broker or the connections."""
    if fault == "kill9":
        at = pool.kill9(victim.worker)
        pool.start()
        return FaultEvent(fault, at, at, victim.worker, [victim.job], "SIGKILL of the worker's process group")
    if fault == "pause":
        at = pool.pause(victim.worker)
        await asyncio.sleep(pause_s(description))
        until = pool.resume(victim.worker)
        return FaultEvent(fault, at, until, victim.worker, [victim.job], f"SIGSTOP for {pause_s(description)} s")
    if fault in ("broker_restart", "broker_restart_aof", "broker_restart_volatile"):
        at = time.monotonic()
        await broker.crash_and_restart(BROKER_DOWN_S)
        return FaultEvent(fault, at, time.monotonic(), None, in_flight, "SIGKILL of the broker, restart")
    if fault == "net_cut":
        assert proxy is not None
        at = time.monotonic()
        cut = proxy.reset()
        return FaultEvent(fault, at, at, None, in_flight, f"reset {cut} connection(s) through the fault proxy")
    slow = runs[0]
    return FaultEvent(
        fault,
        slow.start + description.lease_s,
        slow.start + description.lease_s,
        slow.worker,
        [],
        f"handler of {slow.job} runs {jobs[0].duration_s} s, lease {description.lease_s} s",
    )


async def proxy_for(broker: Any, fault: str) -> tuple[FaultProxy | None, str]:
    """The fault proxy in front of ``broker`` under ``net_cut`` (``None`` otherwise), and the address the workers
    get: the proxy's under ``net_cut``, the broker's own otherwise."""
    if fault != "net_cut":
        return None, broker.address
    proxy = FaultProxy("127.0.0.1", broker.port)
    await proxy.start()
    return proxy, str(broker.address).replace(f":{broker.port}", f":{proxy.address[1]}")


@dataclass
class Servers:
    """A run's throwaway broker and, under ``net_cut``, the fault proxy the workers reach it through; what
    ``close`` closes, whichever of them had started."""

    broker: Any = None
    proxy: FaultProxy | None = None
    address: str = ""
    """The address the workers get: the proxy's under ``net_cut``, the broker's own otherwise."""

    async def start(self, runner: Runner, fault: str, queue: str, jobs_file: Path, state: Path) -> None:
        """Start the broker (with AOF for ``broker_restart_aof``) and its proxy, then call the runner's
        ``enqueue`` before any worker starts: a library over a database creates its schema with its client."""
        self.broker = await start_broker(runner.broker, aof=fault == "broker_restart_aof")
        self.proxy, self.address = await proxy_for(self.broker, fault)
        await asyncio.to_thread(runner.enqueue, self.broker.address, queue, jobs_file, state)

    async def close(self) -> None:
        if self.proxy is not None:
            await self.proxy.close()
        if self.broker is not None:
            await self.broker.close()


def make_scratch(prefix: str, jobs_text: str) -> tuple[Path, Path, Path, Path, Path]:
    """A run's scratch directory (named from ``prefix``) and, in it, the workers' ledgers, their logs, the
    runner's state and the jobs file holding ``jobs_text``: the same layout for the jobs and the schedule workload,
    so ``--keep`` leaves both in one shape."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    ledgers, logs, state = scratch / "ledgers", scratch / "logs", scratch / "state"
    for directory in (ledgers, logs, state):
        directory.mkdir()
    jobs_file = scratch / "jobs.jsonl"
    jobs_file.write_text(jobs_text, encoding="utf-8")
    return scratch, ledgers, logs, state, jobs_file


def with_log_tails(error: str, logs: Path) -> str:
    """``error`` followed by the tail of each worker's log in ``logs``: a run that could not be made says why in
    the workers' own words."""
    tails = [f"{path.name}: {path.read_text(errors='replace')[-600:]}" for path in sorted(logs.glob("*.log"))]
    return error + "\n" + "\n".join(tails)


def put_away(scratch: Path, keep: bool) -> Path | None:
    """``scratch`` when ``keep`` (``--keep``: it stays for a look), else ``None`` once it is removed."""
    if keep:
        return scratch
    shutil.rmtree(scratch, ignore_errors=True)
    return None


async def run_fault(
    runner: Runner, description: Description, fault: str, seed: int, round_: int, keep: bool = False
) -> FaultRun:
    """Run the workload under ``fault`` once, on a fresh broker and queue, and check what happened; ``keep``
    leaves the scratch directory (jobs, ledgers, worker logs, the runner's state) in place (``FaultRun.kept``)."""
    rng = random.Random(f"{seed}:{fault}:{round_}")
    jobs = workload(rng, fault, description)
    result = FaultRun(fault, round_, seed, jobs)
    started = time.monotonic()
    scratch, ledgers, logs, state, jobs_file = make_scratch(
        f"alkstore-faults-{runner.name}-{fault}.", "".join(json.dumps(job.__dict__) + "\n" for job in jobs)
    )
    queue = f"alkf-{seed}-{fault}-{round_}-{random.randrange(1 << 30):x}"
    servers = Servers()
    pool: WorkerPool | None = None
    try:
        await servers.start(runner, fault, queue, jobs_file, state)
        pool = WorkerPool(runner, servers.address, queue, ledgers, logs, state)
        for _ in range(WORKERS):
            pool.start()
        event = await _inject(fault, rng, description, pool, ledgers, jobs, servers.broker, servers.proxy)
        if event is not None:
            result.reached = True
            result.events.append(event)
            deadline = event.until + description.recovery_window_s + max(job.duration_s for job in jobs) + 2
            await _settle(ledgers, pool, jobs, deadline)
            await asyncio.sleep(SETTLE_S)
    except Exception as exc:  # a runner or a broker that fails is reported, never a traceback
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        finished, finished_wall = time.monotonic(), time.time()
        if pool is not None:
            await asyncio.to_thread(pool.stop_all)
            result.pids = [process.pid for process in pool.processes.values()]
            result.restarts = pool.restarts
        if runner.protocol >= 2 and servers.broker is not None and result.reached:
            # After every worker stopped, before the broker does: what the library itself holds for each job.
            ids = [job.id for job in jobs]
            result.states = await asyncio.to_thread(
                runner.inspect, servers.broker.address, queue, jobs_file, state, ids
            )
        await servers.close()
    records, result.skipped_lines = read_ledgers(ledgers)
    result.runs = runs_of(records)
    for event in result.events:
        event.jobs = _hit(event, result.runs)
        result.reached = result.reached and (bool(event.jobs) or event.kind == "slow_handler")
    if result.reached:
        library = Library(
            None if result.states is None else {state["job"]: state for state in result.states},
            description.policies,
            description.recovery_rules,
            finished_wall,
        )
        result.verdict = check(jobs, result.runs, result.events, pool.deaths if pool else {}, finished, library)
    if result.error is not None or not result.reached:
        result.error = with_log_tails(
            result.error or "the fault reached no job: none was in flight when it struck", logs
        )
    result.kept = put_away(scratch, keep)
    result.seconds = time.monotonic() - started
    return result
