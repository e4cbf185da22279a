"""saq 0.26.4 on Redis: a job a worker is running, swept by that worker's start-up sweep, is lost when the worker dies.

Standalone: saq and a ``redis-server`` on PATH, nothing of alkstore. saq's README promises a "Heartbeat monitor for
abandoned jobs" and "Sweeping stuck jobs": a job with a ``heartbeat`` whose worker stops beating is swept and,
while ``retries`` remain, retried. A worker's sweep also runs the moment the worker starts, beside its first
dequeue. The dequeue moves the job's id to the active list before the worker stores the job as ``active``; a sweep
that reads it in that window finds a job "not active" and aborts it, which takes its id out of the active list, the
only list a sweep reads. If the worker dies then (``kill -9``), before the sweep retries the job, nothing will ever
run it again: saq holds it ``active`` or ``aborting``, out of every list, and a second worker's sweeps pass it by.

Each attempt: a throwaway redis-server, one job (heartbeat 5 s, retries 3, beaten every second while it runs),
worker A (``saq settings.settings``) started and killed with SIGKILL as soon as saq stores the job as running;
then, if the job's id is no longer in the active list, worker B runs for longer than heartbeat + sweep period +
abort wait, and the job is read again. Prints ``REPRODUCED: ...`` when it is still held and out of every list, else
``NOT REPRODUCED: ...`` after the last attempt (the window is a race; it is hit in most attempts here).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from importlib.metadata import version
from pathlib import Path
from typing import cast

from saq import Queue
from saq.queue.redis import RedisQueue

ATTEMPTS = 15
HEARTBEAT_S = 5
SWEEP_S = 5
ABORT_WAIT_S = 5  # Queue.sweep(abort=5.0): how long a sweep waits for an aborted job's worker
SETTINGS = """
import asyncio
from saq import Queue

queue = Queue.from_url({url!r}, name="repro")


async def work(ctx):
    job = ctx["job"]
    for _ in range(30):  # the heartbeat saq's Job documents: await job.update()
        await asyncio.sleep(1)
        await job.update()


settings = {{"queue": queue, "functions": [work], "concurrency": 1, "timers": {{"sweep": {sweep}}}}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    log = open(cwd / f"{argv[-1]}-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115 - kept for the process's life
    return subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=log, start_new_session=True)


async def listed(queue: RedisQueue, key: str) -> list[str]:
    """The ids in one of saq's Redis lists (the asyncio client's ``lrange``, typed for both clients)."""
    items = await cast("Awaitable[list[bytes]]", queue.redis.lrange(key, 0, -1))
    return [item.decode() for item in items]


def kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


async def attempt(base: Path) -> str | None:
    """One attempt; the finding, or None when worker A died outside the window."""
    port = free_port()
    redis = start(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(base)], base)
    workers: list[subprocess.Popen[bytes]] = []
    queue = Queue.from_url(f"redis://127.0.0.1:{port}/0", name="repro")
    assert isinstance(queue, RedisQueue)  # its active and queued lists are what a sweep and a dequeue read
    try:
        (base / "settings.py").write_text(SETTINGS.format(url=f"redis://127.0.0.1:{port}/0", sweep=SWEEP_S))
        for _ in range(100):
            try:
                await queue.connect()
                await queue.redis.ping()
                break
            except Exception:
                await asyncio.sleep(0.1)
        await queue.enqueue("work", key="j1", heartbeat=HEARTBEAT_S, retries=3, timeout=60)
        workers.append(start([sys.executable, "-m", "saq", "settings.settings"], base))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            job = await queue.job("j1")
            if job is not None and job.status.value in ("active", "aborting"):
                break
            await asyncio.sleep(0.01)
        kill(workers[0])
        active = await listed(queue, queue._active)
        job = await queue.job("j1")
        assert job is not None
        if job.id in active:
            return None  # not swept: the second worker's sweep will retry it, as documented
        workers.append(start([sys.executable, "-m", "saq", "settings.settings"], base))
        await asyncio.sleep(HEARTBEAT_S + SWEEP_S + ABORT_WAIT_S + 5)
        job = await queue.job("j1")
        assert job is not None
        active = await listed(queue, queue._active)
        queued = await listed(queue, queue._queued)
        status = job.status.value
        if status in ("active", "aborting") and job.id not in active and job.id not in queued:
            waited = HEARTBEAT_S + SWEEP_S + ABORT_WAIT_S + 5
            return (
                f"job j1 is still {status!r} (attempts {job.attempts}, error {job.error!r}) {waited} s "
                f"after its worker was killed, in neither the active nor the queued list: a second worker's sweeps "
                f"never retried it"
            )
        return f"NOT LOST: job j1 is {status!r} (attempts {job.attempts})"
    finally:
        for worker in workers:
            kill(worker)
        await queue.disconnect()
        kill(redis)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main() -> int:
    for number in range(1, ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="saq-repro.") as base:
            found = await attempt(Path(base))
        if found is None:
            say(f"attempt {number}: worker A was killed outside the start-up sweep's window; again")
            continue
        if found.startswith("NOT LOST"):
            say(f"attempt {number}: {found}; again")
            continue
        say(f"REPRODUCED: saq {version('saq')}, attempt {number}: {found}")
        return 0
    say(f"NOT REPRODUCED: in {ATTEMPTS} attempts no job was left out of saq's lists")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
