"""The worker runtime in one process: defer's input rules, registration, options, claiming, the CLI's errors.

Real engines (mem, SQLite, Postgres when a server answers); what needs a
process of its own (signals, kill -9) is in test_worker_processes.py.
"""

from __future__ import annotations

import ast
import asyncio
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_asyncio
from alkstore_mem import MemSource
from alkstore_sqlite import SqliteSource

from alkstore_cli import main as alkstore_main
from alkstore_contract import InvalidArgument, InvalidName, Job, JobState, PayloadError, QueueOpts
from alkstore_worker import (
    App,
    Counters,
    JobContext,
    Settlement,
    StoreSource,
    Task,
    Worker,
    WorkerOptions,
)
from alkstore_worker.events import report_progress
from alkstore_worker.sources import as_source
from tests.polling import until

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "alkstore_worker"


def test_the_runtime_imports_nothing_of_the_suite() -> None:
    """Statically (every import statement) and at run time (a fresh interpreter's sys.modules)."""
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not [name for name in names if name.startswith("alkstore_contract.suite")], path
    probe = (
        "import sys, alkstore_worker, alkstore_worker.cli, alkstore_worker.runtime, alkstore_worker.sources\n"
        "print(sorted(m for m in sys.modules if m.startswith(('alkstore_contract.suite', 'pytest'))))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "[]"


async def pg_dsn() -> str:
    """The Postgres server's DSN, or a skip naming why not (a failure under CI or ALKSTORE_REQUIRE=1)."""
    import os

    from alkstore_postgres import adapter

    reason = await adapter.unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail(f"a Postgres server is required here (CI or ALKSTORE_REQUIRE=1): {reason}")
        pytest.skip(reason)
    return adapter.dsn


@pytest_asyncio.fixture(params=["mem", "sqlite", "postgres"])
async def source(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreSource]:
    if request.param == "mem":
        yield as_source(MemSource(f"worker-{id(request)}"))
    elif request.param == "sqlite":
        yield as_source(SqliteSource(tmp_path / "jobs.sqlite3"))
    else:
        import asyncpg
        from alkstore_postgres import PostgresSource
        from alkstore_postgres.location import new_schema_name, quote_ident

        dsn = await pg_dsn()
        schema = new_schema_name()
        yield as_source(PostgresSource(dsn, schema))
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
        finally:
            await connection.close()


@pytest_asyncio.fixture
async def noop(source: StoreSource) -> AsyncIterator[Task[[object], None]]:
    """A task of queue ``noop`` that does nothing, on an app of ``source``; the app is closed after the test."""
    app = App(source)

    @app.task(queue="noop")
    async def noop(payload: object) -> None:
        return None

    yield noop
    await app.close()


BAD_DEFERS: list[tuple[dict[str, object], type[Exception], str]] = [
    ({"payload": {1, 2}}, PayloadError, "payload"),
    ({"payload": {"when": datetime(2030, 1, 1)}}, PayloadError, "payload"),
    ({"delay": -1}, InvalidArgument, "delay=-1"),
    ({"delay": float("nan")}, InvalidArgument, "delay="),
    ({"run_at": datetime(2030, 1, 1)}, InvalidArgument, "run_at="),
    ({"priority": "high"}, InvalidArgument, "priority="),
    ({"priority": 2**63}, InvalidArgument, "priority="),
    ({"expires": "soon"}, InvalidArgument, "expires="),
    ({"payload": "x" * (1 << 20)}, PayloadError, "payload: its JSON text is 1048578 bytes, over"),
    ({"delay": 5, "run_at": datetime(2030, 1, 1, tzinfo=UTC)}, InvalidArgument, "delay=5 and run_at=datetime"),
]


@pytest.mark.asyncio
async def test_bad_defer_input_gets_the_contracts_errors_and_stores_nothing(noop: Task[[object], None]) -> None:
    for arguments, error, named in BAD_DEFERS:
        call = dict(arguments)
        payload = call.pop("payload", {"ok": True})
        with pytest.raises(error) as raised:
            await noop.defer(payload, **call)  # type: ignore[arg-type]
        assert named in str(raised.value), (arguments, str(raised.value))
    queue = (await noop.app.store()).queue("noop")
    assert await queue.claim_batch("inspector", 100) == [], "a refused defer stored a job"
    job_id = await noop.defer({"ok": True}, priority=3)
    job = await queue.get_job(job_id)
    assert job is not None
    assert (job.payload, job.priority) == ({"task": "noop", "payload": {"ok": True}}, 3)


@pytest.mark.asyncio
async def test_defer_many_stores_all_in_one_enqueue_many_or_none_with_defers_errors(
    noop: Task[[object], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = (await noop.app.store()).queue("noop")
    for arguments, error, named in BAD_DEFERS:
        call = dict(arguments)
        payload = call.pop("payload", {"ok": True})
        with pytest.raises(error) as raised:
            await noop.defer_many([{"fine": 1}, payload], **call)  # type: ignore[arg-type]
        assert named.replace("payload:", "payloads[1]:") in str(raised.value), (arguments, str(raised.value))
    with pytest.raises(InvalidArgument, match=r"payloads='ab': must be a sequence \(a list\) of payloads"):
        await noop.defer_many("ab")
    assert await queue.claim_batch("inspector", 100) == [], "a refused defer_many stored a job"
    calls: list[str] = []
    for op in ("enqueue", "enqueue_many"):
        original = getattr(type(queue), op)

        async def spy(self: object, *args: object, _op: str = op, _original: Any = original, **kwargs: object) -> Any:
            calls.append(_op)
            return await _original(self, *args, **kwargs)

        monkeypatch.setattr(type(queue), op, spy)
    ids = await noop.defer_many([{"n": n} for n in range(5)], priority=2)
    assert calls == ["enqueue_many"], "defer_many is one enqueue_many call"
    jobs = [await queue.get_job(job_id) for job_id in ids]
    assert [(job.payload, job.priority) for job in jobs if job is not None] == [
        ({"task": "noop", "payload": {"n": n}}, 2) for n in range(5)
    ]
    assert await noop.defer_many([]) == []


@pytest.mark.asyncio
async def test_the_payload_bound_is_the_apps() -> None:
    app = App(MemSource(f"bound-{id(object())}"), max_payload_bytes=10)

    @app.task()
    async def small(payload: object) -> None:
        return None

    async with app:
        await small.defer("12345678")
        with pytest.raises(PayloadError, match="is 11 bytes, over this app's max_payload_bytes=10"):
            await small.defer("123456789")
    with pytest.raises(InvalidArgument, match="max_payload_bytes=0: must be an int >= 1"):
        App(MemSource("x"), max_payload_bytes=0)


def test_registration_refuses_bad_tasks_naming_the_argument() -> None:
    app = App(MemSource("registration"))

    async def handler(payload: object) -> None:
        return None

    with pytest.raises(InvalidArgument, match=r"timeout=-1: must be a finite number of seconds > 0"):
        app.task(timeout=-1)
    with pytest.raises(InvalidArgument, match="max_attempts=0"):
        app.task(max_attempts=0)
    with pytest.raises(InvalidName):
        app.task(queue="__reserved")
    with pytest.raises(InvalidArgument, match="fail_on="):
        app.task(fail_on=(ValueError, "x"))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="must be an async def"):
        app.task()(lambda payload: None)  # type: ignore[arg-type, return-value]
    app.task(name="one")(handler)
    with pytest.raises(InvalidName, match="name='one': a task of that name is already registered"):
        app.task(name="one")(handler)
    with pytest.raises(InvalidArgument, match="source="):
        App("sqlite:jobs.sqlite3")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency=0: must be an int >= 1"),
        ({"max_batch": True}, "max_batch=True: must be an int >= 1"),
        ({"grace_s": -1.0}, "grace_s=-1.0: must be a finite number of seconds >= 0"),
        ({"queues": []}, "queues=[]"),
    ],
)
def test_worker_options_are_checked_before_anything_starts(options: dict[str, object], message: str) -> None:
    app = App(MemSource("options"))
    app.task()(_noop)
    with pytest.raises(InvalidArgument) as raised:
        Worker(app, WorkerOptions(**options))  # type: ignore[arg-type]
    assert message in str(raised.value)


async def _noop(payload: object) -> None:
    return None


@pytest.mark.asyncio
async def test_a_deep_backlog_is_claimed_in_batches_and_heartbeats_keep_a_long_job() -> None:
    app = App(MemSource(f"backlog-{id(object())}"))
    done: list[int] = []

    @app.task(queue="deep", queue_opts=QueueOpts(visibility_timeout_s=0.2))
    async def work(payload: int, context: JobContext) -> None:
        if payload == 0:
            await asyncio.sleep(0.7)  # more than three leases: only heartbeats keep it
        done.append(context.attempt)

    try:
        store = await app.store()
        await store.queue("deep").enqueue_many([{"task": "work", "payload": n} for n in range(60)])
    finally:
        await app.close()
    worker = Worker(app, WorkerOptions(concurrency=20, stop_when_idle=True, sweep_interval_s=0))
    await asyncio.wait_for(worker.run(), 30)
    assert sorted(done) == [1] * 60, "every job ran once, at its first attempt"
    assert worker.counters.done == 60
    assert worker.counters.claims < worker.counters.claimed_jobs, "a deep backlog was claimed in batches"


def test_the_cli_says_in_one_line_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    assert alkstore_main(["worker", "no_such_module_here:app"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("alkstore: app 'no_such_module_here:app': cannot import module 'no_such_module_here'")
    assert alkstore_main(["worker", "nocolon"]) == 2
    assert "must be MODULE:APP" in capsys.readouterr().err
    assert alkstore_main(["worker", "tests.worker_app:OPTS"]) == 2
    assert "has no App named 'OPTS' (found QueueOpts)" in capsys.readouterr().err
    assert alkstore_main(["worker", "tests.worker_app:app", "--concurrency", "0"]) == 2
    assert "concurrency=0: must be an int >= 1" in capsys.readouterr().err
    assert alkstore_main(["worker", "tests.worker_app:app", "--processes", "0"]) == 2
    assert "--processes=0: must be an int >= 1" in capsys.readouterr().err


def test_jobs_dead_lists_dead_letters_and_retry_enqueues_one_again(tmp_path: Path) -> None:
    database = tmp_path / "jobs.sqlite3"
    env_app = tmp_path / "dead_app.py"
    env_app.write_text(
        "from alkstore_worker import App\nfrom alkstore_sqlite import SqliteSource\n"
        f"app = App(SqliteSource({str(database)!r}))\n"
        "@app.task(queue='q', fail_on=(KeyError,))\n"
        "async def boom(payload):\n"
        "    raise KeyError(payload)\n",
        encoding="utf-8",
    )

    async def defer_and_drain() -> None:
        sys.path.insert(0, str(tmp_path))
        try:
            import dead_app  # type: ignore[import-not-found]

            await dead_app.boom.defer("missing")
            await dead_app.app.close()
            await Worker(dead_app.app, WorkerOptions(stop_when_idle=True, sweep_interval_s=0)).run()
        finally:
            sys.path.remove(str(tmp_path))

    asyncio.run(defer_and_drain())
    command = [sys.executable, "-m", "alkstore_worker", "jobs"]
    listed = subprocess.run(
        [*command, "dead", "dead_app:app"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    lines = listed.stdout.splitlines()
    assert lines[0] == "id\tqueue\tattempts\tdied_at\tlast_error"
    assert lines[1].startswith("1\tq\t1\t")
    assert lines[1].endswith("\tKeyError: 'missing'")
    retried = subprocess.run(
        [*command, "retry", "dead_app:app", "1"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert retried.stdout == "dead job 1 enqueued again as job 2 on queue 'q'\n"

    async def state() -> tuple[object, object]:
        import alkstore_sqlite

        async with await alkstore_sqlite.open_store(database) as store:
            queue = store.queue("q")
            old, new = await queue.get_job(1), await queue.get_job(2)
            assert new is not None
            return old, (new.state, new.attempts, new.payload)

    assert asyncio.run(state()) == (
        None,
        (JobState.READY, 0, {"task": "boom", "payload": "missing", "requeued_from": 1}),
    )
    again = subprocess.run([*command, "retry", "dead_app:app", "2"], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 2
    assert again.stderr == "alkstore: id=2: job 2 of queue 'q' is ready, not dead\n"


@pytest.mark.asyncio
async def test_a_lost_lease_cancels_the_run_and_settles_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """Another party completes the job mid-run (B1: ack_batch by anyone): the next heartbeat says so."""
    app = App(MemSource(f"lost-{id(object())}"))
    finished: list[object] = []

    @app.task(queue="lost", queue_opts=QueueOpts(visibility_timeout_s=0.3))
    async def slow(payload: object, context: JobContext) -> None:
        store = await app.store()
        assert await store.queue("lost").ack_batch([context.job.id]) == 1
        await asyncio.sleep(5)
        finished.append(payload)

    try:
        await slow.defer(None)
    finally:
        await app.close()
    worker = Worker(app, WorkerOptions(stop_when_idle=True, sweep_interval_s=0))
    with caplog.at_level("INFO", logger="alkstore_worker"):
        await asyncio.wait_for(worker.run(), 10)
    assert finished == []
    assert (worker.counters.done, worker.counters.retried, worker.counters.failed) == (0, 0, 0)
    assert any('"event": "cancelled"' in record.getMessage() for record in caplog.records)
    assert worker.counters.cancelled == 1


@pytest.mark.asyncio
async def test_on_settled_hears_each_claims_settlement_and_whether_the_store_took_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An ack refused because another party completed the job first (H5) is heard as refused, not as done."""
    app = App(MemSource(f"settled-{id(object())}"))
    heard: list[tuple[object, str | None, str, bool, int]] = []

    @app.on_settled
    def hear(settlement: Settlement) -> None:
        heard.append(
            (settlement.payload, settlement.task, settlement.action, settlement.accepted, settlement.job.attempts)
        )

    @app.on_settled
    def broken(settlement: Settlement) -> None:
        raise RuntimeError("a hook that fails")

    @app.task(queue="settled", queue_opts=QueueOpts(visibility_timeout_s=0.3), fail_on=(ValueError,))
    async def work(payload: str, context: JobContext) -> None:
        if payload in ("taken", "lapsed"):
            assert await (await app.store()).queue("settled").ack_batch([context.job.id]) == 1
        if payload == "lapsed":
            await asyncio.sleep(5)  # the next heartbeat finds the lease gone and cancels the run
        if payload == "fails":
            raise ValueError(payload)

    try:
        for payload in ("ok", "taken", "lapsed", "fails"):
            await work.defer(payload)
    finally:
        await app.close()
    worker = Worker(app, WorkerOptions(concurrency=4, stop_when_idle=True, sweep_interval_s=0))
    with caplog.at_level("INFO", logger="alkstore_worker"):
        await asyncio.wait_for(worker.run(), 10)
    assert sorted(heard, key=str) == sorted(
        [
            ("ok", "work", "ack", True, 1),
            ("taken", "work", "ack", False, 1),
            ("lapsed", "work", "cancelled", False, 1),
            ("fails", "work", "fail", True, 1),
        ],
        key=str,
    )
    assert worker.counters.done == 1
    assert sum('"event": "hook_error"' in record.getMessage() for record in caplog.records) == 4
    with pytest.raises(InvalidArgument, match="hook=42"):
        app.on_settled(42)  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_the_sweep_runs_on_its_interval_and_progress_reports_the_counters(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = App(MemSource(f"sweep-{id(object())}"))

    @app.task(queue="sweep")
    async def never(payload: object) -> None:
        return None

    expiring = await never.defer(None, delay=60, expires=0.05)
    worker = Worker(app, WorkerOptions(sweep_interval_s=0.1, progress_s=0.1))
    caplog.set_level("INFO", logger="alkstore_worker")
    serving = asyncio.create_task(worker.run())
    try:
        queue = (await app.store()).queue("sweep")

        async def dead() -> Job | None:
            job = await queue.get_job(expiring)
            return job if job is not None and job.state is JobState.DEAD else None

        job = await until(dead, "the sweep to end the expired job")
        assert job is not None
        assert (job.state, job.last_error) == (JobState.DEAD, "expired")

        async def progress_events() -> list[logging.LogRecord]:
            return [record for record in caplog.records if getattr(record, "alkstore_event", None) == "progress"]

        # stderr is no terminal here: the counters come as progress events, one each progress_s
        progress = await until(progress_events, "a progress event")
    finally:
        worker.stop()
        await asyncio.wait_for(serving, 10)
        await app.close()
    assert '"event": "progress", "done": 0, "failed": 0' in progress[0].getMessage()


def test_progress_on_a_terminal_is_one_human_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    report_progress(Counters(done=3))
    assert "done 3 · retried 0 · dead 0 · in flight 0 · claim" in capsys.readouterr().err


@pytest.mark.asyncio
async def test_dead_letters_are_listed_where_the_engine_allows(source: StoreSource, noop: Task[[object], None]) -> None:
    job_id = await noop.defer("x")
    handle = await (await noop.app.store()).queue("noop").claim_one("test")
    assert handle is not None
    assert await handle.fail("it broke")
    if source.one_process:
        with pytest.raises(NotImplementedError, match="offers no way to list dead jobs"):
            await source.dead_jobs(None, 10)
        return
    (dead,) = await source.dead_jobs("noop", 10)
    assert (dead.id, dead.queue, dead.attempts, dead.last_error) == (job_id, "noop", 1, "it broke")
    assert dead.died_at.startswith("20")
    assert await source.dead_jobs("other", 10) == []


@pytest.mark.asyncio
async def test_one_sweeper_at_a_time(source: StoreSource) -> None:
    await (await source.open()).close()  # the location exists
    first, second = source.sweep_lock(), source.sweep_lock()
    try:
        async with first.held() as mine:
            assert mine
            async with second.held() as theirs:
                assert theirs is source.one_process, "only mem, one process, has no lock"
        async with second.held() as theirs:
            assert theirs, "released after the round"
    finally:
        await first.close()
        await second.close()


def test_a_mem_app_cannot_run_in_several_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mem_app_for_cli.py").write_text(
        "from alkstore_worker import App\nfrom alkstore_mem import MemSource\napp = App(MemSource('cli'))\n"
        "@app.task()\nasync def noop(payload):\n    return None\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert alkstore_main(["worker", "mem_app_for_cli:app", "--processes", "2"]) == 2
    assert capsys.readouterr().err == "alkstore: --processes=2: mem:cli lives in one process; use 1\n"


@pytest.mark.asyncio
async def test_a_stop_on_an_engine_without_release_hands_the_job_back_as_a_copy() -> None:
    """An engine written for contract 2.0 has no ``release``: its kit refuses it before touching the handle, and
    the worker falls back to a copy (no attempt spent, ``requeued_from`` the old id) and an ack of the claim."""
    from alkstore_mem import MemDriver
    from alkstore_mem.space import space_named

    from alkstore_contract import SystemClock
    from alkstore_contract.kit import KitStore, StorageDriver
    from alkstore_contract.surface import Store
    from tests.test_kit_2_0_driver import Driver20

    space = space_named(f"worker-2-0-{id(object())}")

    async def open_2_0() -> Store:
        return KitStore(cast(StorageDriver, Driver20(MemDriver(space))), clock=SystemClock(), seed=1)

    app = App(StoreSource(open_2_0, "mem, a 2.0 driver"))
    started = asyncio.Event()

    @app.task(name="slow", queue="q")
    async def slow(payload: object) -> None:
        started.set()
        await asyncio.sleep(30)

    job_id = await slow.defer({"n": 1})
    worker = Worker(app, WorkerOptions(grace_s=0.1))
    running = asyncio.create_task(worker.run())
    await asyncio.wait_for(started.wait(), 10)
    worker.stop()
    await asyncio.wait_for(running, 10)
    queue = (await app.store()).queue("q")
    assert await queue.get_job(job_id) is None, "the claim was acked after its copy was stored"
    copy = await queue.get_job(cast(int, job_id) + 1)
    assert copy is not None
    assert (copy.state, copy.attempts) == (JobState.READY, 0)
    assert copy.payload == {"task": "slow", "payload": {"n": 1}, "requeued_from": job_id}
    await app.close()


@pytest.mark.asyncio
async def test_defer_unique_stores_one_job_per_key_until_it_finishes(
    source: StoreSource, noop: Task[[object], None]
) -> None:
    """K1–K3 through the worker: a second defer of a held key stores nothing and names the holder; once the job is
    acked the key is free again."""
    first = await noop.defer_unique({"n": 1}, "nightly-report")
    again = await noop.defer_unique({"n": 2}, "nightly-report")
    other = await noop.defer_unique({"n": 3}, "weekly-report")
    assert (first.created, again.created, other.created) == (True, False, True)
    assert again.id == first.id
    await Worker(noop.app, WorkerOptions(stop_when_idle=True)).run()
    after = await noop.defer_unique({"n": 4}, "nightly-report")
    assert after.created
    assert after.id != first.id


@pytest.mark.asyncio
async def test_defer_in_stores_the_job_only_if_the_callers_transaction_commits() -> None:
    """W1–W4 through the worker, on Postgres: a rolled-back transaction leaves no job, a committed one leaves it."""
    import asyncpg
    from alkstore_postgres import PostgresSource
    from alkstore_postgres.location import new_schema_name, quote_ident

    dsn = await pg_dsn()
    schema = new_schema_name()
    app = App(PostgresSource(dsn, schema))
    task = app.task(name="noop", queue="noop")(_noop)
    await app.store()  # the schema exists
    connection = await asyncpg.connect(dsn)
    try:
        rolled_back = connection.transaction()
        await rolled_back.start()
        dropped = await task.defer_in(connection, {"n": 1})
        await rolled_back.rollback()
        async with connection.transaction():
            kept = await task.defer_in(connection, {"n": 2})
        queue = (await app.store()).queue("noop")
        assert await queue.get_job(dropped) is None
        job = await queue.get_job(kept)
        assert job is not None
        assert job.payload == {"task": "noop", "payload": {"n": 2}}
    finally:
        await app.close()
        await connection.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
        await connection.close()
