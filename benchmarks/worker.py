"""End-to-end worker benchmark: alkstore's worker beside the queues people pick instead, each as its docs advise.

Every system runs its **own worker** as real OS processes, configured as its own
documentation recommends for throughput (docs/benchmarks.md, "Workers", has
the table of settings, each with the page it comes from), and every handler is
the same (``bench.worker_marks``): a no-op, or a 10 ms sleep, then one line
appended to a marks file with the job's number and its start and end instants.

- **drain**: a backlog of ``--jobs`` jobs is stored first, untimed, through the
  system's bulk enqueue where it has one; then the workers start. The figure is
  the jobs over the seconds from the first handler's start to the last
  acknowledgement: the later of the last handler's end and the moment the
  system's own storage first shows no job left unacknowledged (polled every
  5 ms; the start-up, from spawn to the first start, is in the JSON). Two
  points per process count: ``equal``, where every system gets ``--slots``
  concurrent handler slots per process, and ``own``, each system at its own
  default concurrency.
- **enqueue**: ``--jobs`` jobs into an empty location through the system's
  documented per-job call, and through its documented bulk call (batches of
  100) where it has one; no workers run.
- **latency**: enqueue-to-start on an idle queue, one process at the ``equal``
  point: ``--samples`` jobs one at a time, 50–100 ms apart, each carrying its
  enqueue instant; p50 and p99.

Fairness and honesty: each configuration runs ``--passes`` times, interleaved
(pass 1 of every configuration, then pass 2, every other pass in reverse order),
each pass on a fresh location with the load average noted at its start and end;
a table shows the median and the range. A system that fails to start, times out
or loses a job is reported as ``FAILED: …`` and never timed; a job whose handler
ran more than once is counted (``ran twice``) for every system. The durability
class of each system's acknowledgement is in the table beside its figure.

Run: ``python benchmarks/worker.py [--systems …] [--jobs 5000] [--passes 5] [--slots 10]
[--processes 1,4] [--handlers noop,sleep] [--measures drain,enqueue,latency] [--json PATH]``;
``--quick`` is a smoke run (200 jobs, 2 passes). Needs ``pip install -e '.[bench]'``,
Postgres (``$ALKSTORE_PG_DSN``), Redis on 127.0.0.1:6379 and RabbitMQ on 127.0.0.1:5672 (``BENCH_REDIS_URL``,
``BENCH_AMQP_URL`` override them); a system whose library or server is missing is reported as ``FAILED``.
Every location is fresh and removed after; every worker process is killed, whatever fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import platform
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SYSTEMS = ("alkstore-postgres", "alkstore-sqlite", "pgqueuer", "procrastinate", "celery-redis", "celery-rabbitmq", "rq")
POINTS = ("equal", "own")
MEASURES = ("drain", "enqueue", "latency")
BATCH = 100
"""Jobs per bulk call, for every system that has one."""
RUN_TIMEOUT_S = 120.0
"""How long a system may go without finishing another job (or, once all ran, without acking one) before it FAILs."""
STOP_TIMEOUT_S = 15.0
SETTLE_S = 0.5
"""After the last job's mark: time for a job a worker runs a second time to mark too."""
FORMAT = "worker.py/2"
"""The ``format`` of this script's JSON; ``tools/perf_summary.py`` reads only this one."""


class Unavailable(Exception):
    """This system cannot run here (its library or server is missing); the message says why."""


def _dsn() -> str:
    from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV

    return os.environ.get(DSN_ENV, DEFAULT_DSN)


async def _sql(dsn: str, statement: str) -> str:
    """Run one statement on a connection of its own; the first column of its first row, as text."""
    import asyncpg

    connection = await asyncpg.connect(dsn, timeout=10)
    try:
        return str(await connection.fetchval(statement))
    finally:
        await connection.close()


async def _drop_schema(dsn: str, schema: str) -> None:
    """Remove a system's schema and all it holds: every pass makes its own."""
    from alkstore_postgres.location import quote_ident

    await _sql(dsn, f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")


async def _postgres_durability(dsn: str) -> str:
    """What a committed transaction survives on this server, from its own settings."""
    sync, fsync = await _sql(dsn, "SHOW synchronous_commit"), await _sql(dsn, "SHOW fsync")
    return f"synchronous_commit={sync}, fsync={fsync}"


Payload = dict[str, object]


class System:
    """One queue library: where its jobs live, how its workers start, how a client enqueues."""

    name = ""
    acks = ""
    """When the system marks a job done, in words (the durability column says what that commit survives)."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.env: dict[str, str] = {}
        self.durability = ""

    async def setup(self) -> None:
        """Create a fresh location and open a client (raise ``Unavailable`` when the library or server is missing)."""

    async def teardown(self) -> None:
        """Close the client and remove the location."""

    def commands(self, processes: int, point: str) -> list[list[str]]:
        """One command per OS process to start: ``processes`` worker processes at ``point`` (``equal``/``own``)."""
        raise NotImplementedError

    def enqueuers(self) -> dict[str, Callable[[list[Payload]], Awaitable[None]]]:
        """The documented enqueue calls, by name: ``per-job`` always, ``bulk`` where the system has one."""
        raise NotImplementedError

    async def unacked(self) -> int:
        """Jobs stored and not yet acknowledged, read from the system's own storage: the drain ends at 0."""
        raise NotImplementedError

    async def preload(self, payloads: list[Payload]) -> None:
        """Store ``payloads`` before the workers start (untimed): the bulk call where there is one."""
        calls = self.enqueuers()
        await calls.get("bulk", calls["per-job"])(payloads)


def _batches(payloads: list[Payload]) -> Iterator[list[Payload]]:
    for start in range(0, len(payloads), BATCH):
        yield payloads[start : start + BATCH]


class Alkstore(System):
    acks = "acks batched (a 2 ms window), each batch committed before its jobs count done"

    def __init__(self, slots: int, engine: str) -> None:
        super().__init__(slots)
        self.engine = engine
        self.name = f"alkstore-{engine}"
        self.scratch: tempfile.TemporaryDirectory[str] | None = None
        self.app: Any = None
        self.task: Any = None

    async def setup(self) -> None:
        from alkstore_postgres import PostgresSource
        from alkstore_sqlite import SqliteSource

        from alkstore_worker import App, WorkerSource

        source: WorkerSource
        if self.engine == "postgres":
            from alkstore_postgres.location import new_schema_name

            dsn = _dsn()
            self.env = {"BENCH_WORKER_DSN": dsn, "BENCH_WORKER_SCHEMA": new_schema_name()}
            source = PostgresSource(dsn, self.env["BENCH_WORKER_SCHEMA"])
        else:
            self.scratch = tempfile.TemporaryDirectory(prefix="alkstore-worker-bench-")
            self.env = {"BENCH_WORKER_SQLITE": str(Path(self.scratch.name) / "jobs.sqlite3")}
            source = SqliteSource(self.env["BENCH_WORKER_SQLITE"])
        self.app = App(source)
        self.task = self.app.task(name="bench", queue="bench")(_async_handler)
        try:
            await self.app.store()
            self.durability = (
                await _postgres_durability(self.env["BENCH_WORKER_DSN"])
                if self.engine == "postgres"
                else "WAL, synchronous=NORMAL: no fsync per commit"
            )
        except Exception as exc:
            raise Unavailable(f"cannot open the store: {exc}") from exc

    async def teardown(self) -> None:
        if self.app is not None:
            await self.app.close()
        if self.engine == "postgres":
            await _drop_schema(self.env["BENCH_WORKER_DSN"], self.env["BENCH_WORKER_SCHEMA"])
        if self.scratch is not None:
            self.scratch.cleanup()

    def commands(self, processes: int, point: str) -> list[list[str]]:
        per_process = ["--concurrency", str(self.slots)] if point == "equal" else []  # own: the default, 10
        return [
            [
                sys.executable,
                "-m",
                "alkstore_worker",
                "worker",
                "bench.worker_alkstore:app",
                "--processes",
                str(processes),
                *per_process,
                "--log-level",
                "WARNING",
            ]
        ]

    def enqueuers(self) -> dict[str, Callable[[list[Payload]], Awaitable[None]]]:
        async def per_job(payloads: list[Payload]) -> None:
            for item in payloads:
                await self.task.defer(item)

        async def bulk(payloads: list[Payload]) -> None:
            for batch in _batches(payloads):
                await self.task.defer_many(batch)

        return {"per-job": per_job, "bulk": bulk}

    async def unacked(self) -> int:
        """The rows of the jobs table (an acked job is deleted, contract H2)."""
        if self.engine == "postgres":
            from alkstore_postgres.location import quote_ident

            table = f"{quote_ident(self.env['BENCH_WORKER_SCHEMA'])}.jobs"
            return int(await _sql(self.env["BENCH_WORKER_DSN"], f"SELECT count(*) FROM {table}"))
        with contextlib.closing(sqlite3.connect(self.env["BENCH_WORKER_SQLITE"], timeout=10)) as db:
            return int(db.execute("SELECT count(*) FROM jobs").fetchone()[0])


async def _async_handler(payload: object) -> None:
    """The handler of the libraries that run coroutines (alkstore's defer needs it registered in the parent too)."""
    from bench.worker_marks import SLEEP_S, mark, sleeps, started

    line = started(payload)
    if sleeps():
        await asyncio.sleep(SLEEP_S)
    mark(line)


class ServedHere(System):
    """procrastinate and pgqueuer: a fresh schema of their own, and workers run by this file's ``--serve NAME``.

    Neither library has a worker command that takes this benchmark's handler
    without an app module of its own, so each worker process is this file
    serving the library's own worker loop (``serve``).
    """

    schema_prefix = ""
    schema_env = "BENCH_WORKER_SCHEMA"
    """The variable that names the schema to the workers."""

    async def setup(self) -> None:
        try:
            importlib.import_module(self.name)
        except ImportError as exc:
            raise Unavailable(f"{self.name} is not installed: {exc}") from exc
        dsn = _dsn()
        schema = f"{self.schema_prefix}{uuid.uuid4().hex[:12]}"
        self.env = {"BENCH_WORKER_DSN": dsn, self.schema_env: schema}
        self.durability = await _postgres_durability(dsn)
        await self.install(dsn, schema)

    async def install(self, dsn: str, schema: str) -> None:
        """Create the library's tables in ``schema``, and open what the parent enqueues through."""
        raise NotImplementedError

    async def teardown(self) -> None:
        await _drop_schema(self.env["BENCH_WORKER_DSN"], self.env[self.schema_env])

    queue_table = ""
    """The table a finished job leaves (procrastinate with ``delete_jobs="always"``, pgqueuer always)."""

    async def unacked(self) -> int:
        from alkstore_postgres.location import quote_ident

        table = f"{quote_ident(self.env[self.schema_env])}.{self.queue_table}"
        return int(await _sql(self.env["BENCH_WORKER_DSN"], f"SELECT count(*) FROM {table}"))

    def commands(self, processes: int, point: str) -> list[list[str]]:
        serve = [sys.executable, str(HERE / "worker.py"), "--serve", self.name, "--point", point]
        return [[*serve, "--slots", str(self.slots)]] * processes


class Procrastinate(ServedHere):
    name = "procrastinate"
    schema_prefix = "alk_wproc_"
    queue_table = "procrastinate_jobs"
    acks = "ack per job, committed"

    async def install(self, dsn: str, schema: str) -> None:
        from alkstore_postgres.location import quote_ident
        from procrastinate import App, PsycopgConnector

        await _sql(dsn, f"CREATE SCHEMA {quote_ident(schema)}")
        self.app = App(connector=PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}))
        self.task = self.app.task(name="bench", queue="bench")(_procrastinate_handler)
        await self.app.open_async()
        await self.app.schema_manager.apply_schema_async()

    async def teardown(self) -> None:
        await self.app.close_async()
        await super().teardown()

    def enqueuers(self) -> dict[str, Callable[[list[Payload]], Awaitable[None]]]:
        async def per_job(payloads: list[Payload]) -> None:
            for item in payloads:
                await self.task.defer_async(payload=item)

        async def bulk(payloads: list[Payload]) -> None:
            for batch in _batches(payloads):
                await self.task.batch_defer_async(*({"payload": item} for item in batch))

        return {"per-job": per_job, "bulk": bulk}


async def _procrastinate_handler(payload: object) -> None:
    await _async_handler(payload)


class Pgqueuer(ServedHere):
    name = "pgqueuer"
    schema_prefix = "alk_wpgq_"
    queue_table = "pgqueuer"
    schema_env = "PGQUEUER_SCHEMA"
    """pgqueuer reads its schema from this variable (its ``db_settings``), in the parent as in the workers."""
    acks = "acks buffered, committed in batches"

    async def install(self, dsn: str, schema: str) -> None:
        import asyncpg
        from pgqueuer.db import AsyncpgDriver
        from pgqueuer.domain.settings import db_settings
        from pgqueuer.queries import Queries

        os.environ["PGQUEUER_SCHEMA"] = schema
        db_settings.cache_clear()
        self.connection = await asyncpg.connect(dsn)
        self.queries = Queries(AsyncpgDriver(self.connection))
        await self.queries.install()

    async def teardown(self) -> None:
        from pgqueuer.domain.settings import db_settings

        await self.connection.close()
        await super().teardown()
        os.environ.pop("PGQUEUER_SCHEMA", None)
        db_settings.cache_clear()

    def enqueuers(self) -> dict[str, Callable[[list[Payload]], Awaitable[None]]]:
        async def per_job(payloads: list[Payload]) -> None:
            for item in payloads:
                await self.queries.enqueue("bench", json.dumps(item).encode(), 0)

        async def bulk(payloads: list[Payload]) -> None:
            for batch in _batches(payloads):
                encoded: list[bytes | None] = [json.dumps(item).encode() for item in batch]
                await self.queries.enqueue(["bench"] * len(batch), encoded, [0] * len(batch))

        return {"per-job": per_job, "bulk": bulk}


class Broker(System):
    """Celery and RQ: a fresh queue name on a shared broker, what it left removed after."""

    url = ""

    def __init__(self, slots: int) -> None:
        super().__init__(slots)
        self.queue_name = f"alkstore-bench-{uuid.uuid4().hex[:12]}"
        self.job_keys: list[Any] = []
        """Redis keys of jobs whose names do not contain the queue's (RQ's ``rq:job:ID``, ``rq:results:ID``)."""

    def _redis(self) -> Any:
        try:
            import redis
        except ImportError as exc:
            raise Unavailable(f"redis (the client) is not installed: {exc}") from exc
        client = redis.Redis.from_url(self.url)
        try:
            client.ping()
        except redis.RedisError as exc:
            raise Unavailable(f"no Redis at {self.url}: {exc}") from exc
        return client

    def _redis_durability(self) -> str:
        config = self._redis().config_get("app*")
        fsynced = config.get("appendonly") == "yes" and config.get("appendfsync") == "always"
        facts = f"Redis appendonly={config.get('appendonly')}, appendfsync={config.get('appendfsync')}"
        return facts if fsynced else f"{facts}: not fsynced per write"

    async def teardown(self) -> None:
        if self.url.startswith("redis"):
            await asyncio.sleep(SETTLE_S)  # an RQ work horse (its own session) finishing as its worker is killed
            client = self._redis()
            for key in [*client.scan_iter(match=f"*{self.queue_name}*"), *self.job_keys]:
                client.delete(key)
            client.srem("rq:queues", f"rq:queue:{self.queue_name}")  # RQ's index of queues


class Celery(Broker):
    acks = "early ack (Celery's default: before the task runs)"

    def __init__(self, slots: int, broker: str) -> None:
        super().__init__(slots)
        self.name = f"celery-{broker}"
        self.url = (
            os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
            if broker == "redis"
            else os.environ.get("BENCH_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
        )

    async def setup(self) -> None:
        try:
            from bench import worker_celery
            from celery import Celery as CeleryApp
        except ImportError as exc:
            raise Unavailable(f"celery is not installed: {exc}") from exc
        # a client app of its own per pass, on this pass's broker, sending the task the workers run
        self.app = CeleryApp("bench-client", broker=self.url, set_as_current=False)
        self.task = self.app.task(name="bench")(worker_celery.bench.run)
        if self.url.startswith("redis"):
            self.durability = self._redis_durability()
        else:
            try:
                with self.app.connection_for_write() as connection:
                    connection.ensure_connection(max_retries=1)
            except Exception as exc:
                raise Unavailable(f"no RabbitMQ at {self.url}: {exc}") from exc
            self.durability = "RabbitMQ durable queue, persistent messages"
        self.env = {worker_celery.BROKER_ENV: self.url}

    async def teardown(self) -> None:
        if not self.url.startswith("redis"):
            with self.app.connection_for_write() as connection, contextlib.suppress(Exception):
                connection.default_channel.queue_delete(self.queue_name)
        self.app.close()
        await super().teardown()

    def commands(self, processes: int, point: str) -> list[list[str]]:
        from bench.worker_celery import PREFETCH_ENV

        if point == "equal":
            # the gevent pool, which Celery's concurrency page names for I/O-bound tasks, with S greenlets per
            # process, and a large prefetch multiplier, which its optimizing page advises for many short tasks
            pool, concurrency, self.env[PREFETCH_ENV] = "gevent", self.slots, "64"
            count = processes
        else:
            # prefork (the default) with one child per worker process asked for; prefetch 4 (the default)
            pool, concurrency, self.env[PREFETCH_ENV] = "prefork", processes, "4"
            count = 1
        return [
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "bench.worker_celery",
                "worker",
                "-Q",
                self.queue_name,
                "-n",
                f"bench{index}-{self.queue_name}@%h",
                "-P",
                pool,
                "-c",
                str(concurrency),
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "WARNING",
            ]
            for index in range(count)
        ]

    def enqueuers(self) -> dict[str, Callable[[list[Payload]], Awaitable[None]]]:
        async def per_job(payloads: list[Payload]) -> None:
            for item in payloads:
                self.task.apply_async((item,), queue=self.queue_name)

        return {"per-job": per_job}  # Celery documents no bulk send (a group is one message per task)

    async def unacked(self) -> int:
        """Messages still in the queue (with early acks a message is acked as a worker takes it)."""
        if self.url.startswith("redis"):
            return int(self._redis().llen(self.queue_name))
        with self.app.connection_for_write() as connection:
            return int(connection.default_channel.queue_declare(self.queue_name, passive=True).message_count)


class Rq(Broker):
    name = "rq"
    acks = "job state in Redis, set when the work horse ends"

    def __init__(self, slots: int) -> None:
        super().__init__(slots)
        self.url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")

    async def setup(self) -> None:
        client = self._redis()
        try:
            from rq import Queue
        except ImportError as exc:
            raise Unavailable(f"rq is not installed: {exc}") from exc
        self.durability = self._redis_durability()
        self.queue = Queue(self.queue_name, connection=client)

    def commands(self, processes: int, point: str) -> list[list[str]]:
        rq = str(Path(sys.executable).with_name("rq"))
        common = ["--url", self.url, "--path", str(HERE), self.queue_name]
        if point == "equal":  # RQ's worker pool: processes × slots workers, each forking a work horse per job
            pool = [rq, "worker-pool", "--num-workers", str(processes * self.slots), "--logging-level", "WARNING"]
            return [[*pool, *common]]
        return [[rq, "worker", "--logging_level", "WARNING", *common]] * processes  # own: one job at a time each

    def enqueuers(self) -> dict[str, Callable[[list[Payload]], Awaitable[None]]]:
        from bench.worker_rq import bench
        from rq import Queue

        async def per_job(payloads: list[Payload]) -> None:
            for item in payloads:
                self._forget_later(self.queue.enqueue(bench, item))

        async def bulk(payloads: list[Payload]) -> None:
            for batch in _batches(payloads):
                for job in self.queue.enqueue_many([Queue.prepare_data(bench, args=(item,)) for item in batch]):
                    self._forget_later(job)

        return {"per-job": per_job, "bulk": bulk}

    def _forget_later(self, job: Any) -> None:
        """Have the teardown remove the job's keys: its hash and its results stream."""
        self.job_keys += [job.key, f"rq:results:{job.id}"]

    async def unacked(self) -> int:
        """Jobs queued or started and not yet finished (RQ's queue and its started-job registry)."""
        return int(self.queue.count + self.queue.started_job_registry.count)


def make(name: str, slots: int) -> System:
    if name.startswith("alkstore-"):
        return Alkstore(slots, name.removeprefix("alkstore-"))
    if name.startswith("celery-"):
        return Celery(slots, name.removeprefix("celery-"))
    return {"procrastinate": Procrastinate, "pgqueuer": Pgqueuer, "rq": Rq}[name](slots)


# --- running workers and reading marks ---------------------------------------------------------


class Failed(Exception):
    """A pass that cannot be timed: a worker exited, or the jobs did not all run in time."""


@contextlib.contextmanager
def running(system: System, commands: list[list[str]], handler: str, marks: Path) -> Iterator[list[Any]]:
    """The system's worker processes, each in its own process group, all stopped on the way out."""
    env = {
        **os.environ,
        **system.env,
        "BENCH_WORKER_MARKS": str(marks),
        "BENCH_WORKER_HANDLER": handler,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    started: list[subprocess.Popen[bytes]] = []
    try:
        for command in commands:
            started.append(
                subprocess.Popen(
                    command,
                    cwd=HERE,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            )
        yield started
    finally:
        # SIGTERM first: alkstore's --processes parent forwards it to its children (their own sessions),
        # which a SIGKILL of the parent's group would leave serving the next pass for a moment
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process in started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass(frozen=True)
class Marks:
    """What the handlers wrote: per job number, each run's start and end instants."""

    runs: dict[str, list[tuple[float, float]]]

    @classmethod
    def read(cls, path: Path, kind: str) -> Marks:
        runs: dict[str, list[tuple[float, float]]] = {}
        if path.exists():
            for line in path.read_text(encoding="ascii").splitlines():
                fields = line.split()
                if len(fields) == 4 and fields[0] == kind:
                    runs.setdefault(fields[1], []).append((float(fields[2]), float(fields[3])))
        return cls(runs)

    @property
    def ran_twice(self) -> int:
        """Handler runs beyond one per job: a job its system ran more than once."""
        return sum(len(each) - 1 for each in self.runs.values())


class Tail:
    """A marks file read as it grows: the distinct jobs of one kind so far, each byte parsed once.

    The parent polls every 5 ms while the workers run on the same CPUs; re-reading the
    whole file each time would take CPU from them that grows with the jobs done.
    """

    def __init__(self, path: Path, kind: str) -> None:
        self.path, self.prefix = path, f"{kind} ".encode()
        self.offset, self.partial = 0, b""
        self.seen: set[bytes] = set()

    def count(self) -> int:
        if self.path.exists():
            with self.path.open("rb") as marks:
                marks.seek(self.offset)
                data = marks.read()
            self.offset += len(data)
            *lines, self.partial = (self.partial + data).split(b"\n")
            self.seen.update(line.split()[1] for line in lines if line.startswith(self.prefix))
        return len(self.seen)


async def _until(path: Path, kind: str, count: int, workers: list[Any], stall_s: float) -> Marks:
    """The marks once ``count`` distinct jobs of ``kind`` have one.

    ``Failed`` when a worker exits, or when no new job has marked for ``stall_s``: a slow
    system is waited for as long as it makes progress, and one that stops is reported with
    the jobs it lost.
    """
    tail, ran = Tail(path, kind), 0
    progress = time.monotonic()
    while (now_ran := tail.count()) < count:
        if now_ran > ran:
            ran, progress = now_ran, time.monotonic()
        for process in workers:
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace")[-600:] if process.stderr else ""
                raise Failed(f"a worker exited {process.returncode}: {err.strip()}")
        if time.monotonic() - progress > stall_s:
            raise Failed(f"stalled: {ran} of {count} jobs ran, none in the last {stall_s:g} s; lost {count - ran}")
        await asyncio.sleep(0.005)
    return Marks.read(path, kind)


async def _until_acked(system: System) -> float:
    """When the system's storage first showed every job acknowledged (polled every 5 ms); ``Failed`` if it stalls."""
    last, progress = -1, time.monotonic()
    while (left := await system.unacked()) > 0:
        if left != last:
            last, progress = left, time.monotonic()
        if time.monotonic() - progress > RUN_TIMEOUT_S:
            raise Failed(f"every handler ran but {left} jobs stayed unacknowledged for {RUN_TIMEOUT_S:g} s")
        await asyncio.sleep(0.005)
    return time.time()


# --- one pass of each measure ------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """One row of a table: what runs, where, how many processes, which handler or enqueue call."""

    measure: str
    system: str
    point: str
    processes: int
    variant: str
    """The handler (drain: ``noop``/``sleep``) or the enqueue call (``per-job``/``bulk``)."""


@dataclass
class Pass:
    """One timed pass of one configuration, or why it could not be timed."""

    config: Config
    index: int
    started: str
    load_at_start: tuple[float, float, float]
    load_at_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    jobs_per_s: float | None = None
    seconds: float | None = None
    startup_s: float | None = None
    ran_twice: int = 0
    failed: str = ""
    durability: str = ""
    samples_ms: list[float] = field(default_factory=list)


async def drain(system: System, config: Config, jobs: int, marks: Path, result: Pass) -> None:
    await system.preload([{"n": n} for n in range(jobs)])
    spawned = time.time()
    with running(system, system.commands(config.processes, config.point), config.variant, marks) as workers:
        await _until(marks, "d", jobs, workers, RUN_TIMEOUT_S)
        acked = await _until_acked(system)
        await asyncio.sleep(SETTLE_S)
        done = Marks.read(marks, "d")
    first = min(start for each in done.runs.values() for start, _ in each)
    last = max(acked, *(end for each in done.runs.values() for _, end in each))
    result.seconds, result.startup_s = last - first, first - spawned
    result.jobs_per_s, result.ran_twice = jobs / (last - first), done.ran_twice


async def enqueue(system: System, config: Config, jobs: int, result: Pass) -> None:
    call = system.enqueuers().get(config.variant)
    if call is None:
        result.failed = f"none: {system.name} documents no {config.variant} enqueue"
        return
    payloads: list[Payload] = [{"n": n} for n in range(jobs)]
    started = time.perf_counter()
    await call(payloads)
    result.seconds = time.perf_counter() - started
    result.jobs_per_s = jobs / result.seconds


async def latency(system: System, config: Config, samples: int, marks: Path, result: Pass) -> None:
    enqueue_one = system.enqueuers()["per-job"]
    with running(system, system.commands(1, config.point), "noop", marks) as workers:
        await enqueue_one([{"t": time.time(), "i": -1}])  # the first job also tells when the worker is up
        await _until(marks, "l", 1, workers, RUN_TIMEOUT_S)
        for sample in range(samples):
            await asyncio.sleep(random.uniform(0.05, 0.1))
            await enqueue_one([{"t": time.time(), "i": sample}])
            await _until(marks, "l", sample + 2, workers, 30)
    seen = Marks.read(marks, "l")
    result.samples_ms = sorted(1000 * each[0][0] for number, each in seen.runs.items() if number != "-1")
    result.ran_twice = seen.ran_twice


async def one_pass(config: Config, index: int, args: argparse.Namespace, scratch: Path) -> Pass:
    result = Pass(config, index, datetime.now(UTC).isoformat(timespec="seconds"), os.getloadavg())
    system = make(config.system, args.slots)
    marks = scratch / f"{config.measure}-{config.system}-{config.point}-{config.processes}-{config.variant}-{index}"
    try:
        await system.setup()
    except Unavailable as exc:
        result.failed = f"FAILED: {exc}"
    else:
        try:
            result.durability = f"{system.acks}; {system.durability}"
            if config.measure == "drain":
                await drain(system, config, args.jobs, marks, result)
            elif config.measure == "enqueue":
                await enqueue(system, config, args.jobs, result)
            else:
                await latency(system, config, args.samples, marks, result)
        except Failed as exc:
            result.failed = f"FAILED: {exc}"
        finally:
            await system.teardown()
    result.load_at_end = os.getloadavg()
    return result


def configs(args: argparse.Namespace) -> list[Config]:
    found: list[Config] = []
    if "drain" in args.measures:
        found += [
            Config("drain", system, point, processes, handler)
            for handler in args.handlers
            for processes in args.processes
            for point in POINTS
            for system in args.systems
        ]
    if "enqueue" in args.measures:
        found += [Config("enqueue", system, "-", 1, call) for call in ("per-job", "bulk") for system in args.systems]
    if "latency" in args.measures:
        found += [Config("latency", system, "equal", 1, "noop") for system in args.systems]
    return found


# --- the report ---------------------------------------------------------------------------------


def _span(values: list[float], digits: int = 0) -> str:
    return f"{min(values):,.{digits}f}–{max(values):,.{digits}f}"


def _ratios(passes: list[Pass], mine: Pass) -> list[float]:
    """alkstore-postgres's jobs/s over this row's, pass by pass (the two ran side by side in each pass)."""
    paired = dataclasses.replace(mine.config, system="alkstore-postgres")
    ours = {p.index: p.jobs_per_s for p in passes if p.config == paired and p.jobs_per_s}
    return [
        ours[p.index] / p.jobs_per_s
        for p in passes
        if p.config == mine.config and p.jobs_per_s and ours.get(p.index) is not None
    ]


def rows(passes: list[Pass], measure: str) -> list[list[str]]:
    """One row per configuration of ``measure``: the median and range of its passes, or how it failed.

    A drain row ends with the system's durability class (what its acknowledgement survives).
    """
    found: list[list[str]] = []
    seen: list[Config] = []
    for p in passes:
        if p.config.measure != measure or p.config in seen:
            continue
        seen.append(p.config)
        mine = [each for each in passes if each.config == p.config]
        failed = sorted({each.failed for each in mine if each.failed})
        rates = [each.jobs_per_s for each in mine if each.jobs_per_s is not None]
        twice = sum(each.ran_twice for each in mine)
        c = p.config
        head = [c.system, c.point, str(c.processes), c.variant] if measure == "drain" else [c.system, c.variant]
        tail = [p.durability] if measure == "drain" else []
        if failed or not rates:
            found.append([*head, "; ".join(failed) or "FAILED: no pass", "", "", "", str(twice), *tail])
            continue
        ratios = _ratios(passes, p) if c.system != "alkstore-postgres" else []
        ratio = f"{statistics.median(ratios):.2f}× ({_span(ratios, 2)})" if ratios else ""
        found.append(
            [*head, f"{statistics.median(rates):,.0f}", _span(rates), str(len(rates)), ratio, str(twice), *tail]
        )
    return found


def latency_rows(passes: list[Pass]) -> list[list[str]]:
    found: list[list[str]] = []
    for p in passes:
        if p.config.measure != "latency":
            continue
        if p.failed or not p.samples_ms:
            found.append([p.config.system, "0", p.failed or "FAILED: no sample", "", str(p.ran_twice)])
            continue
        samples = p.samples_ms
        p50, p99 = _quantile(samples, 0.5), _quantile(samples, 0.99)
        found.append([p.config.system, str(len(samples)), f"{p50:.1f}", f"{p99:.1f}", str(p.ran_twice)])
    return found


def _quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


RATES = ["min–max", "passes", "alkstore-postgres ÷ this (median, range)", "ran twice"]
DRAIN_COLUMNS = ["system", "point", "processes", "handler", "drain jobs/s (median)", *RATES, "durability"]
ENQUEUE_COLUMNS = ["system", "call", "enqueue jobs/s (median)", *RATES]
LATENCY_COLUMNS = ["system", "samples", "enqueue→start p50 (ms)", "p99 (ms)", "ran twice"]


def record(passes: list[Pass], args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The run in the layout of docs/benchmarks/runs/ (``runs``, ``tables``), with every pass under ``raw``."""
    return {
        "format": FORMAT,
        "source": f"{command} (the script's own JSON)",
        "heading": "Workers (`worker.py`)",
        "host": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "settings": {key: getattr(args, key) for key in ("jobs", "passes", "slots", "processes", "samples")},
        "runs": [
            {
                "started": p.started,
                "command": command,
                "pass": p.index,
                "config": asdict(p.config),
                "load_at_start": [f"{x:.2f}" for x in p.load_at_start],
                "load_at_end": [f"{x:.2f}" for x in p.load_at_end],
            }
            for p in passes
        ],
        "tables": [
            {"name": "drain", "columns": DRAIN_COLUMNS, "rows": rows(passes, "drain")},
            {"name": "enqueue", "columns": ENQUEUE_COLUMNS, "rows": rows(passes, "enqueue")},
            {"name": "latency", "columns": LATENCY_COLUMNS, "rows": latency_rows(passes)},
        ],
        "raw": [asdict(p) for p in passes],
    }


def markdown(run: dict[str, Any]) -> str:
    out: list[str] = []
    for table in run["tables"]:
        if not table["rows"]:
            continue
        out += ["| " + " | ".join(table["columns"]) + " |", "|" + "---|" * len(table["columns"])]
        out += ["| " + " | ".join(row) + " |" for row in table["rows"]]
        out.append("")
    loads = [float(r["load_at_start"][0]) for r in run["runs"]] + [float(r["load_at_end"][0]) for r in run["runs"]]
    if loads:
        out.append(f"load average (1 min) over the passes: {min(loads):.2f}–{max(loads):.2f}")
    return "\n".join(out) + "\n"


async def main_async(args: argparse.Namespace, command: str) -> dict[str, Any]:
    passes: list[Pass] = []
    todo = configs(args)
    with tempfile.TemporaryDirectory(prefix="alkstore-worker-bench-marks-") as scratch:
        for index in range(args.passes):
            for config in todo if index % 2 == 0 else reversed(todo):
                if config.measure == "latency" and index > 0:
                    continue  # one latency run of --samples jobs per system
                result = await one_pass(config, index, args, Path(scratch))
                shown = result.failed or f"{result.jobs_per_s or 0:,.0f} jobs/s"
                sys.stderr.write(f"pass {index + 1}: {config}: {shown}\n")
                passes.append(result)
    return record(passes, args, command)


# --- the in-process workers of procrastinate and pgqueuer --------------------------------------


async def serve(system: str, point: str, slots: int) -> None:
    """One worker process of ``system``, run by that library's own worker loop until killed."""
    sys.path.insert(0, str(HERE))
    dsn = os.environ["BENCH_WORKER_DSN"]
    if system == "procrastinate":
        from procrastinate import App, PsycopgConnector

        schema = os.environ["BENCH_WORKER_SCHEMA"]
        app = App(connector=PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}))
        app.task(name="bench", queue="bench")(_procrastinate_handler)
        async with app.open_async():
            if point == "equal":  # `concurrency` slots per worker
                await app.run_worker_async(queues=["bench"], delete_jobs="always", concurrency=slots)
            else:  # its default: one job at a time
                await app.run_worker_async(queues=["bench"], delete_jobs="always")
        return
    import asyncpg
    from pgqueuer.db import AsyncpgDriver
    from pgqueuer.models import Job
    from pgqueuer.qm import QueueManager
    from pgqueuer.queries import Queries

    manager = QueueManager(Queries(AsyncpgDriver(await asyncpg.connect(dsn))))

    @manager.entrypoint("bench")  # no concurrency_limit: pgqueuer enforces that one across all workers
    async def handle(job: Job) -> None:
        await _async_handler(json.loads(job.payload or b"null"))

    if point == "equal":  # a per-worker cap; pgqueuer wants it at least twice the batch
        await manager.run(batch_size=max(1, slots // 2), max_concurrent_tasks=max(2, slots))
    else:
        await manager.run()  # its defaults: batch_size=10, no cap


def _list(kind: Callable[[str], Any], allowed: tuple[str, ...] | None = None) -> Any:
    def parse(text: str) -> list[Any]:
        values = [kind(part) for part in text.split(",") if part]
        if allowed is not None and (bad := [v for v in values if v not in allowed]):
            raise argparse.ArgumentTypeError(f"{','.join(bad)}: not one of {','.join(allowed)}")
        return values

    return parse


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be at least 1")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=_list(str, SYSTEMS), default=list(SYSTEMS))
    parser.add_argument("--measures", type=_list(str, MEASURES), default=list(MEASURES))
    parser.add_argument("--jobs", type=_positive, default=5000)
    parser.add_argument("--passes", type=_positive, default=5, help="interleaved passes per configuration")
    parser.add_argument("--samples", type=_positive, default=200, help="latency samples per system")
    parser.add_argument("--processes", type=_list(_positive), default=[1, 4])
    parser.add_argument("--handlers", type=_list(str, ("noop", "sleep")), default=["noop", "sleep"])
    parser.add_argument("--slots", type=_positive, default=10, help="handler slots per process at the equal point")
    parser.add_argument("--json", metavar="PATH", help="also write the run as JSON here")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 jobs, 2 passes, 5 latency samples")
    parser.add_argument("--serve", choices=("procrastinate", "pgqueuer"), help=argparse.SUPPRESS)
    parser.add_argument("--point", choices=POINTS, default="equal", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.point, args.slots))
        return 0
    if args.quick:
        args.jobs, args.passes, args.samples = 200, 2, 5
    sys.path.insert(0, str(HERE))
    command = "python benchmarks/worker.py " + " ".join(sys.argv[1:])
    run = asyncio.run(main_async(args, command))
    sys.stdout.write(markdown(run))
    if args.json:
        Path(args.json).write_text(json.dumps(run, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
