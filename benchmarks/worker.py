"""End-to-end worker throughput and wake-up latency: alkstore's worker beside the queues people pick instead.

For each system, its **own worker** runs as real OS processes, as its users
run it: ``alkstore worker`` (Postgres with NOTIFY, and SQLite), procrastinate's
``run_worker_async`` and pgqueuer's ``QueueManager.run`` (each in a process of
its own per worker process), ``celery worker`` on a Redis broker (prefork) and
``rq worker`` (forking per job, RQ's default). Every handler is the same
(``bench.worker_marks``): a no-op, or a 10 ms sleep (``asyncio.sleep`` where
the library runs coroutines, ``time.sleep`` in Celery's and RQ's synchronous
tasks), then one line appended to a marks file the parent counts.

- **jobs/s end to end**: the workers are started and warmed up (one job per
  process through), then the parent enqueues ``--jobs`` jobs with the
  library's own bulk enqueue (batches of 100; Celery has none: one
  ``apply_async`` each) and the clock runs until the last handler's mark, at 1
  and 4 worker processes (``--processes``), ``--concurrency`` jobs at once
  per process where the library runs several (alkstore, procrastinate,
  pgqueuer; Celery's prefork and RQ run one per process).
- **enqueue-to-start latency** on an idle queue (one process, no-op handler):
  ``--samples`` jobs, one at a time, 50–100 ms apart, each carrying its
  enqueue instant; the handler marks ``now - then``; p50 and p99.

Run: ``python benchmarks/worker.py [--systems alkstore-postgres,alkstore-sqlite,procrastinate,pgqueuer,celery,rq]
[--jobs 2000] [--samples 200] [--processes 1,4] [--handlers noop,sleep] [--json PATH]``; ``--quick`` is a
seconds-long smoke run that shows it works. Needs ``pip install 'alkstore[bench]' 'celery[redis]' rq``, Postgres
(``$ALKSTORE_PG_DSN`` or the default DSN) and Redis on 127.0.0.1:6379; a system whose library or server is
missing is skipped with the reason. Every location is fresh (a schema, a file, uniquely named Redis queues) and
removed after; every worker process is killed, whatever fails. The figures of a loaded machine mean nothing:
quote a run with its load average, as the other benchmarks do.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SYSTEMS = ("alkstore-postgres", "alkstore-sqlite", "procrastinate", "pgqueuer", "celery", "rq")
BATCH = 100
READY_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 600.0
STOP_TIMEOUT_S = 15.0


@dataclass
class Result:
    """One measured configuration."""

    system: str
    handler: str
    processes: int
    jobs: int
    seconds: float
    jobs_per_s: float
    ran_twice: int
    """Handler starts beyond one per job: a job its worker ran more than once."""


@dataclass
class Latency:
    """Enqueue-to-start on an idle queue, one process."""

    system: str
    samples: int
    p50_ms: float
    p99_ms: float


class Skip(Exception):
    """This system cannot run here; the message says why."""


def _dsn() -> str:
    from alkstore_postgres.adapter import DEFAULT_DSN, DSN_ENV

    return os.environ.get(DSN_ENV, DEFAULT_DSN)


async def _sql(dsn: str, statement: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(dsn, timeout=10)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _drop_schema(dsn: str, schema: str) -> None:
    """Remove a system's schema and all it holds: every run makes its own (``alk_w…`` + random hex)."""
    from alkstore_postgres.location import quote_ident

    await _sql(dsn, f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")


class System:
    """One queue library: where its jobs live, how its workers start, how the parent enqueues."""

    name = ""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = concurrency
        self.env: dict[str, str] = {}

    async def setup(self) -> None:
        """Create a fresh location (raise ``Skip`` when the library or its server is missing)."""

    async def teardown(self) -> None:
        """Remove the location."""

    def commands(self, processes: int) -> list[list[str]]:
        """One command per OS process to start (their workers)."""
        raise NotImplementedError

    async def enqueue(self, payloads: list[dict[str, object]]) -> None:
        """Enqueue ``payloads`` with the library's own (bulk, where it has one) enqueue."""
        raise NotImplementedError


class Alkstore(System):
    def __init__(self, concurrency: int, engine: str) -> None:
        super().__init__(concurrency)
        self.engine = engine
        self.name = f"alkstore-{engine}"
        self.store: Any = None
        self.scratch: tempfile.TemporaryDirectory[str] | None = None

    async def setup(self) -> None:
        from alkstore_postgres import PostgresSource
        from alkstore_sqlite import SqliteSource

        from alkstore_worker import StoreSource

        source: StoreSource
        if self.engine == "postgres":
            from alkstore_postgres.location import new_schema_name

            dsn = _dsn()
            self.env = {"BENCH_WORKER_DSN": dsn, "BENCH_WORKER_SCHEMA": new_schema_name()}
            source = PostgresSource(dsn, self.env["BENCH_WORKER_SCHEMA"])
        else:
            self.scratch = tempfile.TemporaryDirectory(prefix="alkstore-worker-bench-")
            self.env = {"BENCH_WORKER_SQLITE": str(Path(self.scratch.name) / "jobs.sqlite3")}
            source = SqliteSource(self.env["BENCH_WORKER_SQLITE"])
        try:
            self.store = await source.open()
        except Exception as exc:
            raise Skip(f"cannot open the store: {exc}") from exc

    async def teardown(self) -> None:
        if self.store is not None:
            await self.store.close()
        if self.engine == "postgres":
            await _drop_schema(self.env["BENCH_WORKER_DSN"], self.env["BENCH_WORKER_SCHEMA"])
        if self.scratch is not None:
            self.scratch.cleanup()

    def commands(self, processes: int) -> list[list[str]]:
        return [
            [
                sys.executable,
                "-m",
                "alkstore_worker",
                "worker",
                "bench.worker_alkstore:app",
                "--processes",
                str(processes),
                "--concurrency",
                str(self.concurrency),
                "--log-level",
                "WARNING",
            ]
        ]

    async def enqueue(self, payloads: list[dict[str, object]]) -> None:
        from alkstore_worker.envelope import Envelope

        queue = self.store.queue("bench")
        for start in range(0, len(payloads), BATCH):
            await queue.enqueue_many([Envelope("bench", item).encode() for item in payloads[start : start + BATCH]])


class ServedHere(System):
    """procrastinate and pgqueuer: a fresh schema of their own, and workers run by this file's ``--serve NAME``.

    Neither library has a worker command of its own that takes this benchmark's
    handler, so each worker process is this file serving the library's own
    worker loop (``serve``).
    """

    schema_prefix = ""
    """The start of the schema's name (``alk_w…``, then random hex: what ``_drop_schema`` removes)."""
    schema_env = "BENCH_WORKER_SCHEMA"
    """The variable that names the schema to the workers."""

    async def setup(self) -> None:
        try:
            importlib.import_module(self.name)
        except ImportError as exc:
            raise Skip(f"{self.name} is not installed: {exc}") from exc
        dsn = _dsn()
        schema = f"{self.schema_prefix}{uuid.uuid4().hex[:12]}"
        self.env = {"BENCH_WORKER_DSN": dsn, self.schema_env: schema}
        await self.install(dsn, schema)

    async def install(self, dsn: str, schema: str) -> None:
        """Create the library's tables in ``schema``, and open what the parent enqueues through."""
        raise NotImplementedError

    async def teardown(self) -> None:
        await _drop_schema(self.env["BENCH_WORKER_DSN"], self.env[self.schema_env])

    def commands(self, processes: int) -> list[list[str]]:
        return [
            [sys.executable, str(HERE / "worker.py"), "--serve", self.name, "--concurrency", str(self.concurrency)]
        ] * processes


class Procrastinate(ServedHere):
    name = "procrastinate"
    schema_prefix = "alk_wproc_"

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

    async def enqueue(self, payloads: list[dict[str, object]]) -> None:
        for start in range(0, len(payloads), BATCH):
            await self.task.batch_defer_async(*({"payload": item} for item in payloads[start : start + BATCH]))


async def _procrastinate_handler(payload: object) -> None:
    from bench.worker_marks import SLEEP_S, mark, sleeps, started

    line = started(payload)
    if sleeps():
        await asyncio.sleep(SLEEP_S)
    mark(line)


class Pgqueuer(ServedHere):
    name = "pgqueuer"
    schema_prefix = "alk_wpgq_"
    schema_env = "PGQUEUER_SCHEMA"
    """pgqueuer reads its schema from this variable (its ``db_settings``), in the parent as in the workers."""

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

    async def enqueue(self, payloads: list[dict[str, object]]) -> None:
        for start in range(0, len(payloads), BATCH):
            batch = [json.dumps(item).encode() for item in payloads[start : start + BATCH]]
            await self.queries.enqueue(["bench"] * len(batch), batch, [0] * len(batch))


class Redis(System):
    """Celery and RQ share the Redis setup: a fresh queue name on the shared server, its keys removed after."""

    def __init__(self, concurrency: int) -> None:
        super().__init__(concurrency)
        self.url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
        self.queue_name = f"alkstore-bench-{uuid.uuid4().hex[:12]}"
        self.env = {"BENCH_WORKER_REDIS": self.url}
        self.job_keys: list[Any] = []
        """Keys of jobs whose names do not contain the queue's (RQ's ``rq:job:ID``)."""

    def _client(self) -> Any:
        try:
            import redis
        except ImportError as exc:
            raise Skip(f"redis (the client) is not installed: {exc}") from exc
        client = redis.Redis.from_url(self.url)
        try:
            client.ping()
        except redis.RedisError as exc:
            raise Skip(f"no Redis at {self.url}: {exc}") from exc
        return client

    async def teardown(self) -> None:
        await asyncio.sleep(0.5)  # an RQ work horse (its own session) finishing a job as its worker is killed
        client = self._client()
        for key in [*client.scan_iter(match=f"*{self.queue_name}*"), *self.job_keys]:
            client.delete(key)


class Celery(Redis):
    name = "celery"

    async def setup(self) -> None:
        self._client()
        try:
            from bench import worker_celery
        except ImportError as exc:
            raise Skip(f"celery is not installed: {exc}") from exc
        worker_celery.app.conf.broker_url = self.url
        self.task = worker_celery.bench

    def commands(self, processes: int) -> list[list[str]]:
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
                "-c",
                str(processes),
                "-P",
                "prefork",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "WARNING",
            ]
        ]

    async def enqueue(self, payloads: list[dict[str, object]]) -> None:
        for item in payloads:
            self.task.apply_async((item,), queue=self.queue_name)


class Rq(Redis):
    name = "rq"

    async def setup(self) -> None:
        client = self._client()
        try:
            from rq import Queue
        except ImportError as exc:
            raise Skip(f"rq is not installed: {exc}") from exc
        self.queue = Queue(self.queue_name, connection=client)

    def commands(self, processes: int) -> list[list[str]]:
        rq = str(Path(sys.executable).with_name("rq"))
        return [
            [rq, "worker", "--url", self.url, "--path", str(HERE), "--logging_level", "WARNING", self.queue_name]
        ] * processes

    async def enqueue(self, payloads: list[dict[str, object]]) -> None:
        from bench.worker_rq import bench
        from rq import Queue

        for start in range(0, len(payloads), BATCH):
            jobs = self.queue.enqueue_many(
                [Queue.prepare_data(bench, args=(item,)) for item in payloads[start : start + BATCH]]
            )
            self.job_keys += [job.key for job in jobs]


def make(name: str, concurrency: int) -> System:
    if name.startswith("alkstore-"):
        return Alkstore(concurrency, name.removeprefix("alkstore-"))
    return {"procrastinate": Procrastinate, "pgqueuer": Pgqueuer, "celery": Celery, "rq": Rq}[name](concurrency)


# --- running workers and counting marks --------------------------------------------------------


@contextlib.contextmanager
def running(system: System, processes: int, handler: str, marks: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """The system's worker processes, each in its own process group, all SIGKILLed on the way out."""
    env = {
        **os.environ,
        **system.env,
        "BENCH_WORKER_MARKS": str(marks),
        "BENCH_WORKER_HANDLER": handler,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    started: list[subprocess.Popen[bytes]] = []
    try:
        for command in system.commands(processes):
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
        # which a SIGKILL of the parent's group would leave serving the next run for a moment
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


def _lines(marks: Path, kind: str) -> list[str]:
    """The marks of one kind (``d``, ``w``, ``l``), each as the text after its kind."""
    if not marks.exists():
        return []
    return [line[2:] for line in marks.read_text(encoding="ascii").splitlines() if line.startswith(kind + " ")]


async def _until_marks(
    marks: Path, kind: str, count: int, processes: list[subprocess.Popen[bytes]], within_s: float
) -> None:
    """Until ``count`` distinct jobs of ``kind`` have a mark (a job run twice counts once)."""
    deadline = time.monotonic() + within_s
    while len(set(_lines(marks, kind))) < count:
        for process in processes:
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace")[-2000:] if process.stderr else ""
                raise RuntimeError(f"a worker exited {process.returncode}: {err}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(set(_lines(marks, kind)))} of {count} jobs done after {within_s:g} s")
        await asyncio.sleep(0.002)


async def throughput(system: System, handler: str, processes: int, jobs: int, scratch: Path) -> Result:
    marks = scratch / f"{system.name}-{handler}-{processes}.marks"
    with running(system, processes, handler, marks) as workers:
        await system.enqueue([{"warm": n} for n in range(processes * 2)])
        await _until_marks(marks, "w", processes * 2, workers, READY_TIMEOUT_S)
        await asyncio.sleep(0.5)
        payloads: list[dict[str, object]] = [{"n": n} for n in range(jobs)]
        started = time.perf_counter()
        await system.enqueue(payloads)
        await _until_marks(marks, "d", jobs, workers, RUN_TIMEOUT_S)
        seconds = time.perf_counter() - started
        await asyncio.sleep(0.5)  # a job still running a second time marks now
        done = _lines(marks, "d")
    return Result(system.name, handler, processes, jobs, seconds, jobs / seconds, len(done) - len(set(done)))


async def latency(system: System, samples: int, scratch: Path) -> Latency:
    marks = scratch / f"{system.name}-latency.marks"
    with running(system, 1, "noop", marks) as workers:
        await system.enqueue([{"warm": 0}])
        await _until_marks(marks, "w", 1, workers, READY_TIMEOUT_S)
        for sample in range(samples):
            await asyncio.sleep(random.uniform(0.05, 0.1))
            await system.enqueue([{"t": time.time(), "i": sample}])
            await _until_marks(marks, "l", sample + 1, workers, 30)
    seconds = sorted(float(line.split()[1]) for line in _lines(marks, "l"))
    return Latency(system.name, samples, 1000 * _quantile(seconds, 0.5), 1000 * _quantile(seconds, 0.99))


def _quantile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] if values else float("nan")


# --- the in-process workers of procrastinate and pgqueuer --------------------------------------


async def serve(system: str, concurrency: int) -> None:
    """One worker process of ``system``, run by that library's own worker loop until killed."""
    sys.path.insert(0, str(HERE))
    dsn = os.environ["BENCH_WORKER_DSN"]
    if system == "procrastinate":
        from procrastinate import App, PsycopgConnector

        schema = os.environ["BENCH_WORKER_SCHEMA"]
        app = App(connector=PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}))
        app.task(name="bench", queue="bench")(_procrastinate_handler)
        async with app.open_async():
            await app.run_worker_async(queues=["bench"], concurrency=concurrency, delete_jobs="always")
        return
    import asyncpg
    from bench.worker_marks import SLEEP_S, mark, sleeps, started
    from pgqueuer.db import AsyncpgDriver
    from pgqueuer.models import Job
    from pgqueuer.qm import QueueManager
    from pgqueuer.queries import Queries

    manager = QueueManager(Queries(AsyncpgDriver(await asyncpg.connect(dsn))))
    pause = sleeps()

    @manager.entrypoint("bench", concurrency_limit=concurrency)
    async def handle(job: Job) -> None:
        line = started(json.loads(job.payload or b"null"))
        if pause:
            await asyncio.sleep(SLEEP_S)
        mark(line)

    await manager.run(batch_size=concurrency)


# --- the report -------------------------------------------------------------------------------


def table(results: list[Result], latencies: list[Latency]) -> str:
    lines = [
        "| system | handler | processes | jobs | seconds | jobs/s | ran twice |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.system} | {r.handler} | {r.processes} | {r.jobs:,} | {r.seconds:.2f} | {r.jobs_per_s:,.0f} "
        f"| {r.ran_twice} |"
        for r in results
    ]
    lines += ["", "| system | samples | enqueue-to-start p50 (ms) | p99 (ms) |", "|---|---:|---:|---:|"]
    lines += [f"| {lat.system} | {lat.samples} | {lat.p50_ms:.1f} | {lat.p99_ms:.1f} |" for lat in latencies]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: list[Result] = []
    latencies: list[Latency] = []
    skipped: dict[str, str] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="alkstore-worker-bench-marks-") as scratch:
        for name in args.systems:
            system = make(name, args.concurrency)
            try:
                await system.setup()
            except Skip as exc:
                skipped[name] = str(exc)
                sys.stderr.write(f"{name}: skipped: {exc}\n")
                continue
            try:
                for handler in args.handlers:
                    for processes in args.processes:
                        result = await throughput(system, handler, processes, args.jobs, Path(scratch))
                        sys.stderr.write(f"{name} {handler} ×{processes}: {result.jobs_per_s:,.0f} jobs/s\n")
                        results.append(result)
                if args.samples:
                    latencies.append(await latency(system, args.samples, Path(scratch)))
            finally:
                await system.teardown()
    return {
        "benchmark": "worker",
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": os.getloadavg(),
        },
        "settings": {"jobs": args.jobs, "samples": args.samples, "concurrency": args.concurrency},
        "results": [asdict(r) for r in results],
        "latency": [asdict(lat) for lat in latencies],
        "skipped": skipped,
    }


def _list(kind: type, allowed: tuple[str, ...] | None = None) -> Any:
    def parse(text: str) -> list[Any]:
        values = [kind(part) for part in text.split(",") if part]
        if allowed is not None and (bad := [v for v in values if v not in allowed]):
            raise argparse.ArgumentTypeError(f"{','.join(bad)}: not one of {','.join(allowed)}")
        return values

    return parse


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=_list(str, SYSTEMS), default=list(SYSTEMS))
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=200, help="latency samples (0: no latency run)")
    parser.add_argument("--processes", type=_list(int), default=[1, 4])
    parser.add_argument("--handlers", type=_list(str, ("noop", "sleep")), default=["noop", "sleep"])
    parser.add_argument("--concurrency", type=int, default=10, help="jobs at once per process, where it applies")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 40 jobs, 5 latency samples")
    parser.add_argument("--serve", choices=("procrastinate", "pgqueuer"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve, args.concurrency))
        return 0
    if args.quick:
        args.jobs, args.samples = 40, 5
    sys.path.insert(0, str(HERE))
    report = asyncio.run(main_async(args))
    sys.stdout.write(table([Result(**r) for r in report["results"]], [Latency(**lat) for lat in report["latency"]]))
    sys.stdout.write("\n\n" + json.dumps(report, indent=2) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
