"""procrastinate 3.10.0's periodic tasks with two workers, one of them paused: ticks deferred twice.

``python ecosystem/procrastinate/runner/reproduce_periodic.py [DSN]`` (DSN defaults to ``$ALKSTORE_PG_DSN``). It
needs procrastinate only (nothing of alkstore; ``../adapter/procrastinate_repro.py``, which it imports, holds what
procrastinate's reproductions share): its tables go into a schema of their own (the connector's ``search_path``),
made with ``apply_schema_async`` and dropped at the end.

Two worker processes run ``App.run_worker_async`` on an app with one periodic task every second
(``@app.periodic(cron="* * * * * *")``, the cron how-to's sixth column), each logging the ``timestamp`` it runs.
The cron how-to says "the database is responsible for making sure deferring only happens once per period, even
with multiple workers". Worker A is stopped (SIGSTOP: a GC pause, a frozen VM) for 5 s while B goes on, then
continued. A's deferrer resumes from the last tick it deferred and defers every tick since; B had deferred them,
but ``procrastinate_defer_periodic_job_v2`` deletes a task's older rows of ``procrastinate_periodic_defers`` when
it stores a newer one, so nothing stops A's late defers, and those ticks run a second time.

Prints one ``SAW:`` line and ``REPRODUCED``/``NOT REPRODUCED``; exits 0 when a tick ran twice, 1 otherwise.
Every process it starts is killed on the way out.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapter"))  # procrastinate_repro.py
from procrastinate_repro import app_on, main, running, say

PAUSE_S = 5.0
AFTER_S = 6.0


def worker(dsn: str, schema: str, log: str) -> None:
    """One procrastinate worker process whose periodic task logs the tick it runs."""
    app = app_on(dsn, schema)

    @app.periodic(cron="* * * * * *")
    @app.task(name="tick", queue="repro")
    def tick(timestamp: int) -> None:
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {timestamp}\n")

    async def run() -> None:
        async with app.open_async():
            await app.run_worker_async(queues=["repro"], concurrency=1)

    asyncio.run(run())


def _runs(log: Path) -> list[tuple[int, int]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [(int(pid), int(timestamp)) for pid, timestamp in (line.split() for line in lines)]


def _wait_for_runs(log: Path, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(_runs(log)) < count and time.monotonic() < deadline:
        time.sleep(0.2)


async def scenarios(dsn: str, schema: str, log: Path) -> list[tuple[str, bool]]:
    async with running(__file__, dsn, schema, log) as (_, workers):
        a = workers.start()
        workers.start()  # B, which goes on deferring the ticks while A is stopped
        await asyncio.to_thread(_wait_for_runs, log, 3)
        os.killpg(a.pid, signal.SIGSTOP)
        await asyncio.sleep(PAUSE_S)
        os.killpg(a.pid, signal.SIGCONT)
        await asyncio.sleep(AFTER_S)
        twice = {ts: n for ts, n in collections.Counter(ts for _, ts in _runs(log)).items() if n > 1}
        say(
            f"SAW: {len(_runs(log))} runs of {len({ts for _, ts in _runs(log)})} ticks; A (pid {a.pid}) stopped "
            f"{PAUSE_S:.0f} s and continued; ticks run more than once: {sorted(twice.items())}"
        )
        return [("a paused worker's periodic ticks run twice", bool(twice))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "procrastinate_periodic", scenarios, worker))
