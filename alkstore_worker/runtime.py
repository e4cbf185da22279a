"""The worker: claims jobs of an app's queues, runs their tasks, and settles each claim.

One ``Worker`` is one process's worth of work (``alkstore worker --processes N``
runs N of them). Per served queue, one loop claims while the process has room:
one ``claim_batch`` sized to the free slots (``concurrency``) plus, while the
recent handlers ran under ``PREFETCH_BELOW_S``, up to ``prefetch`` jobs claimed
ahead of a free slot (at most ``max_batch``), so a drain pays one claim round
trip per batch, not per job, and a slot that frees starts its next job without
one. A run gives its slot up as soon as its handler ends, before its settle is
answered: it is reported (counted, logged, ``on_settled``) only once the store
answered, so a crash in between re-runs it, never loses it. An idle loop
waits on its waker (Postgres NOTIFY) or, failing that, polls with a backoff
from 5 ms to the source's ``poll_max_s``. Acks of finished runs, and
heartbeats of running ones, go to the store together where the queue offers
``ack_handles`` and ``heartbeat_handles`` (``alkstore_worker.batches``).

Each claimed job runs as its own asyncio task (one claimed ahead waits in it
for a slot, in claim order, its lease kept meanwhile):

- a heartbeat every third of the job's visibility timeout keeps the lease
  (H3). The worker also keeps the lease by its own monotonic clock
  (``alkstore_worker.lease``): a deadline from the instant the claim was sent,
  moved by each successful heartbeat. Once it passes without a renewal (a
  store unreachable, the process stopped past it), or at once when a heartbeat
  returns False (another worker may hold the job), the handler is cancelled
  before it runs another step, the run is logged and reported (``on_settled``)
  as ``cancelled``, and nothing is settled;
- the task's ``timeout`` cancels a stalled run, which is then retried;
- an exception retries with the contract's backoff (R2: the delay is drawn
  here, with ``alkstore_contract.backoff``, so the log line can say it), or
  dead-letters at once when it is an instance of the task's ``fail_on``; at
  the last attempt ``retry`` dead-letters (R4);
- a job whose payload is not a task envelope, or names a task this app does
  not register, is dead-lettered with the reason; the worker keeps running.
- an ``ack``, ``retry`` or ``fail`` that raises ``StoreUnavailable`` (the store
  unreachable: its outcome unknown) is tried again through the same handle
  (contract N6), with a backoff from 50 ms to 250 ms, until the lease's local
  deadline; each repeat is fenced by the same claim, so a late one is refused,
  never applied twice. A repeated ack answered False while the job is gone
  means the first attempt completed it (no other claim can have, before the
  lease ended); any other refusal is the fence working (logged, counted);
- however it ends, the app's ``on_settled`` hooks hear which handle operation
  settled it and whether the store accepted it (``Settlement``): a refused
  ack is how a program learns its late completion did not count.

Stop (``stop()``; the CLI calls it on SIGTERM/SIGINT): the loops stop
claiming, jobs claimed ahead (never started) are handed back at once, running
jobs get ``grace_s`` to finish, and each one still running
is cancelled and handed back with ``release`` (contract 2.1, L1–L4): fenced
like an ack, the claim's attempt given back, the job ready again under its own
id. A hand-back by ``retry(delay=0)`` would spend one of the job's attempts on
the deploy (R1), and kill a job on its last (R4). On an engine that does not
declare ``release`` (one written for contract 2.0: its handle raises
``NotImplementedError`` before touching the job, or has no ``release``), the
worker enqueues a copy of the job instead (same task, payload, priority and
stamps, ``max_attempts`` = the attempts it had left counting this one, the rest
of its expiry, ``requeued_from`` = the old id) and then acks the claim: nothing
lost, no attempt spent, never held by two live leases (the original is ours
until the ack), but the job gets a new id, and a crash between the two writes
leaves both. If the ack finds the lease already gone, the copy is cancelled
again, so the job is not run twice.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import random
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from alkstore_contract.backoff import backoff_delay_s
from alkstore_contract.errors import AlkstoreError, InvalidArgument, StoreUnavailable
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import Job, QueueOpts
from alkstore_contract.validation import describe_value
from alkstore_worker.app import App, Task
from alkstore_worker.batches import Batch
from alkstore_worker.envelope import Envelope, EnvelopeError, open_envelope
from alkstore_worker.events import Counters, Settlement, emit, report_progress
from alkstore_worker.lease import HEARTBEAT_REFUSED, Lease, guarded
from alkstore_worker.periodic import Scheduler
from alkstore_worker.wakeup import Waker

POLL_MIN_S = 0.005
ACK_WINDOW_S = 0.002
"""How long a finished run's ack may wait for others to be sent with it (``alkstore_worker.batches``)."""
HEARTBEAT_WINDOW_S = 0.05
"""How long a heartbeat may wait for others: runs claimed together beat together, well within a third of a lease."""
SETTLE_RETRY_MIN_S = 0.05
SETTLE_RETRY_MAX_S = 0.25
"""The backoff between repeats of a settle that met an unreachable store: from 50 ms, doubling, to 250 ms."""
MAX_ERROR_CHARS = 2000
PREFETCH_BELOW_S = 0.1
"""Jobs are claimed ahead of a free slot only while the handlers' recent mean run time is under this: for a
short job the claim round trip is a large share of a slot's time, for a long one a job claimed ahead could
wait a whole run while another worker idles."""
RUN_TIME_WEIGHT = 0.1
"""The weight of each finished run in that mean (an exponential moving average)."""


class WorkerCrashed(RuntimeError):
    """A claim loop failed in a way the worker cannot serve through (a bug); running jobs were settled first."""


@dataclass
class WorkerOptions:
    """How one worker process runs (the CLI's flags)."""

    queues: list[str] | None = None
    """The queues to serve (default: every queue a task of the app is on)."""
    concurrency: int = 10
    """Jobs run at once in this process."""
    grace_s: float = 30.0
    """How long a stop waits for running jobs before handing them back."""
    sweep_interval_s: float = 60.0
    """How often one worker runs ``sweep_expired`` on each served queue."""
    max_batch: int = 100
    prefetch: int | None = None
    """Jobs claimed ahead of a free slot, at most (default: ``concurrency``; 0: claim only for a free slot); only
    while the recent runs were short (``PREFETCH_BELOW_S``)."""
    poll_max_s: float | None = None
    """The longest idle wait between claims (default: the source's)."""
    poll_min_s: float = POLL_MIN_S
    """The first idle wait after an empty claim; it doubles up to ``poll_max_s``."""
    ack_window_s: float = ACK_WINDOW_S
    """The longest an ack waits to be sent with others (0: each ack on its own)."""
    worker_id: str | None = None
    stop_when_idle: bool = False
    """Stop once no served queue has a claimable job and nothing runs (a drain: scripts, tests)."""
    progress_s: float | None = None
    """Print the counters on one line to stderr this often (``--progress``)."""
    seed: int | None = None
    """Seeds the retry jitter."""

    def check(self) -> None:
        """Refuse a bad option before anything starts, naming it, its value and the rule."""
        for name in ("concurrency", "max_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgument(f"{name}={describe_value(value)}: must be an int >= 1")
        prefetch = self.prefetch
        if prefetch is not None and (isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 0):
            raise InvalidArgument(f"prefetch={describe_value(prefetch)}: must be an int >= 0")
        for name in ("grace_s", "sweep_interval_s", "poll_min_s", "poll_max_s", "progress_s", "ack_window_s"):
            value = getattr(self, name)
            if value is None and name in ("poll_max_s", "progress_s"):
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
                raise InvalidArgument(f"{name}={describe_value(value)}: must be a finite number of seconds >= 0")


@dataclass(eq=False)
class _Run:
    """One claimed job being run."""

    handle: JobHandle
    queue: Queue
    lease: Lease
    task: asyncio.Task[None] | None = None
    handing_back: bool = False
    holds: bool = True
    """Whether the run still counts against the worker's capacity: until its handler ends (or it ends unrun)."""
    has_slot: bool = False
    """Whether its handler holds one of the ``concurrency`` slots (granted, not yet given up)."""
    slot: asyncio.Future[None] | None = None
    """Set while the run waits for a slot (claimed ahead): resolved when one is granted to it."""
    task_name: str | None = None
    payload: object = None
    """The envelope's task and payload, once opened: what a ``Settlement`` reports."""


class _Heart:
    """A run's heartbeat task, made only when its first beat is due: a job done sooner costs a timer, not a task."""

    __slots__ = ("_task", "_timer")

    def __init__(self, beats: Callable[[], Coroutine[Any, Any, None]], first_at: float) -> None:
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = asyncio.get_running_loop().call_at(first_at, self._start, beats)

    def _start(self, beats: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self._timer = None
        self._task = asyncio.get_running_loop().create_task(beats())

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


@dataclass
class _Loops:
    idle: set[str] = field(default_factory=set)


class Worker:
    """Runs an app's tasks from its store until ``stop()``; ``counters`` says what it did."""

    def __init__(self, app: App, options: WorkerOptions | None = None) -> None:
        self.app = app
        self.options = options if options is not None else WorkerOptions()
        self.options.check()
        queues = self.options.queues if self.options.queues is not None else app.queues()
        if not queues:
            raise InvalidArgument("queues=[]: the app registers no task and no --queue was given; nothing to serve")
        self.queues = list(dict.fromkeys(queues))
        self.worker_id = self.options.worker_id or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.counters = Counters()
        self._rng = random.Random(self.options.seed)
        self._stopping = asyncio.Event()
        self._slot_freed = asyncio.Event()
        self._runs: set[_Run] = set()
        self._prefetch = self.options.prefetch if self.options.prefetch is not None else self.options.concurrency
        self._holding = 0
        """Runs claimed (or being claimed) whose handler has not ended: at most ``concurrency`` + ``prefetch``."""
        self._running = 0
        """Handlers holding a slot: at most ``concurrency``."""
        self._waiting: collections.deque[_Run] = collections.deque()
        """Runs claimed ahead, waiting for a slot in claim order: empty whenever a slot is free (but in a stop)."""
        self._run_s: float | None = None
        """The handlers' recent mean run time in seconds (``None`` before the first ended): whether to claim ahead."""
        self._acks: dict[str, Batch] = {}
        """The ack buffer of each served queue whose engine acks many handles at once (``ack_handles``)."""
        self._beats: dict[str, Batch] = {}
        """The heartbeat buffer of each served queue whose engine renews many leases at once."""
        self._store: Store | None = None
        self._loops = _Loops()
        self.waker: Waker | None = None
        """The waker of the current run (set when ``run`` starts)."""
        self.started = asyncio.Event()
        """Set once the store is open and the loops are claiming."""

    def stop(self) -> None:
        """Stop claiming; ``run`` returns once running jobs finished or were handed back."""
        if not self._stopping.is_set():
            emit("stopping", worker=self.worker_id, in_flight=len(self._runs))
        self._stopping.set()

    async def run(self) -> None:
        """Serve until ``stop()`` (or, with ``stop_when_idle``, until the queues are drained)."""
        source = self.app.source
        store = await source.open()
        self._store = store
        waker = self.waker = source.waker()
        lock = source.sweep_lock()
        helpers: list[asyncio.Task[Any]] = []
        loops: list[asyncio.Task[None]] = []
        ticking: asyncio.Task[None] | None = None
        try:
            await source.prepare()
            await waker.start()
            scheduler = self._scheduler(store)
            if scheduler is not None:
                await scheduler.start()
                ticking = asyncio.create_task(scheduler.run())
                helpers.append(ticking)
                emit("periodic_started", worker=self.worker_id, tasks=scheduler.tasks)
            served = [store.queue(name, self.app.queue_opts(name)) for name in self.queues]
            for queue in served:
                self._batch_acks(queue)
            loops = [asyncio.create_task(self._serve(queue, waker.subscribe())) for queue in served]
            helpers.append(asyncio.create_task(self._sweep_forever(store, lock)))
            if self.options.progress_s:
                helpers.append(asyncio.create_task(self._progress_forever(self.options.progress_s)))
            emit("worker_started", worker=self.worker_id, queues=self.queues, concurrency=self.options.concurrency)
            self.started.set()
            stopping = asyncio.create_task(self._stopping.wait())
            helpers.append(stopping)
            await asyncio.wait([stopping, *loops], return_when=asyncio.FIRST_COMPLETED)
            self.stop()
            if ticking is not None:
                ticking.cancel()  # a stopping worker offers no tick while its running jobs finish
            await asyncio.gather(*loops, return_exceptions=True)
            await self._finish_runs()
            for loop in loops:
                if not loop.cancelled() and loop.exception() is not None:
                    raise WorkerCrashed(f"a claim loop failed: {loop.exception()!r}") from loop.exception()
        finally:
            self._stopping.set()
            for task in (*loops, *helpers):
                task.cancel()
            await asyncio.gather(*loops, *helpers, return_exceptions=True)
            await waker.close()
            await lock.close()
            await store.close()
            emit("worker_stopped", worker=self.worker_id, **self.counters.snapshot())

    def _scheduler(self, store: Store) -> Scheduler | None:
        """The scheduler of the app's periodic tasks on the queues this worker serves, if it has any."""
        periodic = [
            task
            for task in self.app.tasks.values()
            if task.options.schedule is not None and task.options.queue in self.queues
        ]
        return Scheduler(store, periodic) if periodic else None

    def _batch_acks(self, queue: Queue) -> None:
        """Buffer ``queue``'s acks and heartbeats when its engine takes many at once (the kit's
        ``KitQueue.ack_handles`` and ``heartbeat_handles``)."""
        name = queue.name

        def in_flight() -> int:
            return sum(1 for run in self._runs if run.queue.name == name)

        def may_ack() -> int:
            """The runs of the queue that may ack soon: every one in flight but those waiting for a slot."""
            return sum(1 for run in self._runs if run.queue.name == name and run.slot is None)

        ack_handles = getattr(queue, "ack_handles", None)
        if ack_handles is not None and self.options.ack_window_s > 0:
            self._acks[name] = Batch(ack_handles, self.options.ack_window_s, may_ack)
        heartbeat_handles = getattr(queue, "heartbeat_handles", None)
        if heartbeat_handles is not None:
            self._beats[name] = Batch(heartbeat_handles, HEARTBEAT_WINDOW_S, in_flight)

    async def _finish_runs(self) -> None:
        for batch in self._acks.values():
            batch.flush()
        for run in list(self._runs):
            if run.slot is not None and run.task is not None:
                # claimed ahead, never started: handed back now, not after the grace
                run.handing_back = True
                run.task.cancel()
        running = {run.task for run in self._runs if run.task is not None}
        if running and self.options.grace_s > 0:
            await asyncio.wait(running, timeout=self.options.grace_s)
        for run in list(self._runs):
            if run.task is not None and not run.task.done():
                run.handing_back = True
                run.task.cancel()
        await asyncio.gather(*(run.task for run in list(self._runs) if run.task is not None), return_exceptions=True)
        await asyncio.gather(*(batch.drain() for batch in (*self._acks.values(), *self._beats.values())))

    # claiming

    async def _serve(self, queue: Queue, woken: asyncio.Event) -> None:
        idle_s = self.options.poll_min_s
        poll_max = self.options.poll_max_s if self.options.poll_max_s is not None else self.app.source.poll_max_s
        while not self._stopping.is_set():
            count = min(self._claimable(), self.options.max_batch)
            if count <= 0:
                self._slot_freed.clear()
                await self._wait_for(self._slot_freed, None)
                continue
            woken.clear()
            sent = time.monotonic()
            started = time.perf_counter()
            self._holding += count  # reserved while the claim is out, so another queue's loop cannot claim it too
            try:
                if count == 1:
                    one = await queue.claim_one(self.worker_id)
                    handles = [one] if one is not None else []
                else:
                    handles = await queue.claim_batch(self.worker_id, count)
            except (AlkstoreError, OSError, TimeoutError) as exc:
                self._holding -= count
                emit("claim_error", logging.WARNING, queue=queue.name, error=repr(exc))
                await self._wait_for(woken, idle_s)
                idle_s = min(idle_s * 2, poll_max)
                continue
            except BaseException:
                self._holding -= count
                raise
            self._holding -= count - len(handles)
            self.counters.claimed(len(handles), time.perf_counter() - started)
            if handles:
                self._loops.idle.discard(queue.name)
                for handle in handles:
                    self._start(queue, handle, sent)
                idle_s = self.options.poll_min_s
                continue
            self._loops.idle.add(queue.name)
            if self.options.stop_when_idle and len(self._loops.idle) == len(self.queues) and not self._runs:
                self.stop()
                return
            await self._wait_for(woken, idle_s)
            idle_s = min(idle_s * 2, poll_max)

    def _claimable(self) -> int:
        """How many jobs the loops may claim now: up to the free slots, plus the prefetch while the recent runs
        were short (``PREFETCH_BELOW_S``), claimed ahead only once half of it (at least one) is free, so a steady
        drain claims in batches rather than one job per finished run; none while twice ``concurrency`` +
        ``prefetch`` finished runs still wait for their settle (a slow store holds the claims back rather than
        piling up jobs it has not acked)."""
        concurrency = self.options.concurrency
        if len(self._runs) - self._holding >= 2 * (concurrency + self._prefetch):
            return 0
        short = self._run_s is not None and self._run_s < PREFETCH_BELOW_S
        ahead = self._prefetch if short else 0
        free = concurrency + ahead - self._holding
        if self._holding < concurrency or free >= max(1, (ahead + 1) // 2):
            return free
        return 0

    async def _wait_for(self, event: asyncio.Event, within_s: float | None) -> None:
        """Until ``event`` is set, the worker stops, or ``within_s`` passes."""
        waits = [asyncio.ensure_future(event.wait()), asyncio.ensure_future(self._stopping.wait())]
        try:
            await asyncio.wait(waits, timeout=within_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    def _start(self, queue: Queue, handle: JobHandle, sent: float) -> None:
        """Run ``handle``'s job (it counts in ``_holding`` already, from its claim); its lease ends, by this
        process's clock, the visibility timeout after ``sent``."""
        run = _Run(handle, queue, Lease(sent + handle.job.visibility_timeout_s))
        self._runs.add(run)
        self.counters.in_flight = len(self._runs)
        run.task = asyncio.create_task(self._run(run))

    async def _take_slot(self, run: _Run) -> bool:
        """Wait for one of the ``concurrency`` slots, in claim order; ``False`` once the worker stops first (the
        run, never started, is handed back). A run cancelled while waiting leaves its place to the next."""
        if self._stopping.is_set():
            return False
        if self._running < self.options.concurrency and not self._waiting:
            self._running += 1
            run.has_slot = True
            return True
        run.slot = asyncio.get_running_loop().create_future()
        self._waiting.append(run)
        try:
            await run.slot
        except asyncio.CancelledError:
            if run in self._waiting:  # not granted: leave no stale place, so a free slot is never kept from others
                self._waiting.remove(run)
            raise
        return True

    def _ran_for(self, seconds: float) -> None:
        """Count a handler's run time into the recent mean that decides whether to claim ahead."""
        self._run_s = seconds if self._run_s is None else self._run_s + RUN_TIME_WEIGHT * (seconds - self._run_s)

    def _end_hold(self, run: _Run) -> None:
        """The run's handler ended (or it ends unrun): give up its slot, to the first run waiting for one, and
        its place in the capacity, so the loops claim again while its settle is still out."""
        if run.has_slot:
            run.has_slot = False
            if self._waiting and not self._stopping.is_set():
                waiting = self._waiting.popleft()
                waiting.has_slot = True
                if waiting.slot is not None:
                    waiting.slot.set_result(None)
            else:
                self._running -= 1
        if run.holds:
            run.holds = False
            self._holding -= 1
        self._slot_freed.set()

    # running one job

    async def _run(self, run: _Run) -> None:
        job = run.handle.job
        try:
            try:
                envelope = open_envelope(job.payload)
            except EnvelopeError as exc:
                await self._dead(run, job, None, str(exc))
                return
            run.task_name, run.payload = envelope.task, envelope.payload
            task = self.app.tasks.get(envelope.task)
            if task is None:
                known = ", ".join(sorted(self.app.tasks)) or "none"
                await self._dead(
                    run, job, envelope.task, f"unknown task {envelope.task!r}: this worker's app registers {known}"
                )
                return
            await self._run_task(run, job, task, envelope)
        except (AlkstoreError, OSError, TimeoutError) as exc:
            # the store failed while settling the job: its lease lapses and another claim takes it again
            emit("settle_error", logging.WARNING, job=job.id, queue=job.queue, error=repr(exc))
        finally:
            self._end_hold(run)
            self._runs.discard(run)
            self.counters.in_flight = len(self._runs)

    async def _run_task(self, run: _Run, job: Job, task: Task[Any, Any], envelope: Envelope) -> None:
        heart = _Heart(lambda: self._heartbeat(run, job), run.lease.deadline - job.visibility_timeout_s * 2 / 3)
        timed_out = False
        try:
            try:
                started = await self._take_slot(run)  # a run claimed ahead waits here, its lease kept by the heart
                run.slot = None
                if started:
                    emit(
                        "start",
                        job=job.id,
                        task=task.name,
                        queue=job.queue,
                        attempt=job.attempts,
                        max_attempts=job.max_attempts,
                    )
                    began = time.perf_counter()
                    try:
                        async with asyncio.timeout(task.options.timeout_s) as deadline:
                            await guarded(task.run_with(envelope.payload, job, run.lease), run.lease)
                    finally:
                        self._ran_for(time.perf_counter() - began)
            finally:
                # the slot is free while the settle is out; the run is reported only once the store answered
                heart.cancel()
                self._end_hold(run)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            if run.lease.lost is not None:
                self.counters.cancelled += 1
                _job_warning("cancelled", job, task=task.name, attempt=job.attempts, reason=run.lease.lost)
                self._settled(run, "cancelled", False)
                return
            if run.handing_back:
                await self._hand_back(run, job, envelope)
                return
            raise
        except TimeoutError as exc:
            if not deadline.expired():
                await self._failed(run, job, task, exc)
                return
            timed_out = True
        except Exception as exc:
            await self._failed(run, job, task, exc)
            return
        if not started:  # the worker stopped before a slot came: never run, handed back
            run.handing_back = True
            await self._hand_back(run, job, envelope)
            return
        if timed_out:
            await self._retry(run, job, task.name, f"timed out after {task.options.timeout_s:g} s")
            return
        if await self._ack_after_success(run):
            self.counters.done += 1
            emit("success", job=job.id, task=task.name, queue=job.queue, seconds=round(time.perf_counter() - began, 6))
        else:
            emit("lease_lost", logging.WARNING, job=job.id, task=task.name, queue=job.queue, at="ack")

    async def _ack_after_success(self, run: _Run) -> bool:
        """Ack a run whose handler returned; ``False`` when the lease was gone: the ack refused it, or a heartbeat
        that found the lease lapsed cancelled the run before the ack could tell (after the handler returned)."""
        try:
            batch = self._acks.get(run.queue.name)
            accepted = await self._settle(
                run, "ack", run.handle.ack if batch is None else lambda: batch.send(run.handle)
            )
        except asyncio.CancelledError:
            if run.lease.lost is None:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            accepted = False
        self._settled(run, "ack", accepted)
        return accepted

    async def _settle(self, run: _Run, action: str, settle: Callable[[], Awaitable[bool]]) -> bool:
        """``settle()`` (the handle's ack, retry or fail), repeated through the same handle while it raises
        ``StoreUnavailable`` and the lease's local deadline has not passed (contract N6).

        The store fences each repeat by the same claim, so a repeat after the lease lapsed is refused and
        none is applied twice. An ack repeated after a ``StoreUnavailable`` and refused while the job is
        gone was completed by its first attempt: before the lease's end only this claim (or a cancel by
        id) can have removed it. Past the deadline the last ``StoreUnavailable`` is raised: nothing is
        reported done that the store did not say.
        """
        job = run.handle.job
        pause = SETTLE_RETRY_MIN_S
        in_doubt = False
        while True:
            sent = time.monotonic()
            try:
                accepted = await settle()
            except StoreUnavailable as exc:
                left = run.lease.deadline - time.monotonic()
                if left <= 0:
                    raise
                in_doubt = True
                self.counters.settle_retries += 1
                _job_warning(
                    "settle_retry",
                    job,
                    task=run.task_name,
                    action=action,
                    in_s=round(min(pause, left), 6),
                    error=repr(exc),
                )
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, SETTLE_RETRY_MAX_S)
                continue
            if accepted or not in_doubt:
                return accepted
            if action == "ack" and sent < run.lease.deadline and await run.queue.get_job(job.id) is None:
                emit("settled_in_doubt", job=job.id, task=run.task_name, queue=job.queue, action=action)
                return True
            self.counters.settle_refused += 1
            _job_warning("settle_refused", job, task=run.task_name, action=action)
            return False

    def _settled(self, run: _Run, action: str, accepted: bool) -> None:
        """Tell the app's ``on_settled`` hooks how this claim was settled; a hook that raises is logged, not fatal."""
        if not self.app.settled_hooks:
            return
        settlement = Settlement(run.handle.job, run.task_name, run.payload, action, accepted)
        for hook in self.app.settled_hooks:
            try:
                hook(settlement)
            except Exception as exc:
                emit("hook_error", logging.WARNING, job=run.handle.job.id, hook=repr(hook), error=repr(exc))

    async def _heartbeat(self, run: _Run, job: Job) -> None:
        """Renew the lease every third of the visibility timeout; cancel the run once it is lost.

        Lost: a heartbeat returned False, or the lease's local deadline passed without a renewal (the
        store unreachable, or this process stopped past it). The wait ends at the deadline at the
        latest, so a handler awaiting something that never comes is cancelled then; one that wakes
        first is cancelled by its guard (``alkstore_worker.lease``).
        """
        lease = run.lease
        beats = self._beats.get(run.queue.name)
        interval = job.visibility_timeout_s / 3
        next_beat = lease.deadline - job.visibility_timeout_s + interval
        while lease.still_holding():
            now = time.monotonic()
            if now < next_beat:
                await asyncio.sleep(min(next_beat, lease.deadline) - now)
                continue
            sent = time.monotonic()
            try:
                alive = await (run.handle.heartbeat() if beats is None else beats.send(run.handle))
            except (AlkstoreError, OSError, TimeoutError) as exc:
                emit("heartbeat_error", logging.WARNING, job=job.id, error=repr(exc))
                next_beat = time.monotonic() + min(interval, SETTLE_RETRY_MAX_S)
                continue
            if not alive:
                lease.lose(HEARTBEAT_REFUSED)
                break
            lease.renewed(sent, job.visibility_timeout_s)
            next_beat = sent + interval
        if run.task is not None:
            run.task.cancel()

    async def _failed(self, run: _Run, job: Job, task: Task[Any, Any], exc: BaseException) -> None:
        error = _error_text(exc)
        if isinstance(exc, task.options.fail_on):
            await self._dead(run, job, task.name, error)
        else:
            await self._retry(run, job, task.name, error)

    async def _retry(self, run: _Run, job: Job, task: str, error: str) -> None:
        if job.attempts >= job.max_attempts:
            accepted = await self._settle(run, "retry", lambda: run.handle.retry(error=error))
            self._settled_dead(run, job, task, error, "retry", accepted)
            return
        delay = backoff_delay_s(job.attempts, job.backoff_base_s, self._rng)
        accepted = await self._settle(run, "retry", lambda: run.handle.retry(error=error, delay=delay))
        self._settled(run, "retry", accepted)
        if accepted:
            self.counters.retried += 1
            emit(
                "retry",
                job=job.id,
                task=task,
                queue=job.queue,
                attempt=job.attempts,
                delay_s=round(delay, 6),
                error=error,
            )
        else:
            emit("lease_lost", logging.WARNING, job=job.id, task=task, queue=job.queue, at="retry")

    async def _dead(self, run: _Run, job: Job, task: str | None, error: str) -> None:
        accepted = await self._settle(run, "fail", lambda: run.handle.fail(error=error))
        self._settled_dead(run, job, task, error, "fail", accepted)

    def _settled_dead(self, run: _Run, job: Job, task: str | None, error: str, action: str, accepted: bool) -> None:
        """Count and log a settlement meant to leave the job dead: a ``fail``, or a ``retry`` of its last attempt.

        Either way the store (R4) makes it a dead letter, so both are counted as
        failed and logged as ``dead``; a handle the store refused lost its lease.
        """
        self._settled(run, action, accepted)
        if accepted:
            self.counters.failed += 1
            emit("dead", logging.WARNING, job=job.id, task=task, queue=job.queue, attempt=job.attempts, error=error)
        else:
            emit("lease_lost", logging.WARNING, job=job.id, task=task, queue=job.queue, at=action)

    async def _hand_back(self, run: _Run, job: Job, envelope: Envelope) -> None:
        """Give the job back with the attempts it had before this claim: by ``release``, which keeps its id, or on
        an engine without it by a copy and an ack (see the module's docstring)."""
        expires: float | None = None
        if job.expires_at is not None:
            expires = (job.expires_at - datetime.now(UTC)).total_seconds()
            if expires <= 0:
                accepted = await run.handle.retry(error="worker stopped; the job had expired", delay=0)
                self._settled(run, "retry", accepted)
                return
        released = await _released(run.handle)
        if released is not None:
            self._settled(run, "hand_back", released)
            if released:
                self.counters.handed_back += 1
                emit(
                    "handed_back", job=job.id, new_job=job.id, task=envelope.task, queue=job.queue, attempt=job.attempts
                )
            else:
                emit("lease_lost", logging.WARNING, job=job.id, task=envelope.task, queue=job.queue, at="release")
            return
        stamps = QueueOpts(
            visibility_timeout_s=job.visibility_timeout_s,
            max_attempts=job.max_attempts,
            backoff_base_s=job.backoff_base_s,
            dead_letter_retention_s=job.dead_letter_retention_s,
        )
        queue = run.queue if run.queue.opts == stamps or self._store is None else self._store.queue(job.queue, stamps)
        new_id = await queue.enqueue(
            Envelope(envelope.task, envelope.payload, requeued_from=job.id).encode(),
            max_attempts=job.max_attempts - job.attempts + 1,
            priority=job.priority,
            expires=expires,
        )
        accepted = await run.handle.ack()
        self._settled(run, "hand_back", accepted)
        if accepted:
            self.counters.handed_back += 1
            emit("handed_back", job=job.id, new_job=new_id, task=envelope.task, queue=job.queue, attempt=job.attempts)
        else:
            await queue.cancel(new_id)
            emit("lease_lost", logging.WARNING, job=job.id, task=envelope.task, queue=job.queue, at="hand_back")

    async def _sweep_forever(self, store: Store, lock: Any) -> None:
        interval = self.options.sweep_interval_s
        if interval <= 0:
            return
        while True:
            await asyncio.sleep(interval * (0.5 + self._rng.random()))
            try:
                async with lock.held() as mine:
                    if not mine:
                        continue
                    for name in self.queues:
                        moved = await store.queue(name).sweep_expired()
                        if moved:
                            emit("swept", queue=name, moved=moved)
            except (AlkstoreError, OSError, TimeoutError) as exc:
                emit("sweep_error", logging.WARNING, error=repr(exc))

    async def _progress_forever(self, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            report_progress(self.counters)


def _job_warning(event: str, job: Job, **fields: object) -> None:
    """Log a warning about one job: ``event``, the job's id and queue, then ``fields``."""
    emit(event, logging.WARNING, job=job.id, queue=job.queue, **fields)


def _error_text(exc: BaseException) -> str:
    """``Type: message`` as storable text (DEC-worker-text: UTF-8, no NUL), at most 2000 characters."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


async def _released(handle: JobHandle) -> bool | None:
    """``handle.release()``'s answer, or ``None`` when its engine has no ``release`` (contract 2.0): a handle with no
    such method, or one whose kit refuses it with ``NotImplementedError`` before touching the job."""
    release = getattr(handle, "release", None)
    if release is None:
        return None
    try:
        released: bool = await release()
    except NotImplementedError:
        return None
    return released
