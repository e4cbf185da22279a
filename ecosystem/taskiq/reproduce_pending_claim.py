"""taskiq 0.13 with taskiq-redis 1.2.4's RedisStreamBroker: a killed worker's task waits for the next new message.

Standalone: taskiq, taskiq-redis and a ``redis-server`` on PATH, nothing of alkstore. taskiq-redis's README says its
stream broker "**supports** acknowledgements and therefore is fine to use in cases when data durability is
required": a message a worker read and never acknowledged stays in the consumer group's pending list, and a worker
claims it (``XAUTOCLAIM``) once it has been idle ``idle_timeout``. The claim runs in the broker's ``listen`` loop
only after an ``XREADGROUP`` that returned new messages, so a task whose worker was killed waits, past its idle
timeout, until someone sends another task.

One throwaway redis-server; a task kicked; worker A (``taskiq worker``) killed with SIGKILL as soon as the task
starts; worker B started; after four idle timeouts the task has not started again (``REPRODUCED``, with the
pending entry's idle time); then a second task is kicked and the first starts again within seconds (printed).
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
from typing import Any, cast

IDLE_TIMEOUT_MS = 2000
MODULE = """
import asyncio
import os

from taskiq_redis import RedisStreamBroker

broker = RedisStreamBroker(url={url!r}, queue_name="repro", idle_timeout={idle})


@broker.task(task_name="work")
async def work(name: str, seconds: float) -> None:
    open(os.path.join({base!r}, f"start-{{name}}-{{os.getpid()}}"), "w").close()
    await asyncio.sleep(seconds)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(argv: list[str], cwd: Path, log: str) -> subprocess.Popen[bytes]:
    with open(cwd / log, "ab") as out:
        return subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=out, start_new_session=True)


def kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def starts(base: Path, name: str) -> list[str]:
    return sorted(path.name for path in base.glob(f"start-{name}-*"))


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def wait_for(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return False


async def run(base: Path) -> int:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    redis_server = start(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(base)],
        base,
        "redis.log",
    )
    workers: list[subprocess.Popen[bytes]] = []
    try:
        (base / "repro_broker.py").write_text(MODULE.format(url=url, idle=IDLE_TIMEOUT_MS, base=str(base)))
        sys.path.insert(0, str(base))
        from redis.asyncio import Redis
        from repro_broker import broker, work  # type: ignore[import-not-found]

        redis = Redis.from_url(url)
        for _ in range(100):
            with contextlib.suppress(Exception):
                await redis.ping()
                break
            await asyncio.sleep(0.1)
        await broker.startup()
        await work.kiq("first", 60)
        worker = [sys.executable, "-m", "taskiq", "worker", "repro_broker:broker", "--workers", "1"]
        workers.append(start(worker, base, "worker-a.log"))
        if not await wait_for(lambda: starts(base, "first"), 30):
            say("NOT REPRODUCED: worker A never started the task")
            return 1
        kill(workers[0])
        workers.append(start(worker, base, "worker-b.log"))
        await asyncio.sleep(4 * IDLE_TIMEOUT_MS / 1000 + 2)
        pending = await cast("Awaitable[list[dict[str, Any]]]", redis.xpending_range("repro", "taskiq", "-", "+", 10))
        idle = [row["time_since_delivered"] / 1000 for row in pending]
        if len(starts(base, "first")) == 1 and idle and idle[0] > IDLE_TIMEOUT_MS / 1000:
            say(
                f"REPRODUCED: taskiq {version('taskiq')}, taskiq-redis {version('taskiq-redis')}: the killed worker's "
                f"task is still pending, idle {idle[0]:.1f} s, past its idle_timeout of {IDLE_TIMEOUT_MS / 1000:g} s, "
                f"and no worker started it again: worker B claims nothing while no new message arrives"
            )
        else:
            say(f"NOT REPRODUCED: starts {starts(base, 'first')}, pending idle {idle}")
            return 0
        await work.kiq("second", 0.1)
        again = await wait_for(lambda: len(starts(base, "first")) > 1, 4 * IDLE_TIMEOUT_MS / 1000)
        say(f"after a second task was sent, the first {'started again' if again else 'still did not start'}")
        await broker.shutdown()
        await redis.aclose()
        return 0
    finally:
        for process in workers:
            kill(process)
        kill(redis_server)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="taskiq-repro.") as base:
        return asyncio.run(run(Path(base)))


if __name__ == "__main__":
    sys.exit(main())
