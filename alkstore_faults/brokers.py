"""Throwaway brokers the harness starts, crashes and restarts: never the machine's shared servers.

Redis: a ``redis-server`` of our own on a free port, in a directory of its own, in a process group of its own,
with AOF (``appendfsync always``: an acknowledged write is on disk) or with no persistence at all (a restart
forgets everything). Postgres: a cluster of ``engines_under_test/alkstore_postgres/throwaway.py``. ``dir``: a
scratch directory, for a runtime that keeps its queue in a file. Each is removed by ``close``, and every server
still running when the process exits is killed there.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Protocol

START_TIMEOUT_S = 20.0
_RUNNING: set[subprocess.Popen[bytes]] = set()


class Broker(Protocol):
    """What the harness needs of a broker: its address, a crash with a restart, and its removal."""

    @property
    def address(self) -> str: ...

    @property
    def port(self) -> int | None: ...

    async def crash_and_restart(self, down_s: float) -> None: ...

    async def close(self) -> None: ...


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisBroker:
    """A throwaway ``redis-server``; ``aof`` makes every acknowledged write durable across a crash."""

    def __init__(self, aof: bool) -> None:
        self.aof = aof
        self._port = free_port()
        self.base = Path(tempfile.mkdtemp(prefix="alkstore-faults-redis."))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"redis://127.0.0.1:{self._port}/0"

    @property
    def port(self) -> int | None:
        return self._port

    def _argv(self) -> list[str]:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not on PATH: the runtime-faults mode needs it for a Redis library")
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.aof else ["--appendonly", "no"]
        return [
            binary,
            "--port",
            str(self._port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--dir",
            str(self.base),
            "--daemonize",
            "no",
            "--logfile",
            str(self.base / "redis.log"),
            *persistence,
        ]

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self._argv(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    async def start(self) -> None:
        self._process = await asyncio.to_thread(self._spawn)
        _RUNNING.add(self._process)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT_S
        while not await _answers_ping(self._port):
            if self._process.poll() is not None or loop.time() > deadline:
                log = (
                    (self.base / "redis.log").read_text(errors="replace")[-1500:]
                    if (self.base / "redis.log").exists()
                    else "(no log)"
                )
                raise RuntimeError(f"the throwaway redis-server on port {self._port} did not answer: {log}")
            await asyncio.sleep(0.05)

    async def kill(self) -> None:
        process = self._process
        if process is None:
            return
        _kill_group(process)
        await asyncio.to_thread(process.wait, 10)
        _RUNNING.discard(process)
        self._process = None

    async def crash_and_restart(self, down_s: float) -> None:
        await self.kill()
        await asyncio.sleep(down_s)
        await self.start()

    async def close(self) -> None:
        await self.kill()
        await asyncio.to_thread(shutil.rmtree, self.base, True)


async def _answers_ping(port: int) -> bool:
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 1)
    except (OSError, TimeoutError):
        return False
    try:
        writer.write(b"PING\r\n")
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), 1)).startswith(b"+PONG")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


class DirBroker:
    """A scratch directory for a runtime over a file: it cannot crash apart from its workers."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="alkstore-faults-dir."))

    @property
    def address(self) -> str:
        return str(self.base)

    @property
    def port(self) -> int | None:
        return None

    async def crash_and_restart(self, down_s: float) -> None:
        raise RuntimeError("a dir broker has no server to crash")

    async def close(self) -> None:
        await asyncio.to_thread(shutil.rmtree, self.base, True)


class PostgresBroker:
    """A throwaway Postgres cluster; its crash is a ``SIGKILL`` of the postmaster's group, then recovery."""

    def __init__(self) -> None:
        from alkstore_postgres.throwaway import ThrowawayCluster

        self._cluster: ThrowawayCluster | None = None

    async def start(self) -> None:
        from alkstore_postgres.throwaway import ThrowawayCluster

        self._cluster = await ThrowawayCluster.create()

    @property
    def address(self) -> str:
        assert self._cluster is not None
        return self._cluster.dsn

    @property
    def port(self) -> int | None:
        assert self._cluster is not None
        return self._cluster.port

    async def crash_and_restart(self, down_s: float) -> None:
        assert self._cluster is not None
        await self._cluster.kill()
        await asyncio.sleep(down_s)
        await self._cluster.start()

    async def close(self) -> None:
        if self._cluster is not None:
            await self._cluster.destroy()


async def start_broker(kind: str, *, aof: bool = False) -> RedisBroker | DirBroker | PostgresBroker:
    """A fresh broker of ``kind`` (a manifest's ``broker``), started; nothing is left behind if it fails to start."""
    broker: RedisBroker | DirBroker | PostgresBroker
    if kind == "redis":
        broker = RedisBroker(aof)
        try:
            await broker.start()
        except BaseException:
            await broker.close()
            raise
        return broker
    if kind == "postgres":
        broker = PostgresBroker()
        await broker.start()
        return broker
    return DirBroker()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


@atexit.register
def _kill_leftovers() -> None:
    """A harness that ends without closing its brokers leaves no server running."""
    for process in list(_RUNNING):
        _kill_group(process)
