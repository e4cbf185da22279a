"""Where a Postgres job's client time goes: CPU per job by layer, the wait on the server, and what a job costs in calls.

Wall-clock ratios taken on a busy machine say little; what one job costs the
client in CPU and in calls hardly depends on the load. So each row (a path, a
worker count, alkstore or the bare asyncpg baseline running the same
statements, on the workload of ``throughput.py``) is measured twice:

- **timed runs**, ``runs`` of them: the process's user and system CPU time
  per job (``getrusage``), the wall time per job, and the time the event loop
  sat blocked in ``epoll`` with nothing to run, per job: with one worker, that
  is the wait on the server (Postgres working, and the round trips). When the
  server runs on this machine, also its CPU per job (``bench.server_cpu``):
  with four workers on two cores the client and the server share the CPUs,
  and the two figures say which side a path waits on. During
  the first of them py-spy samples the process's stack from outside, native
  frames included (``py-spy record --native``); it pauses the process for each
  sample, which adds to that run's wall and idle time (not to its CPU), so
  the medians of the wall and idle time come from the runs without it when
  there are three or more. A sample in ``epoll`` is left out:
  py-spy counts a thread the kernel has woken but not yet run as active,
  which on a loaded machine is most of the time spent waking from ``epoll``.
  Each other sample is charged to the layer of the innermost frame that has
  one (below); a frame of no layer (CPython's object code, libc) passes the
  sample to its caller. The CPU per job is split in proportion. A tracing
  profiler (cProfile) was tried first and dropped: its cost per call (about
  1 µs here, against 0.01–0.02 µs for the call itself) dwarfed the layers it
  was to measure; an in-process sampling signal is handled only when Python code next runs, which charges the C code of
  asyncpg's protocol and of asyncio's tasks to whichever coroutine resumes
  next. A layer's share of N samples is known to about ``sqrt(share / N)``.
- **a counting run**, shorter, with counters on the calls that stand for the
  machinery: statements (asyncpg executions; each is one round trip),
  checkouts from asyncpg's pool, tasks created, timers scheduled
  (``call_at``), event-loop iterations.

Layers: ``kit`` (alkstore_contract: the front, validation, snapshots),
``driver`` (alkstore_postgres), ``pool`` (asyncpg's pool), ``timeouts``
(``asyncio.timeout``, ``wait_for``, timer handles, scheduling them and their
heap), ``asyncpg`` (its Python: connection, statement cache), ``protocol``
(its Cython protocol: encoding parameters, building and parsing messages,
decoding rows), ``json`` (payloads), ``loop`` (asyncio's event loop, tasks
and futures), ``kernel`` (the socket and ``epoll`` system calls),
``harness`` (the benchmark's own loop), ``other`` (a sample with no frame of
any layer).

Without py-spy (``pip install py-spy``, part of the ``bench`` extra) the
split is left out and says so; the rest is measured as usual.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import server_cpu
from bench.model import Counts
from bench.workload import DriverFactory, run_path

LAYERS = ("kit", "driver", "pool", "timeouts", "asyncpg", "protocol", "json", "loop", "kernel", "harness", "other")
COUNTS = ("statements", "pool_checkouts", "tasks", "timers", "loop_iterations")
SAMPLE_RATE_HZ = 500
ATTACH_S = 0.5
"""How long py-spy gets to attach before the timed part starts."""
TIMER_FUNCTIONS = (
    "TimerHandle.",
    "BaseEventLoop.call_at",
    "BaseEventLoop.call_later",
    "BaseEventLoop._timer_handle_cancelled",
)


def py_spy() -> str | None:
    """The py-spy executable: beside this Python's (a venv), else on ``PATH``; ``None`` when not installed."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


def layer_of(frame: str) -> str | None:
    """The layer of one py-spy frame, ``"function (path:line)"``, or ``None`` to pass the sample to its caller."""
    name, _, where = frame.rpartition(" (")
    path = where.rsplit(":", 1)[0]
    if "alkstore_contract/" in path:
        return "kit"
    if "alkstore_postgres/" in path:
        return "driver"
    if path.startswith("bench/") or "/bench/" in path or path.endswith("throughput.py"):
        return "harness"
    if (
        path.endswith(("asyncio/timeouts.py", "asyncpg/_asyncio_compat.py", "_heapqmodule.c"))
        or name.startswith(TIMER_FUNCTIONS)
        or name in ("wait_for", "_cancel_and_wait", "_release_waiter")
    ):
        return "timeouts"
    if path.endswith("asyncpg/pool.py"):
        return "pool"
    if "asyncpg/protocol" in path or path.endswith(("protocol.c", "record.c")) or "asyncpg" in name:
        return "protocol"
    if "asyncpg/" in path:
        return "asyncpg"
    if "json/" in path or path.endswith("_json.c"):
        return "json"
    if path.endswith(("socketmodule.c", "selectmodule.c")):
        return "kernel"
    if "asyncio/" in path or path.endswith(("_asynciomodule.c", "selectors.py", "contextvars.c", "context.c")):
        return "loop"
    return None


def parse_samples(text: str) -> Counter[str]:
    """Samples per layer from py-spy's raw output: one ``frame;frame;... count`` line per distinct stack."""
    samples: Counter[str] = Counter()
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit() or "(selectors.py:" in stack:
            continue  # in epoll: the wait on the server, however long the kernel took to give the CPU back
        layer = next((found for frame in reversed(stack.split(";")) if (found := layer_of(frame))), "other")
        samples[layer] += int(count)
    return samples


@contextmanager
def _sampling(samples: Counter[str]) -> Iterator[None]:
    """py-spy on this process while the block runs; the samples, by layer, added to ``samples``."""
    executable = py_spy()
    if executable is None:
        yield
        return
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "samples.txt"
        command = [executable, "record", "--pid", str(os.getpid()), "--rate", str(SAMPLE_RATE_HZ)]
        command += ["--native", "--format", "raw", "--output", str(out)]
        spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(ATTACH_S)
        try:
            yield
        finally:
            spy.send_signal(signal.SIGINT)
            _, errors = spy.communicate(timeout=60)
            if not out.exists():
                raise RuntimeError(f"py-spy wrote no samples ({' '.join(command)}): {errors.decode()[-500:]}")
            samples.update(parse_samples(out.read_text()))


def _rusage() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


@dataclass(slots=True)
class TimedProbe:
    """One timed run: CPU, wall and idle time of the timed part, and (with ``sample``) py-spy's samples."""

    sample: bool = False
    postmaster: int | None = None
    """The local server's postmaster (``bench.server_cpu``), whose CPU is read too; ``None``: not read."""
    samples: Counter[str] = field(default_factory=Counter)
    server_s: float | None = None
    user_s: float = 0.0
    system_s: float = 0.0
    wall_s: float = 0.0
    idle_s: float = 0.0
    jobs: int = 0
    _stack: ExitStack = field(default_factory=ExitStack)
    _started: tuple[float, float, float] = (0.0, 0.0, 0.0)
    _server_started: dict[int, int] = field(default_factory=dict)

    def start(self) -> None:
        self._stack.enter_context(_idle_meter(self))
        if self.sample:
            self._stack.enter_context(_sampling(self.samples))
        if self.postmaster is not None:
            self._server_started = server_cpu.cpu_ns(self.postmaster)
        user, system = _rusage()
        self._started = (user, system, time.perf_counter())

    def stop(self, jobs: int) -> Counts | None:
        user, system = _rusage()
        wall = time.perf_counter()
        if self.postmaster is not None:
            self.server_s = server_cpu.spent_s(self._server_started, server_cpu.cpu_ns(self.postmaster))
        self._stack.close()
        self.user_s = user - self._started[0]
        self.system_s = system - self._started[1]
        self.wall_s = wall - self._started[2]
        self.jobs = jobs
        return None


@contextmanager
def _idle_meter(probe: TimedProbe) -> Iterator[None]:
    """Add the time the running loop spends blocked in ``select`` to ``probe.idle_s``."""
    selector: Any = getattr(asyncio.get_running_loop(), "_selector")  # noqa: B009 (asyncio has no public hook)
    select = selector.select

    def timed_select(timeout: float | None = None) -> Any:
        started = time.perf_counter()
        try:
            return select(timeout)
        finally:
            probe.idle_s += time.perf_counter() - started

    selector.select = timed_select
    try:
        yield
    finally:
        del selector.select


@dataclass(slots=True)
class CountingProbe:
    """The counting run: counters wrapped around the calls each count stands for."""

    counts: Counter[str] = field(default_factory=Counter)
    jobs: int = 0
    _stack: ExitStack = field(default_factory=ExitStack)

    def start(self) -> None:
        self._stack.enter_context(_counters(self.counts))

    def stop(self, jobs: int) -> Counts | None:
        self._stack.close()
        self.jobs = jobs
        return None


def _count_calls(stack: ExitStack, owner: Any, name: str, counts: Counter[str], key: str) -> None:
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)

    if inspect.iscoroutinefunction(original):

        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            counts[key] += 1
            return await original(*args, **kwargs)

        wrapper: Callable[..., Any] = counted_async
    else:

        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[key] += 1
            return original(*args, **kwargs)

        wrapper = counted
    setattr(owner, name, wrapper)
    if isinstance(owner, type):
        stack.callback(setattr, owner, name, original)
    else:
        stack.callback(delattr, owner, name)


@contextmanager
def _counters(counts: Counter[str]) -> Iterator[None]:
    import asyncpg.connection
    import asyncpg.pool
    import asyncpg.prepared_stmt

    loop: Any = asyncio.get_running_loop()
    with ExitStack() as stack:
        connection = asyncpg.connection.Connection
        _count_calls(stack, connection, "_execute", counts, "statements")
        _count_calls(stack, connection, "_executemany", counts, "statements")
        for name in ("fetch", "fetchrow", "fetchval"):  # a prepared statement's executions (alkstore_postgres.held)
            _count_calls(stack, asyncpg.prepared_stmt.PreparedStatement, name, counts, "statements")
        _count_calls(stack, asyncpg.pool.Pool, "acquire", counts, "pool_checkouts")
        _count_calls(stack, loop, "call_at", counts, "timers")
        _count_calls(stack, loop, "_run_once", counts, "loop_iterations")
        factory = loop.get_task_factory()

        def counting_factory(target_loop: Any, coro: Any, **kwargs: Any) -> Any:
            counts["tasks"] += 1
            if factory is not None:
                return factory(target_loop, coro, **kwargs)
            return asyncio.Task(coro, loop=target_loop, **kwargs)

        loop.set_task_factory(counting_factory)
        stack.callback(loop.set_task_factory, factory)
        yield


@dataclass(slots=True)
class Profile:
    """One row of the profile: a path, a worker count and an implementation; figures per job."""

    path: str
    workers: int
    impl: str
    cpu_us: list[float] = field(default_factory=list)
    """User + system CPU per job, each timed run."""
    server_us: list[float] = field(default_factory=list)
    """The local server's CPU per job, each timed run (``bench.server_cpu``); empty when it could not be read."""
    wall_us: list[float] = field(default_factory=list)
    idle_us: list[float] = field(default_factory=list)
    user_s: float = 0.0
    system_s: float = 0.0
    jobs: int = 0
    samples: Counter[str] = field(default_factory=Counter)
    counts: dict[str, float] = field(default_factory=dict)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_us)

    @property
    def server(self) -> float | None:
        return statistics.median(self.server_us) if self.server_us else None

    @property
    def layers_us(self) -> dict[str, float] | None:
        """CPU per job by layer over all timed runs, split as the samples fell; ``None`` without samples."""
        total = sum(self.samples.values())
        if not total:
            return None
        per_job = (self.user_s + self.system_s) / max(self.jobs, 1) * 1e6
        return {layer: per_job * self.samples[layer] / total for layer in LAYERS}

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "workers": self.workers,
            "impl": self.impl,
            "cpu_us_per_job": {"median": self.cpu, "runs": self.cpu_us},
            "server_cpu_us_per_job": {"median": self.server, "runs": self.server_us},
            "wall_us_per_job": {"median": statistics.median(self.wall_us), "runs": self.wall_us},
            "idle_in_epoll_us_per_job": {"median": statistics.median(self.idle_us), "runs": self.idle_us},
            "layers_us_per_job": self.layers_us,
            "samples": dict(self.samples),
            "per_job": self.counts,
        }


async def timed_run(
    profile: Profile, factory: DriverFactory, jobs: int, *, sample: bool, postmaster: int | None = None
) -> None:
    """One timed run of ``profile``'s row; with ``sample``, py-spy samples it (``_sampling``).

    With ``postmaster``, the server's CPU is read as well (``bench.server_cpu``).
    """
    probe = TimedProbe(sample=sample, postmaster=postmaster)
    await run_path(factory, profile.path, profile.workers, jobs, probe)
    per_job = 1e6 / probe.jobs
    profile.cpu_us.append((probe.user_s + probe.system_s) * per_job)
    if probe.server_s is not None:
        profile.server_us.append(probe.server_s * per_job)
    profile.wall_us.append(probe.wall_s * per_job)
    profile.idle_us.append(probe.idle_s * per_job)
    profile.user_s += probe.user_s
    profile.system_s += probe.system_s
    profile.jobs += probe.jobs
    profile.samples.update(probe.samples)


async def counting_run(profile: Profile, factory: DriverFactory, jobs: int) -> None:
    probe = CountingProbe()
    await run_path(factory, profile.path, profile.workers, jobs, probe)
    profile.counts = {name: probe.counts[name] / probe.jobs for name in COUNTS}


def _pairs(profiles: list[Profile]) -> Iterator[Profile]:
    """Each alkstore row, then the baseline row of the same path and workers."""
    for ours in profiles:
        if ours.impl != "alkstore":
            continue
        yield ours
        yield from (p for p in profiles if p.impl != "alkstore" and (p.path, p.workers) == (ours.path, ours.workers))


def tables(profiles: list[Profile]) -> str:
    """Two Markdown tables: time and counts per job; the CPU per job by layer."""
    lines = [
        "| path | workers | implementation | CPU µs/job | server CPU µs/job | wall µs/job | idle in epoll µs/job "
        "| statements | pool checkouts | tasks | timers | loop iterations |",
        "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for p in _pairs(profiles):
        counts = " | ".join(f"{p.counts.get(name, 0.0):.2f}" for name in COUNTS)
        server = "—" if p.server is None else f"{p.server:,.1f}"
        lines.append(
            f"| {p.path} | {p.workers} | {p.impl} | {p.cpu:,.1f} | {server} | {statistics.median(p.wall_us):,.1f} "
            f"| {statistics.median(p.idle_us):,.1f} | {counts} |"
        )
    lines += [
        "",
        f"| path | workers | implementation | CPU µs/job | {' | '.join(LAYERS)} | samples |",
        "|---|--:|---|--:|" + "--:|" * (len(LAYERS) + 1),
    ]
    for p in _pairs(profiles):
        split = p.layers_us
        if split is None:
            lines.append(f"| {p.path} | {p.workers} | {p.impl} | {p.cpu:,.1f} | not measured: no py-spy |")
            continue
        cells = " | ".join(f"{split[layer]:.1f}" for layer in LAYERS)
        lines.append(f"| {p.path} | {p.workers} | {p.impl} | {p.cpu:,.1f} | {cells} | {sum(p.samples.values())} |")
    return "\n".join(lines)


def document(profiles: list[Profile], meta: dict[str, Any]) -> str:
    return json.dumps({"meta": meta, "rows": [p.as_json() for p in profiles]}, indent=2, ensure_ascii=False)
