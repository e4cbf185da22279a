"""pgqueuer 1.6.0 as its users run it: two ``PgQueuer`` worker processes, one paused, one killed.

``python ecosystem/pgqueuer/adapter/alkstore_pgqueuer/reproduce_pause.py [DSN]`` (DSN defaults to
``$ALKSTORE_PG_DSN``). It needs pgqueuer and asyncpg only (nothing of alkstore): its tables get a prefix of their own
(``PGQUEUER_PREFIX``, pgqueuer's documented namespacing), installed with ``Queries.install()`` and removed
with ``Queries.uninstall()``. Each worker is a separate OS process running ``PgQueuer.run`` with
``heartbeat_timeout`` of 2 s (pgqueuer's documented staleness threshold for re-picking a job), its handler
printing when it starts and ends a job.

- ``healthy long job not handed on``: a 6 s job (three heartbeat timeouts) on a healthy worker, a second
  worker idle beside it: the job runs once and completes. pgqueuer has no per-job lease to lapse.
- ``pause``: worker A starts a 6 s job; A is stopped (SIGSTOP: a GC pause, a frozen VM) for 5 s, past the
  heartbeat timeout; worker B re-picks the job and starts it; A is continued, finishes, and pgqueuer logs
  A's success, which deletes the job's row while B is still running it.
- ``kill``: worker C starts a job and is killed (SIGKILL); worker D, started at once, re-picks it after the
  heartbeat timeout and completes it. The delay from the kill to B's start is printed: late, not lost.

Prints one ``SAW:`` line per observation and ``REPRODUCED``/``NOT REPRODUCED`` per scenario; exits 0 when
all three showed what docs/ecosystem.md says, 1 otherwise. Every process it starts is killed on the way out.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

STALE_S = 2.0
JOB_S = 6.0
PAUSE_S = 5.0
WAIT_S = 30.0


def worker(dsn: str, log: str) -> None:
    """One pgqueuer worker process: ``PgQueuer.run`` with a 2 s heartbeat timeout, its handler logging."""
    import asyncpg
    from pgqueuer import PgQueuer
    from pgqueuer.models import Job

    async def run() -> None:
        conn = await asyncpg.connect(dsn)
        pgq = PgQueuer.from_asyncpg_connection(conn)

        async def handle(job: Job) -> None:
            _log(log, f"start {job.id}")
            await asyncio.sleep(JOB_S)
            _log(log, f"end {job.id}")

        pgq.entrypoint("repro")(handle)  # called, not a decorator: typed whether pgqueuer is installed or not
        await pgq.run(heartbeat_timeout=timedelta(seconds=STALE_S), dequeue_timeout=timedelta(seconds=0.5))

    asyncio.run(run())


def _say(line: str) -> None:
    """One line of what the run saw, on stdout at once (ci/ecosystem.sh reads it)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _log(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{time.time():.3f} {os.getpid()} {line}\n")


def _events(path: Path) -> list[tuple[float, int, str, int]]:
    """(time, pid, start|end, job id) per line a worker logged."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        at, pid, what, job = line.split()
        found.append((float(at), int(pid), what, int(job)))
    return found


def _wait_for(log: Path, pid: int, what: str, job: int) -> float | None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for at, who, seen, job_id in _events(log):
            if who == pid and seen == what and job_id == job:
                return at
        time.sleep(0.05)
    return None


class Workers:
    """The worker processes of one run, each killed on the way out whatever happened."""

    def __init__(self, dsn: str, log: Path) -> None:
        self.dsn, self.log, self.procs = dsn, log, list[subprocess.Popen[bytes]]()

    def start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", self.dsn, str(self.log)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGCONT)
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _first_start(log: Path, job: int) -> tuple[float, int] | None:
    """(time, pid) of the first start of ``job`` any worker logged, waiting for it."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        started = [(at, pid) for at, pid, what, job_id in _events(log) if what == "start" and job_id == job]
        if started:
            return started[0]
        time.sleep(0.05)
    return None


async def _healthy(queries: Any, conn: Any, table: str, workers: Workers, log: Path) -> bool:
    """A job three heartbeat timeouts long on a healthy worker, a second worker idle beside it: run once."""
    pair = [workers.start(), workers.start()]
    (job,) = await queries.enqueue("repro", None)
    first = _first_start(log, job)
    ended = _wait_for(log, first[1], "end", job) if first else None
    await asyncio.sleep(0.5)
    starts = [pid for _, pid, what, job_id in _events(log) if what == "start" and job_id == job]
    row = await conn.fetchrow(f"SELECT status FROM {table} WHERE id = $1", job)
    _say(
        f"SAW: healthy long job {job} ({JOB_S:.0f} s, heartbeat_timeout {STALE_S:.0f} s) beside a second idle "
        f"worker: started {len(starts)} time(s), ended: {ended is not None}; "
        f"its row then: {'gone (completed)' if row is None else row['status']}"
    )
    for proc in pair:
        os.killpg(proc.pid, signal.SIGKILL)
    return len(starts) == 1 and ended is not None and row is None


async def scenarios(dsn: str, log: Path) -> list[tuple[str, bool]]:
    import asyncpg
    from pgqueuer.db import AsyncpgDriver
    from pgqueuer.queries import Queries

    conn = await asyncpg.connect(dsn)
    queries = Queries(AsyncpgDriver(conn))
    table = f"{os.environ['PGQUEUER_PREFIX']}pgqueuer"
    await queries.install()
    workers = Workers(dsn, log)
    results = []
    try:
        results.append(("healthy long job not handed on", await _healthy(queries, conn, table, workers, log)))
        a = workers.start()
        (first,) = await queries.enqueue("repro", None)
        if _wait_for(log, a.pid, "start", first) is None:
            _say(f"SAW: worker A never started job {first}")
            return [*results, ("pause", False), ("kill", False)]
        os.killpg(a.pid, signal.SIGSTOP)
        stopped = time.time()
        b = workers.start()
        b_start = _wait_for(log, b.pid, "start", first)
        _say(
            f"SAW: A (pid {a.pid}) stopped at once after starting job {first}; "
            + (f"B (pid {b.pid}) started it {b_start - stopped:.1f} s later" if b_start else "B never started it")
        )
        await asyncio.sleep(max(0.0, PAUSE_S - (time.time() - stopped)))
        os.killpg(a.pid, signal.SIGCONT)
        a_end = _wait_for(log, a.pid, "end", first)
        await asyncio.sleep(0.5)  # A's success goes through pgqueuer's status buffer
        row = await conn.fetchrow(f"SELECT status FROM {table} WHERE id = $1", first)
        b_done = _wait_for(log, b.pid, "end", first) if b_start else None
        b_running = a_end is not None and (b_done is None or b_done > a_end)
        _say(
            f"SAW: A continued after {PAUSE_S:.0f} s and ended job {first}: {a_end is not None}; "
            f"the job's row then: {'gone' if row is None else row['status']}; B still running it then: {b_running}"
        )
        results.append(("pause", b_start is not None and a_end is not None and row is None and b_running))
        for done in (a, b):  # both have ended job 1: only C may take the next job
            os.killpg(done.pid, signal.SIGKILL)
        c = workers.start()
        (second,) = await queries.enqueue("repro", None)
        if _wait_for(log, c.pid, "start", second) is None:
            _say(f"SAW: worker C never started job {second}: the kill case did not run")
            results.append(("kill", False))
            return results
        os.killpg(c.pid, signal.SIGKILL)
        killed = time.time()
        d = workers.start()
        b_again = _wait_for(log, d.pid, "start", second)
        b_end = _wait_for(log, d.pid, "end", second) if b_again else None
        await asyncio.sleep(0.5)
        left = await conn.fetchrow(f"SELECT status FROM {table} WHERE id = $1", second)
        _say(
            f"SAW: C (pid {c.pid}) killed (SIGKILL) while running job {second}; "
            + (f"worker D started it {b_again - killed:.1f} s after the kill" if b_again else "no worker took it")
            + f"; D completed it: {b_end is not None}; "
            + f"its row then: {'gone (completed)' if left is None else left['status']}"
        )
        results.append(("kill", b_again is not None and b_end is not None and left is None))
        return results
    finally:
        workers.close()
        await queries.uninstall()
        await conn.close()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        worker(argv[1], argv[2])
        return 0
    dsn = argv[0] if argv else os.environ.get("ALKSTORE_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    os.environ["PGQUEUER_PREFIX"] = f"repro{uuid.uuid4().hex[:8]}_"
    log = Path(f"/tmp/pgqueuer-repro-{os.getpid()}.log")
    try:
        results = asyncio.run(scenarios(dsn, log))
    finally:
        log.unlink(missing_ok=True)
    for name, shown in results:
        _say(f"{'REPRODUCED' if shown else 'NOT REPRODUCED'}: {name}")
    return 0 if results and all(shown for _, shown in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
