"""Where a Postgres job's client time goes: CPU per job by layer, the wait on the server, and what a job costs in calls.

Wall-clock ratios taken on a busy machine say little; what one job costs the
client in CPU and in calls hardly depends on the load. So each row (a path, a
worker count, alkstore or the bare asyncpg baseline running the same
statements, on the workload of ``throughput.py``) is measured twice:

- **timed runs**, ``runs`` of them: the process's user and system CPU time
  per job (``getrusage``), the wall time per job, and the time the event loop
  sat blocked in ``epoll`` with nothing to run, per job: with one worker, that
  is the wait on the server (Postgres working, and the round trips). During
  these runs a CPU-time timer (``ITIMER_VIRTUAL``, user time only; the
  kernel's tick makes it one sample per 4 ms of CPU here) samples the Python
  stack, and each sample is charged to the layer of the innermost frame that
  has one (below): C code, a builtin or a standard-library helper of no layer
  is charged to the frame that called it. Unlike a tracing profiler this adds
  nothing per call, so a layer of many small Python calls is not made to look
  dearer than C code; the price is sampling error (a layer's share of N
  samples is known to about ``sqrt(share / N)``). The user CPU is split in
  proportion to the samples; the system CPU (socket calls and ``epoll``) is
  its own layer, ``kernel``.
- **a counting run**, shorter, with counters on the calls that stand for the
  machinery: statements (asyncpg executions; each is one round trip),
  checkouts from asyncpg's pool, tasks created, timers scheduled
  (``call_at``), event-loop iterations.

Layers: ``kit`` (alkstore_contract: the front, validation, snapshots),
``driver`` (alkstore_postgres), ``pool`` (asyncpg's pool), ``timeouts``
(``asyncio.timeout``, ``wait_for``, timer handles and scheduling them),
``asyncpg`` (its Python, and the Cython it calls to encode and send a
statement), ``protocol`` (asyncpg's Cython reading the server's answer:
parsing messages, decoding rows, run from the loop's read callback), ``json``
(payloads), ``loop`` (the rest of asyncio: the event loop, tasks, futures),
``harness`` (the benchmark's own loop), ``kernel`` (system CPU).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import resource
import signal
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from bench.model import Counts
from bench.workload import DriverFactory, run_path

LAYERS = ("kit", "driver", "pool", "timeouts", "asyncpg", "protocol", "json", "loop", "harness", "other", "kernel")
COUNTS = ("statements", "pool_checkouts", "tasks", "timers", "loop_iterations")
SAMPLE_INTERVAL_S = 0.001
"""Asked of the CPU timer; the kernel rounds it up to its tick (4 ms at HZ=250)."""


def _span(obj: Any) -> tuple[str, int, int]:
    lines, first = inspect.getsourcelines(obj)
    return inspect.getsourcefile(obj) or "", first, first + len(lines)


class Layers:
    """Which layer a frame's code belongs to, or ``None`` for code charged to its caller."""

    def __init__(self) -> None:
        from asyncio import base_events, events, selector_events

        loop = base_events.BaseEventLoop
        self._timer_spans = [
            _span(events.TimerHandle),
            _span(loop.call_at),
            _span(loop.call_later),
            _span(loop._timer_handle_cancelled),
        ]
        transport = selector_events._SelectorSocketTransport
        self._read_spans = [_span(transport._read_ready__data_received), _span(transport._read_ready__get_buffer)]
        self._cache: dict[CodeType, str | None] = {}

    def of(self, code: CodeType) -> str | None:
        try:
            return self._cache[code]
        except KeyError:
            layer = self._cache[code] = self._classify(code.co_filename, code.co_firstlineno, code.co_name)
            return layer

    def _classify(self, file: str, line: int, name: str) -> str | None:
        path = file.replace("\\", "/")

        def within(spans: list[tuple[str, int, int]]) -> bool:
            return any(path == span_file and first <= line < end for span_file, first, end in spans)

        if "/alkstore_contract/" in path:
            return "kit"
        if "/alkstore_postgres/" in path:
            return "driver"
        if "/benchmarks/" in path:
            return "harness"
        if path.endswith(("/asyncio/timeouts.py", "/asyncpg/_asyncio_compat.py")) or within(self._timer_spans):
            return "timeouts"
        if path.endswith("/asyncio/tasks.py") and name in ("wait_for", "_cancel_and_wait", "_release_waiter"):
            return "timeouts"
        if within(self._read_spans):
            return "protocol"
        if path.endswith("/asyncpg/pool.py"):
            return "pool"
        if "/asyncpg/" in path:
            return "asyncpg"
        if "/json/" in path:
            return "json"
        if "/asyncio/" in path or path.endswith("/selectors.py"):
            return "loop"
        return None

    def of_stack(self, frame: FrameType | None) -> str:
        while frame is not None:
            layer = self.of(frame.f_code)
            if layer is not None:
                return layer
            frame = frame.f_back
        return "other"


def _rusage() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


@dataclass(slots=True)
class TimedProbe:
    """One timed run: CPU, wall and idle time of the timed part, and the CPU samples taken during it."""

    layers: Layers
    samples: Counter[str] = field(default_factory=Counter)
    user_s: float = 0.0
    system_s: float = 0.0
    wall_s: float = 0.0
    idle_s: float = 0.0
    jobs: int = 0
    _stack: ExitStack = field(default_factory=ExitStack)
    _started: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def start(self) -> None:
        self._stack.enter_context(_idle_meter(self))
        self._stack.enter_context(_sampling(self.layers, self.samples))
        user, system = _rusage()
        self._started = (user, system, time.perf_counter())

    def stop(self, jobs: int) -> Counts | None:
        user, system = _rusage()
        wall = time.perf_counter()
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


@contextmanager
def _sampling(layers: Layers, samples: Counter[str]) -> Iterator[None]:
    """Charge a sample to the layer of the running Python stack at each tick of user CPU time."""

    def sample(signum: int, frame: FrameType | None) -> None:
        samples[layers.of_stack(frame)] += 1

    previous = signal.signal(signal.SIGVTALRM, sample)
    signal.setitimer(signal.ITIMER_VIRTUAL, SAMPLE_INTERVAL_S, SAMPLE_INTERVAL_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0.0, 0.0)
        signal.signal(signal.SIGVTALRM, previous)


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

    loop: Any = asyncio.get_running_loop()
    with ExitStack() as stack:
        connection = asyncpg.connection.Connection
        _count_calls(stack, connection, "_execute", counts, "statements")
        _count_calls(stack, connection, "_executemany", counts, "statements")
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
    def layers_us(self) -> dict[str, float]:
        """CPU per job by layer over all timed runs: user time split by the samples, system time as ``kernel``."""
        total = sum(self.samples.values())
        jobs = max(self.jobs, 1)
        split = {
            layer: (self.user_s * self.samples[layer] / total if total else 0.0) / jobs * 1e6
            for layer in LAYERS
            if layer != "kernel"
        }
        split["kernel"] = self.system_s / jobs * 1e6
        return split

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "workers": self.workers,
            "impl": self.impl,
            "cpu_us_per_job": {"median": self.cpu, "runs": self.cpu_us},
            "wall_us_per_job": {"median": statistics.median(self.wall_us), "runs": self.wall_us},
            "idle_in_epoll_us_per_job": {"median": statistics.median(self.idle_us), "runs": self.idle_us},
            "layers_us_per_job": self.layers_us,
            "samples": dict(self.samples),
            "per_job": self.counts,
        }


async def timed_run(profile: Profile, factory: DriverFactory, jobs: int, layers: Layers) -> None:
    probe = TimedProbe(layers)
    await run_path(factory, profile.path, profile.workers, jobs, probe)
    per_job = 1e6 / probe.jobs
    profile.cpu_us.append((probe.user_s + probe.system_s) * per_job)
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
        "| path | workers | implementation | CPU µs/job | wall µs/job | idle in epoll µs/job "
        "| statements | pool checkouts | tasks | timers | loop iterations |",
        "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for p in _pairs(profiles):
        counts = " | ".join(f"{p.counts.get(name, 0.0):.2f}" for name in COUNTS)
        lines.append(
            f"| {p.path} | {p.workers} | {p.impl} | {p.cpu:,.1f} | {statistics.median(p.wall_us):,.1f} "
            f"| {statistics.median(p.idle_us):,.1f} | {counts} |"
        )
    lines += [
        "",
        f"| path | workers | implementation | CPU µs/job | {' | '.join(LAYERS)} | samples |",
        "|---|--:|---|--:|" + "--:|" * (len(LAYERS) + 1),
    ]
    for p in _pairs(profiles):
        split = p.layers_us
        cells = " | ".join(f"{split[layer]:.1f}" for layer in LAYERS)
        lines.append(f"| {p.path} | {p.workers} | {p.impl} | {p.cpu:,.1f} | {cells} | {sum(p.samples.values())} |")
    return "\n".join(lines)


def document(profiles: list[Profile], meta: dict[str, Any]) -> str:
    return json.dumps({"meta": meta, "rows": [p.as_json() for p in profiles]}, indent=2, ensure_ascii=False)
