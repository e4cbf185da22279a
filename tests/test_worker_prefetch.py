"""A slot freed before its ack is answered, and jobs claimed ahead of a free slot (docs/worker.md, "Claiming ahead").

Real SQLite stores; the queue is wrapped only to watch the claims and to hold
an ack batch back, so what is asserted is the runtime's order of events, never
its speed. The kill is a real ``alkstore worker`` process.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from alkstore_sqlite import SqliteSource

from alkstore_contract import InvalidArgument, JobState, QueueOpts
from alkstore_contract.surface import JobHandle, Store
from alkstore_contract.types import Job, JobId
from alkstore_worker import App, JobContext, Settlement, StoreSource, Worker, WorkerOptions
from alkstore_worker.runtime import PREFETCH_BELOW_S
from tests.polling import until
from tests.worker_app import QUEUE as APP_QUEUE
from tests.worker_app import source_from
from tests.worker_processes import WorkerProcess, handler_log

QUEUE = "work"
WARM_RUNS = 10
"""Quick jobs run first, so the worker's recent mean run time is short (and it claims ahead) even when the first
runs are slow on a loaded machine."""


class Watch:
    """What the wrapped queue saw: each claim's size and how many handlers ran then; a gate on ack batches."""

    def __init__(self) -> None:
        self.running = 0
        self.most_running = 0
        self.claims: list[tuple[int, int]] = []
        self.acks_open = asyncio.Event()
        self.acks_open.set()
        self.acks_waiting = asyncio.Event()
        self.refuse_beats: set[JobId] = set()
        """Jobs whose heartbeats at their first attempt are answered False, as if another claim held them."""


class Wrapped:
    """An engine's object with every call passed on, but those a subclass watches."""

    def __init__(self, inner: Any, watch: Watch) -> None:
        self._inner = inner
        self._watch = watch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class WatchedQueue(Wrapped):
    """The engine's queue: claims are recorded, ack batches wait for the gate, chosen heartbeats are refused."""

    async def claim_one(self, worker_id: str) -> JobHandle | None:
        self._watch.claims.append((1, self._watch.running))
        handle: JobHandle | None = await self._inner.claim_one(worker_id)
        return handle

    async def claim_batch(self, worker_id: str, count: int) -> list[JobHandle]:
        self._watch.claims.append((count, self._watch.running))
        handles: list[JobHandle] = await self._inner.claim_batch(worker_id, count)
        return handles

    async def heartbeat_handles(self, handles: Sequence[JobHandle]) -> list[bool]:
        answers: list[bool] = await self._inner.heartbeat_handles(handles)
        refused = self._watch.refuse_beats
        return [
            ok and not (h.job.id in refused and h.job.attempts == 1) for h, ok in zip(handles, answers, strict=True)
        ]

    async def ack_handles(self, handles: Sequence[JobHandle]) -> list[bool]:
        self._watch.acks_waiting.set()
        await self._watch.acks_open.wait()
        answers: list[bool] = await self._inner.ack_handles(handles)
        return answers


class WatchedStore(Wrapped):
    """The engine's store, its queues watched."""

    def queue(self, name: str, opts: QueueOpts | None = None) -> Any:
        return WatchedQueue(self._inner.queue(name, opts), self._watch)


def watched_app(tmp_path: Path) -> tuple[Watch, App]:
    """An app on a SQLite file in ``tmp_path`` whose stores are watched, and what their queues saw."""
    watch = Watch()
    path = tmp_path / "jobs.sqlite3"

    async def open_store() -> Store:
        store: Any = WatchedStore(await SqliteSource(path).open(), watch)
        return store  # type: ignore[no-any-return]

    return watch, App(StoreSource(open_store, f"watched sqlite {path}"))


def settlements(app: App) -> list[Settlement]:
    """Every settlement ``app`` reports to ``on_settled`` from now on, in order."""
    settled: list[Settlement] = []
    app.on_settled(settled.append)
    return settled


KILL_LEASE_S = 3.0
"""Long enough that a loaded machine keeps the leases alive until the kill; the re-run waits one lease."""


async def in_store(spec: str, call: Any) -> Any:
    """``call(queue)`` on the worker app's queue (its jobs stamped with a lease of ``KILL_LEASE_S``) in a store of
    its own (what a test process sees)."""
    store = await source_from(spec).open()
    try:
        return await call(store.queue(APP_QUEUE, QueueOpts(visibility_timeout_s=KILL_LEASE_S, backoff_base_s=0.05)))
    finally:
        await store.close()


def defer_in_process(spec: str, task: str, payload: object) -> JobId:
    job: JobId = asyncio.run(in_store(spec, lambda queue: queue.enqueue({"task": task, "payload": payload})))
    return job


def job_in_store(spec: str, job: JobId) -> Job | None:
    found: Job | None = asyncio.run(in_store(spec, lambda queue: queue.get_job(job)))
    return found


def handler_events(log: Path, event: str) -> list[dict[str, object]]:
    return [line for line in handler_log(log) if line["event"] == event] if log.exists() else []


async def enqueue(app: App, *payloads: dict[str, Any]) -> list[JobId]:
    """One job of task ``payload["task"]`` per payload, in this order (so claimed in this order)."""
    queue = (await app.store()).queue(QUEUE)
    return [await queue.enqueue({"task": p["task"], "payload": p.get("payload")}) for p in payloads]


async def get(app: App, job: JobId) -> Job | None:
    return await (await app.store()).queue(QUEUE).get_job(job)


@pytest.mark.parametrize("prefetch", [-1, True, 1.5])
def test_prefetch_must_be_an_int_of_zero_or_more(prefetch: object) -> None:
    app = App(StoreSource(_never_opened))
    app.task(queue=QUEUE)(_noop)
    with pytest.raises(InvalidArgument, match=f"prefetch={prefetch!r}: must be an int >= 0"):
        Worker(app, WorkerOptions(prefetch=prefetch))  # type: ignore[arg-type]


async def _never_opened() -> Store:
    raise AssertionError("the options are checked before any store is opened")


async def _noop(payload: object) -> None:
    return None


@pytest.mark.asyncio
async def test_a_slot_is_free_while_its_ack_is_out_and_the_job_counts_done_only_once_answered(tmp_path: Path) -> None:
    watch, app = watched_app(tmp_path)
    started: list[str] = []
    settled = settlements(app)

    @app.task(queue=QUEUE)
    async def note(payload: str) -> None:
        started.append(payload)

    first, second = await enqueue(app, {"task": "note", "payload": "first"}, {"task": "note", "payload": "second"})
    watch.acks_open.clear()
    worker = Worker(app, WorkerOptions(concurrency=1, prefetch=0, sweep_interval_s=0, poll_max_s=0.05))
    serving = asyncio.create_task(worker.run())
    try:
        await asyncio.wait_for(watch.acks_waiting.wait(), 30)

        async def second_ran() -> bool:
            return started == ["first", "second"]

        await until(second_ran, "the second job ran while the first one's ack was held back")
        assert worker.counters.done == 0, "no job counts done before its ack batch is answered"
        assert [s.action for s in settled] == [], "nor is any reported to on_settled"
        first_job = await get(app, first)
        assert first_job is not None
        assert first_job.state is JobState.PROCESSING, "held back, the ack changed nothing: a crash now re-runs it"
        watch.acks_open.set()

        async def both_done() -> bool:
            return worker.counters.done == 2

        await until(both_done, "both acks answered")
        assert sorted((s.job.id, s.action, s.accepted) for s in settled) == [
            (first, "ack", True),
            (second, "ack", True),
        ]
        assert await get(app, first) is None
        assert await get(app, second) is None
    finally:
        watch.acks_open.set()
        worker.stop()
        await asyncio.wait_for(serving, 30)
        await app.close()


@pytest.mark.asyncio
async def test_short_jobs_are_claimed_ahead_and_never_more_run_than_the_slots(tmp_path: Path) -> None:
    watch, app = watched_app(tmp_path)
    ran: list[int] = []

    @app.task(queue=QUEUE)
    async def short(payload: int) -> None:
        watch.running += 1
        watch.most_running = max(watch.most_running, watch.running)
        try:
            await asyncio.sleep(0.005)
        finally:
            watch.running -= 1
        ran.append(payload)

    await enqueue(app, *({"task": "short", "payload": n} for n in range(60)))
    worker = Worker(app, WorkerOptions(concurrency=2, prefetch=2, stop_when_idle=True, sweep_interval_s=0))
    await asyncio.wait_for(worker.run(), 60)
    await app.close()
    assert sorted(ran) == list(range(60)), "every job ran once"
    assert watch.most_running == 2, "never more handlers at once than the slots"
    assert [count for count, running in watch.claims if running == 2 and count > 0], (
        f"a claim went out while both slots were busy (jobs claimed ahead): {watch.claims}"
    )
    assert max(count for count, _ in watch.claims) <= 4, "at most concurrency + prefetch held unfinished"


@pytest.mark.asyncio
async def test_long_jobs_are_not_claimed_ahead(tmp_path: Path) -> None:
    """A job claimed ahead of a long one could wait a whole run while another worker idles."""
    watch, app = watched_app(tmp_path)

    @app.task(queue=QUEUE)
    async def long(payload: None) -> None:
        await asyncio.sleep(PREFETCH_BELOW_S * 1.5)

    await enqueue(app, *({"task": "long"} for _ in range(3)))
    worker = Worker(app, WorkerOptions(concurrency=1, prefetch=5, stop_when_idle=True, sweep_interval_s=0))
    await asyncio.wait_for(worker.run(), 60)
    await app.close()
    assert worker.counters.done == 3
    assert {count for count, _ in watch.claims} == {1}, f"each claim asked for the one free slot: {watch.claims}"


@pytest.mark.asyncio
async def test_a_stop_hands_jobs_claimed_ahead_back_at_once_keeping_their_attempts(tmp_path: Path) -> None:
    _, app = watched_app(tmp_path)
    release_block = asyncio.Event()
    blocking = asyncio.Event()
    ran: list[str] = []
    settled = settlements(app)

    @app.task(queue=QUEUE)
    async def quick(payload: str) -> None:
        ran.append(payload)

    @app.task(queue=QUEUE)
    async def block(payload: str) -> None:
        blocking.set()
        await release_block.wait()
        ran.append(payload)

    *_, held, ahead, behind = await enqueue(
        app,
        *({"task": "quick", "payload": f"warm {n}"} for n in range(WARM_RUNS)),  # short runs: the worker claims ahead
        {"task": "block", "payload": "held"},
        {"task": "quick", "payload": "ahead"},
        {"task": "quick", "payload": "behind"},
    )
    worker = Worker(app, WorkerOptions(concurrency=1, prefetch=1, grace_s=60, sweep_interval_s=0, poll_max_s=0.05))
    serving = asyncio.create_task(worker.run())
    try:
        await asyncio.wait_for(blocking.wait(), 30)

        async def claimed_ahead() -> bool:
            job = await get(app, ahead)
            return job is not None and job.state is JobState.PROCESSING

        await until(claimed_ahead, "the job after the blocking one was claimed ahead of a free slot")
        worker.stop()

        async def handed_back() -> bool:
            job = await get(app, ahead)
            return job is not None and job.state is JobState.READY

        await until(handed_back, "the job claimed ahead was handed back while the running one had its grace")
        assert not serving.done(), "the running job still has its grace"
        given_back = await get(app, ahead)
        assert given_back is not None
        assert given_back.attempts == 0, "release gave the claim's attempt back"
        never_claimed = await get(app, behind)
        assert never_claimed is not None
        assert (never_claimed.state, never_claimed.attempts) == (JobState.READY, 0)
        release_block.set()
        await asyncio.wait_for(serving, 30)
    finally:
        release_block.set()
        worker.stop()
        await asyncio.wait_for(serving, 30)
        await app.close()
    assert "ahead" not in ran, "the job claimed ahead never ran"
    assert "held" in ran, "the running one finished in its grace"
    assert worker.counters.handed_back == 1
    assert [(s.job.id, s.action, s.accepted) for s in settled if s.job.id in (held, ahead)] == [
        (ahead, "hand_back", True),
        (held, "ack", True),
    ]


def test_a_kill_leaves_a_job_claimed_ahead_to_its_lease_and_it_runs_again(tmp_path: Path) -> None:
    store_spec = f"sqlite:{tmp_path / 'jobs.sqlite3'}"
    log = tmp_path / "handlers.jsonl"
    for _ in range(WARM_RUNS):
        defer_in_process(store_spec, "quick", None)  # short runs: the worker claims ahead
    defer_in_process(store_spec, "long_job", {"seconds": 60})
    ahead = defer_in_process(store_spec, "quick", None)

    def state_of_ahead() -> tuple[JobState, int] | None:
        job = job_in_store(store_spec, ahead)
        return None if job is None else (job.state, job.attempts)

    worker = WorkerProcess(store_spec, log, "--concurrency", "1", "--prefetch", "1", lease_s=KILL_LEASE_S)
    try:
        worker.until(lambda: bool(handler_events(log, "started")), "the long job started")
        worker.until(lambda: state_of_ahead() == (JobState.PROCESSING, 1), "the next job was claimed ahead")
        worker.signal(signal.SIGKILL)
        worker.wait()
    finally:
        worker.kill()
    assert ahead not in {e["job"] for e in handler_events(log, "finished")}, "it never ran before the kill"
    left = state_of_ahead()
    assert left is not None
    assert left[0] is JobState.PROCESSING, "left claimed: its lease brings it back, as after a crash"
    again = WorkerProcess(store_spec, log, "--concurrency", "2", lease_s=KILL_LEASE_S)
    try:
        again.until(
            lambda: ahead in {e["job"] for e in handler_events(log, "finished")}, "the job ran again after its lease"
        )
        # The handler's "finished" line comes before the worker's ack: wait for the ack while the worker lives.
        again.until(lambda: state_of_ahead() is None, "its ack removed it")
    finally:
        again.kill()
    (finished,) = [e for e in handler_events(log, "finished") if e["job"] == ahead]
    assert finished["attempt"] == left[1] + 1, "the kill cost the claim's attempt: a re-run, never a loss"


@pytest.mark.asyncio
async def test_a_job_claimed_ahead_whose_lease_is_lost_never_starts_and_comes_back(tmp_path: Path) -> None:
    watch, app = watched_app(tmp_path)
    release_block = asyncio.Event()
    ran: list[tuple[str, int]] = []
    settled = settlements(app)
    opts = QueueOpts(visibility_timeout_s=0.6, backoff_base_s=0.05)

    @app.task(queue=QUEUE, queue_opts=opts)
    async def quick(payload: str, context: JobContext) -> None:
        ran.append((payload, context.attempt))

    @app.task(queue=QUEUE, queue_opts=opts)
    async def block(payload: str, context: JobContext) -> None:
        await release_block.wait()
        ran.append((payload, context.attempt))

    queue = (await app.store()).queue(QUEUE, opts)
    for n in range(WARM_RUNS):
        await queue.enqueue({"task": "quick", "payload": f"warm {n}"})  # short runs: the worker claims ahead
    await queue.enqueue({"task": "block", "payload": "held"})
    ahead = await queue.enqueue({"task": "quick", "payload": "ahead"})
    watch.refuse_beats.add(ahead)
    worker = Worker(app, WorkerOptions(concurrency=1, prefetch=1, sweep_interval_s=0, poll_max_s=0.05))
    serving = asyncio.create_task(worker.run())
    try:

        async def lost_while_waiting() -> bool:
            return worker.counters.cancelled == 1

        await until(lost_while_waiting, "the job claimed ahead lost its lease (a refused heartbeat) while waiting")
        assert ("ahead", 1) not in ran, "it never started"
        release_block.set()

        async def ran_again() -> bool:
            return ("ahead", 2) in ran

        await until(ran_again, "it ran at its next attempt once its lease lapsed in the store")
    finally:
        release_block.set()
        worker.stop()
        await asyncio.wait_for(serving, 30)
        await app.close()
    assert [p for p, _ in ran].count("ahead") == 1
    assert [(s.action, s.accepted) for s in settled if s.job.id == ahead] == [("cancelled", False), ("ack", True)]
