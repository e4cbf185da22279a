"""One run of the ``schedule`` workload under one fault (docs/runtime-faults.md, "The schedule workload").

Three workers, each the runner's ``schedule`` subcommand (a worker of the library running its scheduler, or, for
a library whose docs say to run one scheduler, the first worker running it and the others working), run a
one-second schedule whose handler writes a ledger record with its tick's scheduled time. Once every worker is
up and a tick has run, the window opens; ``LEAD_S`` later the fault strikes (a worker's fault at the scheduler
when there is one, else at a worker running a tick, else at any); the run goes on for the runner's recovery
window (and the grace a late tick has), and the window closes ``grace_s`` before the workers stop, so each of
its ticks had its grace to run. The checker then counts, per tick, the runs that completed it.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alkstore_contract.suite.fault_proxy import FaultProxy
from alkstore_faults.checker import FaultEvent
from alkstore_faults.handler_records import Run, read_ledgers, runs_of
from alkstore_faults.runner_program import Description, Runner
from alkstore_faults.scenario import Servers, make_scratch, put_away, with_log_tails
from alkstore_faults.schedule_checker import TickVerdict, check_interval_schedule, check_schedule, window_ticks
from alkstore_faults.schedule_spec import ScheduleSpec
from alkstore_faults.worker_group import WorkerPool

WORKERS = 3
LEAD_S = 5.0
"""How long the window runs before the fault: ticks the fault cannot explain, a check on the runner itself."""
STEADY_TIMEOUT_S = 45.0
"""How long the harness waits for every worker to be up and a tick to have run before it gives up."""
IN_FLIGHT_WAIT_S = 3.0
"""How long a worker's fault waits for a tick's run in flight to strike at, under every-worker schedulers."""
MAX_TAIL_S = 60.0
POLL_S = 0.1
BROKER_DOWN_S = 1.0


@dataclass
class ScheduleRun:
    """What one run of the schedule workload saw."""

    fault: str
    round: int
    seed: int
    events: list[FaultEvent] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    verdict: TickVerdict | None = None
    window: tuple[float, float] | None = None
    """The window's start and end, wall-clock epoch seconds."""
    down: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    restarts: list[dict[str, object]] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    skipped_lines: list[str] = field(default_factory=list)
    kept: Path | None = None
    """The run's scratch directory (ledgers, worker logs), when ``--keep`` asked to keep it."""


def tail_s(description: Description, spec: ScheduleSpec) -> float:
    """How long the run goes on after the fault ended: the runner's recovery window and a late tick's grace."""
    return min(MAX_TAIL_S, description.recovery_window_s + spec.grace_s)


async def _steady(ledgers: Path, pool: WorkerPool, description: Description) -> bool:
    """Every worker started, a tick's run completed, and the runner's warm-up passed; ``False`` on timeout."""
    started = time.monotonic()
    while time.monotonic() - started < STEADY_TIMEOUT_S:
        pool.supervise()
        records, _ = read_ledgers(ledgers)
        ran = any(record.ev == "end" and record.tick is not None for record in records)
        if ran and time.monotonic() - started >= description.warmup_s:
            return True
        await asyncio.sleep(POLL_S)
    return False


async def _victim(ledgers: Path, pool: WorkerPool, rng: random.Random) -> str:
    """The worker a worker's fault strikes: the one scheduler, else a worker running a tick, else any live one."""
    if pool.one_scheduler and pool.scheduler is not None and pool.alive(pool.scheduler):
        return pool.scheduler
    deadline = time.monotonic() + IN_FLIGHT_WAIT_S
    while time.monotonic() < deadline:
        records, _ = read_ledgers(ledgers)
        running = sorted({run.worker for run in runs_of(records) if run.end is None and pool.alive(run.worker)})
        if running:
            return rng.choice(running)
        await asyncio.sleep(POLL_S / 2)
    return rng.choice(sorted(worker for worker in pool.processes if pool.alive(worker)))


async def _strike(
    fault: str, description: Description, pool: WorkerPool, victim: str, broker: Any, proxy: FaultProxy | None
) -> FaultEvent:
    role = " (the scheduler)" if victim == pool.scheduler else ""
    if fault == "kill9":
        at = pool.kill9(victim)
        pool.start()
        return FaultEvent(fault, at, at, victim, [], f"SIGKILL of {victim}{role}'s process group, a new worker started")
    if fault == "pause":
        pause = description.lease_s * 1.25 + 2
        at = pool.pause(victim)
        await asyncio.sleep(pause)
        return FaultEvent(fault, at, pool.resume(victim), victim, [], f"SIGSTOP of {victim}{role} for {pause} s")
    if fault == "net_cut":
        assert proxy is not None
        at = time.monotonic()
        cut = proxy.reset()
        return FaultEvent(fault, at, at, None, [], f"reset {cut} connection(s) through the fault proxy")
    at = time.monotonic()
    await broker.crash_and_restart(BROKER_DOWN_S)
    return FaultEvent(fault, at, time.monotonic(), None, [], "SIGKILL of the broker, restart")


def _down(events: list[FaultEvent], pool: WorkerPool, offset: float) -> dict[str, list[tuple[float, float]]]:
    """The wall-clock intervals of each documented skip's ``when``: the one scheduler killed or stopped (a
    library whose every worker runs the scheduler has none under a one-worker fault), the broker down."""
    scheduler_down = [
        (event.at + offset, event.until + offset)
        for event in events
        if event.kind in ("kill9", "pause") and pool.one_scheduler and event.detail.find("(the scheduler)") >= 0
    ]
    broker_down = [(e.at + offset, e.until + offset) for e in events if e.kind.startswith("broker_restart")]
    return {"scheduler_down": scheduler_down, "broker_down": broker_down}


async def run_schedule(
    runner: Runner, description: Description, fault: str, seed: int, round_: int, keep: bool = False
) -> ScheduleRun:
    """Run the schedule workload under ``fault`` once, on a fresh broker, and count its ticks."""
    spec = description.schedule
    if spec is None:
        raise ValueError(f"runner {runner.name!r} declares no schedule workload")
    rng = random.Random(f"{seed}:schedule:{fault}:{round_}")
    result = ScheduleRun(fault, round_, seed)
    started = time.monotonic()
    offset = time.time() - time.monotonic()
    scratch, ledgers, logs, state, jobs_file = make_scratch(f"alkstore-schedule-{runner.name}-{fault}.", "")
    queue = f"alks-{seed}-{fault}-{round_}-{random.randrange(1 << 30):x}"
    servers = Servers()
    pool: WorkerPool | None = None
    opened: float | None = None
    try:
        await servers.start(runner, fault, queue, jobs_file, state)  # no job: the enqueue only makes the schema
        pool = WorkerPool(
            runner,
            servers.address,
            queue,
            ledgers,
            logs,
            state,
            subcommand="schedule",
            one_scheduler=spec.schedulers == "one",
        )
        for _ in range(WORKERS):
            pool.start()
        if not await _steady(ledgers, pool, description):
            raise RuntimeError(f"no tick ran to its end within {STEADY_TIMEOUT_S} s of the workers' start")
        opened = time.time()
        await asyncio.sleep(LEAD_S)
        victim = await _victim(ledgers, pool, rng) if fault in ("kill9", "pause") else ""
        event = await _strike(fault, description, pool, victim, servers.broker, servers.proxy)
        result.events.append(event)
        deadline = event.until + tail_s(description, spec)
        while time.monotonic() < deadline:
            pool.supervise()
            await asyncio.sleep(POLL_S * 2)
    except Exception as exc:  # a runner or a broker that fails is reported, never a traceback
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        closed = time.time() - spec.grace_s
        if pool is not None:
            await asyncio.to_thread(pool.stop_all)
            result.pids = [process.pid for process in pool.processes.values()]
            result.restarts = pool.restarts
        await servers.close()
    records, result.skipped_lines = read_ledgers(ledgers)
    result.runs = runs_of(records)
    if result.error is None and opened is not None and pool is not None:
        result.window = (opened, closed)
        result.down = _down(result.events, pool, offset)
        if spec.ticks == "interval":
            window = (opened, closed)
            result.verdict = check_interval_schedule(result.runs, window, spec.every_s, result.down, list(spec.skips))
        else:
            ticks = window_ticks(opened, closed, spec.every_s)
            result.verdict = check_schedule(result.runs, ticks, spec.every_s, result.down, list(spec.skips))
    else:
        result.error = with_log_tails(result.error or "the window never opened", logs)
    result.kept = put_away(scratch, keep)
    result.seconds = time.monotonic() - started
    return result
