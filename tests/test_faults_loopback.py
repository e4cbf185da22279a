"""The throwaway servers the faults harness starts listen on loopback only (issue 48.8).

Each broker (Redis, a RabbitMQ node, beanstalkd, a Postgres cluster) is started as the
harness starts it; then every listening TCP socket held by its process tree
— and, for RabbitMQ, by the epmd on its private port, which daemonizes out of
the tree — is read from ``/proc/net/tcp{,6}`` and each process's open file
descriptors. None may be on another address than 127.0.0.1/::1, and the ports
the broker is known to open (RabbitMQ: AMQP, the Erlang distribution port,
epmd) must be among them, so a check that found no socket cannot pass.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shutil
import socket
import struct
from pathlib import Path

import pytest
from alkstore_postgres.provision import server_bindir

from alkstore_faults.brokers import BeanstalkBroker, PostgresBroker, RabbitBroker, RedisBroker, start_broker

LISTEN = "0A"


def _address(hex_address: str) -> str:
    """``/proc/net/tcp``'s hex address (little-endian 32-bit words) as text."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(struct.pack("<I", struct.unpack(">I", raw[i : i + 4])[0]) for i in range(0, len(raw), 4))
    return socket.inet_ntop(socket.AF_INET if len(words) == 4 else socket.AF_INET6, words)


def _listening_sockets() -> dict[int, tuple[str, int]]:
    """Every listening TCP socket on the machine: its inode → (address, port)."""
    found: dict[int, tuple[str, int]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], int(fields[9])
            if state == LISTEN:
                address, port = local.split(":")
                found[inode] = (_address(address), int(port, 16))
    return found


def _tree(root: int) -> set[int]:
    """``root`` and every process descending from it."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def _socket_inodes(pids: set[int]) -> set[int]:
    inodes: set[int] = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
        except OSError:
            continue
    return inodes


def _opened(root: int, also_ports: set[int]) -> list[tuple[str, int]]:
    """The listening sockets of ``root``'s tree, and any on ``also_ports`` (a daemon that left the tree)."""
    listening = _listening_sockets()
    mine = _socket_inodes(_tree(root))
    return sorted({where for inode, where in listening.items() if inode in mine or where[1] in also_ports})


def _is_loopback(address: str) -> bool:
    parsed = ipaddress.ip_address(address)
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return parsed.is_loopback


def _require(kind: str) -> None:
    """Skip when this machine cannot start the broker (a failure under CI or ALKSTORE_REQUIRE=1)."""
    missing: str | None = None
    if kind == "postgres":
        try:
            server_bindir()
        except RuntimeError as exc:
            missing = str(exc)
    elif kind == "redis" and shutil.which("redis-server") is None:
        missing = "redis-server is not installed"
    elif kind == "amqp" and shutil.which("rabbitmq-server") is None:
        missing = "rabbitmq-server is not installed"
    elif kind == "beanstalkd" and shutil.which("beanstalkd") is None:
        # Only the full faults matrix installs it (ci/faults.sh install), never CI's test command: a visible skip.
        if os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail("required here (ALKSTORE_REQUIRE=1): beanstalkd is not installed (apt-get install beanstalkd)")
        pytest.skip("beanstalkd is not installed (apt-get install beanstalkd; ci/faults.sh install does)")
    if missing is None:
        return
    if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
        pytest.fail(f"required here (CI or ALKSTORE_REQUIRE=1): {missing}")
    pytest.skip(missing)


@pytest.mark.parametrize("kind", ["redis", "amqp", "beanstalkd", "postgres"])
def test_every_socket_a_throwaway_broker_listens_on_is_on_loopback(kind: str) -> None:
    _require(kind)

    left: list[int] = []

    async def body() -> list[tuple[str, int]]:
        broker = await start_broker(kind)
        if isinstance(broker, RabbitBroker):
            left.append(broker.epmd_port)
        try:
            if isinstance(broker, RabbitBroker):
                assert broker._process is not None
                opened = _opened(broker._process.pid, {broker.epmd_port})
                expected = {broker.port, broker.dist_port, broker.epmd_port}
            elif isinstance(broker, RedisBroker | BeanstalkBroker):
                assert broker._process is not None
                opened = _opened(broker._process.pid, set())
                expected = {broker.port}
            else:
                assert isinstance(broker, PostgresBroker)
                assert broker._cluster is not None
                assert broker._cluster._process is not None
                opened = _opened(broker._cluster._process.pid, set())
                expected = {broker.port}
            ports = {port for _address, port in opened}
            assert expected <= ports, f"{kind}: expected listening ports {expected}, found {opened}"
            return opened
        finally:
            await broker.close()

    opened = asyncio.run(body())
    still = {port for _address, port in _listening_sockets().values()} & set(left)
    assert not still, f"the node's own epmd still listens on {still} after close"
    elsewhere = [(address, port) for address, port in opened if not _is_loopback(address)]
    assert elsewhere == [], f"the throwaway {kind} listens beyond loopback: {elsewhere} (all: {opened})"


async def _beanstalk(port: int, command: bytes) -> bytes:
    """One command of beanstalkd's protocol, its first reply line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(command)
        await writer.drain()
        return await asyncio.wait_for(reader.readline(), 5)
    finally:
        writer.close()
        await writer.wait_closed()


@pytest.mark.parametrize(("binlog", "after"), [(True, b"OK "), (False, b"NOT_FOUND")])
def test_beanstalkd_keeps_a_job_across_a_crash_with_its_binlog_and_forgets_it_without(
    binlog: bool, after: bytes
) -> None:
    """The binlog mode is ``broker_restart_aof``'s beanstalkd, the other ``broker_restart_volatile``'s."""
    _require("beanstalkd")

    async def body() -> tuple[bytes, bytes]:
        broker = await start_broker("beanstalkd", aof=binlog)
        assert isinstance(broker, BeanstalkBroker)
        assert broker.port is not None
        try:
            assert broker.address == f"beanstalk://127.0.0.1:{broker.port}"
            put = await _beanstalk(broker.port, b"put 0 0 5 3\r\nabc\r\n")
            assert put.startswith(b"INSERTED "), put
            job = put.split()[1]
            await broker.crash_and_restart(0.2)
            return await _beanstalk(broker.port, b"stats-job " + job + b"\r\n"), job
        finally:
            await broker.close()

    reply, job = asyncio.run(body())
    assert reply.startswith(after), f"job {job!r} after a crash with binlog={binlog}: {reply!r}"
