"""The worker runtime in real ``alkstore worker`` processes, on SQLite and on a real Postgres server.

What a deploy and a crash do to jobs: SIGTERM in the middle of a long job
ends with it done (within the grace) or handed back with no attempt spent;
SIGKILL loses nothing (another worker finishes the job once the lease lapses);
a stalled handler past its timeout is retried; a job naming an unknown task,
or one that is no task at all, is dead-lettered with the reason while the
worker keeps serving. Leases are 1–2 s and jobs few, so the file stays cheap.
Postgres: ``$ALKSTORE_PG_DSN`` or the default DSN, a fresh schema per test,
dropped after; skipped when no server answers (failed under CI).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from alkstore_contract import JobState
from alkstore_contract.types import Job
from alkstore_worker import App
from tests import worker_app
from tests.worker_processes import WorkerProcess, handler_log, wait_until, workers


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Where the workers' store lives: an SQLite file, or a fresh schema on the Postgres server.

    The server's DSN goes to the worker processes (and ``tests.worker_app``) as ``$ALKSTORE_PG_DSN``,
    whichever way this run was given it.
    """
    if request.param == "sqlite":
        yield f"sqlite:{tmp_path / 'jobs.sqlite3'}"
        return
    from alkstore_postgres.location import new_schema_name, quote_ident

    from tests.test_postgres_engine import server_dsn

    dsn = server_dsn()
    monkeypatch.setenv("ALKSTORE_PG_DSN", dsn)
    schema = new_schema_name()
    try:
        yield f"postgres:{schema}"
    finally:

        async def drop() -> None:
            import asyncpg

            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
            finally:
                await connection.close()

        asyncio.run(drop())


def _app(spec: str) -> App:
    worker_app.app.source = worker_app.source_from(spec)
    return worker_app.app


async def _defer(spec: str, task: str, payload: object) -> object:
    app = _app(spec)
    try:
        return await app.tasks[task].defer(payload)
    finally:
        await app.close()


async def _job(spec: str, job_id: object) -> Job | None:
    store = await worker_app.source_from(spec).open()
    try:
        return await store.queue(worker_app.QUEUE).get_job(job_id)  # type: ignore[arg-type]
    finally:
        await store.close()


def _events(log: Path, event: str) -> list[dict[str, object]]:
    return [line for line in handler_log(log) if line["event"] == event]


def _sigterm_mid_job(store_spec: str, log: Path, grace_s: str, job_s: float) -> tuple[object, WorkerProcess]:
    """One worker with ``--grace grace_s``, SIGTERMed once a ``long_job`` of ``job_s`` started; it must exit 0.

    Returns the job's id and the worker, ended, for its log lines.
    """
    with workers(store_spec, log, "--grace", grace_s) as (worker,):
        job_id = asyncio.run(_defer(store_spec, "long_job", {"seconds": job_s}))
        wait_until(lambda: bool(_events(log, "started")), "the job started")
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0, worker.stderr()
    return job_id, worker


def test_sigterm_during_a_long_job_hands_it_back_with_its_id_and_no_attempt_spent(
    store_spec: str, tmp_path: Path
) -> None:
    """The engines here declare ``release`` (contract L1–L4): the stop gives the claim's attempt back and the job
    keeps its id, so an id a caller kept still names its job."""
    log = tmp_path / "handlers.jsonl"
    job_id, worker = _sigterm_mid_job(store_spec, log, grace_s="0.3", job_s=30)
    handed = [e for e in worker.events() if e["event"] == "handed_back"]
    assert [(e["job"], e["new_job"]) for e in handed] == [(job_id, job_id)], worker.stderr()
    assert _events(log, "finished") == []
    job = asyncio.run(_job(store_spec, job_id))
    assert job is not None, "the job was handed back under its own id"
    assert (job.state, job.attempts, job.max_attempts) == (JobState.READY, 0, 3), "no attempt spent by the stop"
    assert job.payload == {"task": "long_job", "payload": {"seconds": 30}}


def test_sigterm_lets_a_job_that_ends_within_the_grace_finish(store_spec: str, tmp_path: Path) -> None:
    log = tmp_path / "handlers.jsonl"
    job_id, _ = _sigterm_mid_job(store_spec, log, grace_s="10", job_s=0.5)
    assert [e["job"] for e in _events(log, "finished")] == [job_id]
    assert asyncio.run(_job(store_spec, job_id)) is None


def test_kill_9_loses_nothing_another_worker_finishes_after_the_lease(store_spec: str, tmp_path: Path) -> None:
    log = tmp_path / "handlers.jsonl"
    with workers(store_spec, log, "--concurrency", "1", lease_s=1.0) as (first,):
        job_id = asyncio.run(_defer(store_spec, "long_job", {"seconds": 1.5}))
        wait_until(lambda: bool(_events(log, "started")), "the first worker started the job")
        assert _events(log, "started")[0]["pid"] == first.pid
        first.kill()
        with workers(store_spec, log, "--concurrency", "1", lease_s=1.0) as (second,):
            wait_until(lambda: bool(_events(log, "finished")), "another worker finished the job")
            finished = _events(log, "finished")
            assert [(e["job"], e["pid"], e["attempt"]) for e in finished] == [(job_id, second.pid, 2)]
            wait_until(lambda: asyncio.run(_job(store_spec, job_id)) is None, "the job acked")


def test_a_worker_retries_a_stalled_handler_and_dead_letters_what_it_cannot_run(
    store_spec: str, tmp_path: Path
) -> None:
    log = tmp_path / "handlers.jsonl"

    async def enqueue_bad() -> tuple[object, object]:
        store = await worker_app.source_from(store_spec).open()
        try:
            queue = store.queue(worker_app.QUEUE)
            return (
                await queue.enqueue({"task": "no_such_task", "payload": 1}),
                await queue.enqueue(["not", "an", "envelope"]),
            )
        finally:
            await store.close()

    with workers(store_spec, log) as (worker,):
        unknown, bare = asyncio.run(enqueue_bad())
        stalled = asyncio.run(_defer(store_spec, "stall_once", None))
        after = asyncio.run(_defer(store_spec, "quick", None))
        wait_until(lambda: len(_events(log, "finished")) == 2, "the stalled job's retry and the quick job finished")
        assert worker.process.poll() is None, "the worker kept running"
        retries = [e for e in worker.events() if e["event"] == "retry"]
        assert [(e["job"], e["error"]) for e in retries] == [(stalled, "timed out after 0.3 s")]
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0, worker.stderr()
    assert sorted((e["job"], e["attempt"]) for e in _events(log, "finished")) == sorted([(stalled, 2), (after, 1)])
    dead_unknown = asyncio.run(_job(store_spec, unknown))
    assert dead_unknown is not None
    assert dead_unknown.state is JobState.DEAD
    assert dead_unknown.last_error is not None
    assert dead_unknown.last_error.startswith("unknown task 'no_such_task': this worker's app registers long_job")
    dead_bare = asyncio.run(_job(store_spec, bare))
    assert dead_bare is not None
    assert dead_bare.state is JobState.DEAD
    assert "is not a task envelope" in (dead_bare.last_error or "")


def test_processes_run_in_parallel_and_a_sigterm_to_the_parent_stops_them_all_gracefully(tmp_path: Path) -> None:
    store_spec = f"sqlite:{tmp_path / 'jobs.sqlite3'}"
    log = tmp_path / "handlers.jsonl"
    with workers(store_spec, log, "--processes", "2", "--concurrency", "1") as (parent,):
        parent.until(
            lambda: len([e for e in parent.events() if e["event"] == "worker_started"]) == 2, "both children serve"
        )
        asyncio.run(_defer(store_spec, "long_job", {"seconds": 1.0}))
        asyncio.run(_defer(store_spec, "long_job", {"seconds": 1.0}))
        parent.until(lambda: len(_events(log, "started")) == 2, "both jobs started")
        parent.signal(signal.SIGTERM)
        assert parent.wait() == 0, parent.stderr()
    finished = _events(log, "finished")
    assert len(finished) == 2, "the stop let both running jobs finish"
    assert len({e["pid"] for e in finished}) == 2, "one job in each process"
    assert parent.pid not in {e["pid"] for e in finished}


def test_a_second_signal_exits_at_once_and_the_job_returns_after_its_lease(tmp_path: Path) -> None:
    store_spec = f"sqlite:{tmp_path / 'jobs.sqlite3'}"
    log = tmp_path / "handlers.jsonl"
    with workers(store_spec, log, "--grace", "60", lease_s=1.0) as (worker,):
        job_id = asyncio.run(_defer(store_spec, "long_job", {"seconds": 30}))
        wait_until(lambda: bool(_events(log, "started")), "the job started")
        worker.signal(signal.SIGTERM)
        wait_until(lambda: any(e["event"] == "stopping" for e in worker.events()), "the worker began its stop")
        worker.signal(signal.SIGINT)
        assert worker.wait(timeout_s=5) == 1, worker.stderr()
        assert any(e["event"] == "second_signal" for e in worker.events()), worker.stderr()
    job = asyncio.run(_job(store_spec, job_id))
    assert job is not None
    assert (job.state, job.attempts) == (JobState.PROCESSING, 1), "left to its lease, as after a crash"


def test_a_killed_child_is_restarted_and_when_the_budget_is_spent_the_parent_exits_with_the_death(
    tmp_path: Path,
) -> None:
    store_spec = f"sqlite:{tmp_path / 'jobs.sqlite3'}"
    log = tmp_path / "handlers.jsonl"
    args = ("--processes", "2", "--max-restarts", "1", "--restart-backoff", "0.1")
    with workers(store_spec, log, *args) as (parent,):

        def children() -> list[int]:
            return [int(str(e["pid"])) for e in parent.events() if e["event"] == "child_started"]

        def serving() -> int:
            return len([e for e in parent.events() if e["event"] == "worker_started"])

        parent.until(lambda: serving() == 2, "both children serve")
        first, _second = children()
        os.kill(first, signal.SIGKILL)  # as the OOM killer would
        parent.until(lambda: serving() == 3, "the killed child was started again")
        died = [e for e in parent.events() if e["event"] == "child_died"]
        assert [(e["pid"], e["signal"], e["level"]) for e in died] == [(first, "SIGKILL", "ERROR")]
        assert [e["slot"] for e in parent.events() if e["event"] == "child_restarting"] == [died[0]["slot"]]
        restarted = children()[-1]
        os.kill(restarted, signal.SIGKILL)
        assert parent.wait() == 128 + signal.SIGKILL, parent.stderr()
    spent = [e for e in parent.events() if e["event"] == "restart_budget_spent"]
    assert [(e["pid"], e["signal"]) for e in spent] == [(restarted, "SIGKILL")], parent.stderr()
    assert serving() == 3, "no restart after the budget was spent"
    stopped = [e for e in parent.events() if e["event"] == "worker_stopped"]
    assert len(stopped) == 1, "the surviving child was stopped gracefully"
