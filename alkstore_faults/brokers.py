"""Throwaway brokers the harness starts, crashes and restarts: never the machine's shared servers.

Redis: a ``redis-server`` of our own on a free port, in a directory and a process group of its own, with AOF
(``appendfsync always``: an acknowledged write is on disk) or with no persistence at all (a restart forgets
everything). RabbitMQ: a node of our own (``RabbitBroker``), its durable queues kept across a crash. Postgres: a
cluster of ``alkstore_postgres.provision``. beanstalkd: a ``beanstalkd`` of our own on a free port, with a binlog
synced on every write (``-b DIR -f 0``, Redis's AOF counterpart) or with none. ``dir``: a scratch directory, for a
runtime that keeps its queue in a file. Each is removed by ``close``, and every server still running when the process
exits is killed there."""

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

from alkstore_postgres.provision import ThrowawayCluster

from alkstore_faults.process_trees import signal_tree

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


class _OwnServer:
    """A server process of our own on a port of loopback, in a scratch directory ``base``.

    ``start`` spawns it (the subclass's ``_argv`` and ``_env``) and waits until it answers;
    a crash is ``SIGKILL`` of its tree; ``close`` kills it and removes ``base``.
    """

    what = ""
    """The server in a message: ``the throwaway {what} on port N did not answer``."""
    url = ""
    """Its address, ``{port}`` standing for its port: what a library connects to."""
    start_timeout_s = START_TIMEOUT_S
    poll_s = 0.05
    log_name = ""
    """The file in ``base`` that takes the server's output: its tail is what a failed start shows."""

    def __init__(self, kind: str) -> None:
        self._port = free_port()
        self.base = Path(tempfile.mkdtemp(prefix=f"alkstore-faults-{kind}."))
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return self.url.format(port=self._port)

    @property
    def port(self) -> int | None:
        return self._port

    def _argv(self) -> list[str]:
        """The server's command line; a ``RuntimeError`` when its program is not installed."""
        raise NotImplementedError

    def _env(self) -> dict[str, str] | None:
        """The server's environment: ``None``, this process's."""
        return None

    def _spawn(self) -> subprocess.Popen[bytes]:
        """The server started in ``base``, in a process group of its own (a crash kills its tree), its output
        appended to ``log_name``."""
        argv, env = self._argv(), self._env()
        with open(self.base / self.log_name, "ab") as log:
            return subprocess.Popen(
                argv, env=env, cwd=self.base, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )

    async def _answers(self) -> bool:
        """Whether the server is up: it takes a connection, and answers as the subclass checks."""
        return await _answers_on(self._port)

    async def start(self) -> None:
        self._process = await asyncio.to_thread(self._spawn)
        _RUNNING.add(self._process)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.start_timeout_s
        while not await self._answers():
            if self._process.poll() is not None or loop.time() > deadline:
                log = self.base / self.log_name
                tail = log.read_text(errors="replace")[-1500:] if log.exists() else "(no log)"
                raise RuntimeError(f"the throwaway {self.what} on port {self._port} did not answer: {tail}")
            await asyncio.sleep(self.poll_s)

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


class _ProgramServer(_OwnServer):
    """A server whose program (``what``) is on PATH, with its write-ahead log synced on every write (``durable``:
    a crash forgets nothing acknowledged) or with none (a crash forgets everything): Redis's AOF, beanstalkd's
    binlog. Its output goes to ``{what}.log``."""

    def __init__(self, durable: bool) -> None:
        super().__init__(self.what)
        self.durable = durable
        self.log_name = f"{self.what}.log"

    def _program(self) -> str:
        """The program's path: a missing one is a ``RuntimeError`` naming the package that brings it."""
        binary = shutil.which(self.what)
        if binary is None:
            raise RuntimeError(
                f"{self.what} is not on PATH: the runtime-faults mode needs it (apt-get install {self.what})"
            )
        return binary


class RedisBroker(_ProgramServer):
    """A throwaway ``redis-server``; ``durable`` turns on AOF with ``appendfsync always``."""

    what = "redis-server"
    url = "redis://127.0.0.1:{port}/0"

    def _argv(self) -> list[str]:
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable else ["--appendonly", "no"]
        return [
            self._program(),
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
            *persistence,
        ]

    async def _answers(self) -> bool:
        """A ``PING`` answered ``+PONG``: the server takes commands, not only connections."""
        return await _answers_on(self._port, b"PING\r\n", b"+PONG")


class BeanstalkBroker(_ProgramServer):
    """A throwaway ``beanstalkd``; ``durable`` keeps its jobs in a binlog fsynced on every write (``-f 0``)."""

    what = "beanstalkd"
    url = "beanstalk://127.0.0.1:{port}"

    def __init__(self, durable: bool) -> None:
        super().__init__(durable)
        self.binlog = self.base / "binlog"
        if durable:
            self.binlog.mkdir()

    def _argv(self) -> list[str]:
        persistence = ["-b", str(self.binlog), "-f", "0"] if self.durable else []
        return [self._program(), "-l", "127.0.0.1", "-p", str(self._port), *persistence]

    async def _answers(self) -> bool:
        """A ``stats`` answered ``OK <bytes>``: the server takes commands, not only connections."""
        return await _answers_on(self._port, b"stats\r\n", b"OK ")


async def _answers_on(port: int, hello: bytes = b"", reply: bytes = b"") -> bool:
    """Whether a server takes a connection on ``port`` of loopback and, sent ``hello``, answers a line ``reply…``."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 1)
    except (OSError, TimeoutError):
        return False
    try:
        if not hello:
            return True
        writer.write(hello)
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), 1)).startswith(reply)
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


RABBITMQ_START_TIMEOUT_S = 90.0
EPMD_STOP_TIMEOUT_S = 10.0


class RabbitBroker(_OwnServer):
    """A throwaway RabbitMQ node: its own name, ports, data and log directories, no plugins, on loopback only.

    Every port it opens listens on 127.0.0.1: AMQP (``listeners.tcp.default``), the Erlang distribution port
    (``RABBITMQ_DIST_PORT``, bound by ``inet_dist_use_interface``), and an ``epmd`` of its own on a free port
    (``ERL_EPMD_PORT``, ``ERL_EPMD_ADDRESS``), which the node starts and ``close`` stops (``epmd -kill``): the
    machine's own epmd, if one runs, is neither used nor touched.
    """

    what = "RabbitMQ node"
    url = "amqp://guest:guest@127.0.0.1:{port}//"
    start_timeout_s = RABBITMQ_START_TIMEOUT_S
    poll_s = 0.2
    log_name = "server.log"

    def __init__(self) -> None:
        super().__init__("rabbitmq")
        self.dist_port = free_port()
        self.epmd_port = free_port()
        (self.base / "enabled_plugins").write_text("[].\n", encoding="utf-8")
        (self.base / "rabbitmq-env.conf").write_text("", encoding="utf-8")
        (self.base / "rabbitmq.conf").write_text(
            f"loopback_users = none\nlisteners.tcp.default = 127.0.0.1:{self._port}\n", encoding="utf-8"
        )

    def _argv(self) -> list[str]:
        # Debian's /usr/sbin/rabbitmq-server drops root to the rabbitmq user, who cannot write our directory;
        # the script it wraps runs the node as the caller.
        wrapped = Path("/usr/lib/rabbitmq/bin/rabbitmq-server")
        binary = str(wrapped) if wrapped.exists() else shutil.which("rabbitmq-server") or str(wrapped)
        if not Path(binary).exists():
            raise RuntimeError("rabbitmq-server is not installed: the runtime-faults mode needs it for an AMQP library")
        return [binary]

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "HOME": str(self.base),
            "RABBITMQ_NODENAME": f"alkstore{self._port}@localhost",
            "RABBITMQ_NODE_PORT": str(self._port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
            "ERL_EPMD_PORT": str(self.epmd_port),
            "ERL_EPMD_ADDRESS": "127.0.0.1",
            "RABBITMQ_MNESIA_BASE": str(self.base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.base / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.base / "enabled_plugins"),
            "RABBITMQ_CONFIG_FILE": str(self.base / "rabbitmq.conf"),
            "RABBITMQ_PID_FILE": str(self.base / "pid"),
            # the machine's rabbitmq-env.conf is not read: the node is configured by this environment alone
            "RABBITMQ_CONF_ENV_FILE": str(self.base / "rabbitmq-env.conf"),
        }

    async def close(self) -> None:
        await self.kill()
        await self._stop_epmd()
        await super().close()

    async def _stop_epmd(self) -> None:
        """Stop the node's own epmd; it refuses while it still lists the killed node, which it drops in a moment."""
        if not shutil.which("epmd"):
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EPMD_STOP_TIMEOUT_S
        while True:
            done = await asyncio.to_thread(
                subprocess.run,
                ["epmd", "-port", str(self.epmd_port), "-kill"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            if "not allowed" not in done.stdout + done.stderr or loop.time() > deadline:
                return
            await asyncio.sleep(0.1)


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
        self._cluster: ThrowawayCluster | None = None

    async def start(self) -> None:
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


async def start_broker(
    kind: str, *, aof: bool = False
) -> RedisBroker | RabbitBroker | BeanstalkBroker | DirBroker | PostgresBroker:
    """A fresh broker of ``kind`` (a manifest's ``broker``), started; nothing is left behind if it fails to start.
    ``aof``: the broker's write-ahead log synced on every write (Redis's AOF, beanstalkd's binlog)."""
    broker: RedisBroker | RabbitBroker | BeanstalkBroker | DirBroker | PostgresBroker
    if kind in ("redis", "amqp", "beanstalkd"):
        server: RedisBroker | RabbitBroker | BeanstalkBroker = (
            RedisBroker(aof) if kind == "redis" else BeanstalkBroker(aof) if kind == "beanstalkd" else RabbitBroker()
        )
        try:
            await server.start()
        except BaseException:
            await server.close()
            raise
        return server
    if kind == "postgres":
        broker = PostgresBroker()
        await broker.start()
        return broker
    return DirBroker()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    signal_tree(process.pid, signal.SIGKILL)


@atexit.register
def _kill_leftovers() -> None:
    """A harness that ends without closing its brokers leaves no server running."""
    for process in list(_RUNNING):
        _kill_group(process)
