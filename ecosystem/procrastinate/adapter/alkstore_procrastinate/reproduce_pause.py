"""procrastinate 3.10.0 as its users run it: worker processes, the documented stalled-job retry, a pause, a kill.

``python ecosystem/procrastinate/adapter/alkstore_procrastinate/reproduce_pause.py [DSN]`` (DSN defaults to
``$ALKSTORE_PG_DSN``).
It needs procrastinate only (nothing of alkstore; ``../procrastinate_repro.py``, which it imports, holds what
procrastinate's reproductions share): its tables go into a schema of their own (the connector's ``search_path``, as
procrastinate's docs set a schema), made with ``apply_schema_async`` and dropped at the end.
Each worker is a separate OS process running ``App.run_worker_async`` with ``update_heartbeat_interval=0.5``;
this process runs the recovery procrastinate's docs give ("Retry stalled jobs": ``get_stalled_jobs`` then
``retry_job`` on each) every 0.5 s with ``seconds_since_heartbeat=2``.

- ``healthy long job not handed on``: a 6 s job (three stale thresholds) on a healthy worker, a second worker
  idle beside it and the recovery running: the job runs once and succeeds (its worker's heartbeat goes on).
- ``pause``: worker A starts a 6 s job; A is stopped (SIGSTOP: a GC pause, a frozen VM) for 5 s, so its
  heartbeat goes stale; the recovery retries the job and worker B starts it; A is continued and finishes, and
  procrastinate marks the job ``succeeded`` while B is still running it.
- ``kill``: worker C starts a job and is killed (SIGKILL); the recovery retries it and worker D completes it.
  The delay from the kill to D's start is printed: late, not lost.

Prints one ``SAW:`` line per observation and ``REPRODUCED``/``NOT REPRODUCED`` per scenario; exits 0 when
all three showed what docs/ecosystem.md says, 1 otherwise. Every process it starts is killed on the way out.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the adapter's folder: procrastinate_repro.py
from procrastinate_repro import Workers, app_on, main, running, say

STALE_S = 2.0
JOB_S = 6.0
PAUSE_S = 5.0
WAIT_S = 30.0


def worker(dsn: str, schema: str, log: str) -> None:
    """One procrastinate worker process, its task logging when it starts and ends a job."""
    app = app_on(dsn, schema)

    async def handle(context: Any) -> None:
        _log(log, f"start {context.job.id}")
        await asyncio.sleep(JOB_S)
        _log(log, f"end {context.job.id}")

    app.task(name="repro", queue="repro", pass_context=True)(handle)

    async def run() -> None:
        async with app.open_async():
            await app.run_worker_async(
                queues=["repro"], update_heartbeat_interval=0.5, fetch_job_polling_interval=0.2, concurrency=1
            )

    asyncio.run(run())


def _log(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(f"{time.time():.3f} {os.getpid()} {line}\n")


def _wait_for(log: Path, pid: int, what: str, job: int) -> float | None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
        for line in lines:
            at, who, seen, job_id = line.split()
            if int(who) == pid and seen == what and int(job_id) == job:
                return float(at)
        time.sleep(0.05)
    return None


async def _recover(app: Any, stop: asyncio.Event) -> None:
    """procrastinate's documented recovery ("Retry stalled jobs"), run every 0.5 s."""
    while not stop.is_set():
        for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=STALE_S):
            await app.job_manager.retry_job(job)
        await asyncio.sleep(0.5)


async def _row(app: Any, job: int) -> Any:
    return await app.connector.execute_query_one_async(
        "SELECT status::text AS status, worker_id FROM procrastinate_jobs WHERE id = %(id)s", id=job
    )


def _first_start(log: Path, job: int) -> tuple[float, int] | None:
    """(time, pid) of the first start of ``job`` any worker logged, waiting for it."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        for at, pid, what, job_id in _lines(log):
            if what == "start" and job_id == job:
                return at, pid
        time.sleep(0.05)
    return None


def _lines(log: Path) -> list[tuple[float, int, str, int]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [(float(at), int(pid), what, int(job)) for at, pid, what, job in (line.split() for line in lines)]


async def _healthy(app: Any, defer: Any, workers: Workers, log: Path) -> bool:
    """A job three stale thresholds long on a healthy worker, a second worker idle beside it: run once."""
    pair = [workers.start(), workers.start()]
    job = await defer.defer_async()
    first = await asyncio.to_thread(_first_start, log, job)
    ended = await asyncio.to_thread(_wait_for, log, first[1], "end", job) if first else None
    await asyncio.sleep(0.5)
    starts = [pid for _, pid, what, job_id in _lines(log) if what == "start" and job_id == job]
    row = await _row(app, job)
    say(
        f"SAW: healthy long job {job} ({JOB_S:.0f} s, seconds_since_heartbeat {STALE_S:.0f}) beside a second idle "
        f"worker, the recovery running: started {len(starts)} time(s), ended: {ended is not None}; "
        f"its row then: status {row['status'] if row else 'gone'}"
    )
    for proc in pair:
        os.killpg(proc.pid, signal.SIGKILL)
    return len(starts) == 1 and ended is not None and row is not None and row["status"] == "succeeded"


async def scenarios(dsn: str, schema: str, log: Path) -> list[tuple[str, bool]]:
    results = []
    async with running(__file__, dsn, schema, log) as (app, workers):
        defer = app.configure_task("repro", queue="repro")
        stop = asyncio.Event()
        recovery = asyncio.create_task(_recover(app, stop))
        try:
            results.append(("healthy long job not handed on", await _healthy(app, defer, workers, log)))
            a = workers.start()
            first = await defer.defer_async()
            if _wait_for(log, a.pid, "start", first) is None:
                say(f"SAW: worker A never started job {first}")
                return [*results, ("pause", False), ("kill", False)]
            os.killpg(a.pid, signal.SIGSTOP)
            stopped = time.time()
            b = workers.start()
            b_start = await asyncio.to_thread(_wait_for, log, b.pid, "start", first)
            say(
                f"SAW: A (pid {a.pid}) stopped at once after starting job {first}; "
                + (f"B (pid {b.pid}) started it {b_start - stopped:.1f} s later" if b_start else "B never started it")
            )
            await asyncio.sleep(max(0.0, PAUSE_S - (time.time() - stopped)))
            os.killpg(a.pid, signal.SIGCONT)
            a_end = await asyncio.to_thread(_wait_for, log, a.pid, "end", first)
            await asyncio.sleep(0.3)
            row = await _row(app, first)
            b_end = await asyncio.to_thread(_wait_for, log, b.pid, "end", first) if b_start else None
            b_running = a_end is not None and b_end is not None and b_end > a_end + 0.3
            say(
                f"SAW: A continued after {PAUSE_S:.0f} s and ended job {first}: {a_end is not None}; the job's row "
                f"then: status {row['status'] if row else 'gone'}, worker_id {row['worker_id'] if row else None}; "
                f"B still running it then: {b_running}"
            )
            succeeded = row is not None and row["status"] == "succeeded"
            results.append(("pause", b_start is not None and succeeded and b_running))
            for done in (a, b):  # both have ended job 1: only C may take the next job
                os.killpg(done.pid, signal.SIGKILL)
            c = workers.start()
            second = await defer.defer_async()
            if await asyncio.to_thread(_wait_for, log, c.pid, "start", second) is None:
                say(f"SAW: worker C never started job {second}: the kill case did not run")
                results.append(("kill", False))
                return results
            os.killpg(c.pid, signal.SIGKILL)
            killed = time.time()
            d = workers.start()
            d_start = await asyncio.to_thread(_wait_for, log, d.pid, "start", second)
            d_end = await asyncio.to_thread(_wait_for, log, d.pid, "end", second) if d_start else None
            await asyncio.sleep(0.3)
            left = await _row(app, second)
            say(
                f"SAW: C (pid {c.pid}) killed (SIGKILL) while running job {second}; "
                + (f"worker D started it {d_start - killed:.1f} s after the kill" if d_start else "no worker took it")
                + f"; D completed it: {d_end is not None}; its row then: status {left['status'] if left else 'gone'}"
            )
            results.append(("kill", d_start is not None and left is not None and left["status"] == "succeeded"))
            return results
        finally:
            stop.set()
            await recovery


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "procrastinate_pause", scenarios, worker))
