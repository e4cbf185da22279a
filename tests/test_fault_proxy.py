"""The fault proxy against a tiny echo server: it forwards, and each fault does what it says and is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from alkstore_contract.suite.fault_proxy import FaultProxy

SHORT_S = 0.3
"""Long enough that a forwarded echo (well under a millisecond here) would have come back."""


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


@pytest_asyncio.fixture
async def proxy() -> AsyncIterator[FaultProxy]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()[:2]
    async with FaultProxy(host, port) as running:
        yield running
    server.close()
    await server.wait_closed()


async def _connect(proxy: FaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(*proxy.address)


async def _roundtrip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> bytes:
    writer.write(data)
    await writer.drain()
    return await asyncio.wait_for(reader.readexactly(len(data)), 2)


@pytest.mark.asyncio
async def test_forwards_both_ways(proxy: FaultProxy) -> None:
    reader, writer = await _connect(proxy)
    assert await _roundtrip(reader, writer, b"hello") == b"hello"
    assert proxy.open_connections == 1
    assert proxy.faults == []
    writer.close()


@pytest.mark.asyncio
async def test_reset_aborts_open_connections_and_new_ones_work(proxy: FaultProxy) -> None:
    reader, writer = await _connect(proxy)
    await _roundtrip(reader, writer, b"a")
    assert proxy.reset() == 1
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        await _roundtrip(reader, writer, b"b")
    reader2, writer2 = await _connect(proxy)
    assert await _roundtrip(reader2, writer2, b"c") == b"c"
    [fault] = proxy.faults
    assert fault.kind == "reset"
    assert fault.ended_at == fault.started_at
    writer2.close()


@pytest.mark.asyncio
async def test_stall_holds_bytes_and_delivers_them_after(proxy: FaultProxy) -> None:
    reader, writer = await _connect(proxy)
    await _roundtrip(reader, writer, b"x")
    async with proxy.stalled() as fault:
        writer.write(b"held")
        await writer.drain()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(reader.readexactly(4), SHORT_S)
        assert proxy.open_connections == 1, "a stall keeps the sockets open"
        late_reader, late_writer = await _connect(proxy)
        late_writer.write(b"late")
        await late_writer.drain()
    assert await asyncio.wait_for(reader.readexactly(4), 2) == b"held"
    assert await asyncio.wait_for(late_reader.readexactly(4), 2) == b"late"
    assert fault.kind == "stall"
    assert fault.ended_at is not None
    assert (fault.ended_at - fault.started_at).total_seconds() >= SHORT_S
    writer.close()
    late_writer.close()


@pytest.mark.asyncio
async def test_refusing_closes_new_connections_only(proxy: FaultProxy) -> None:
    reader, writer = await _connect(proxy)
    async with proxy.refusing():
        refused_reader, _ = await _connect(proxy)
        with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
            await asyncio.wait_for(refused_reader.readexactly(1), 2)
        assert await _roundtrip(reader, writer, b"still") == b"still"
    reader2, writer2 = await _connect(proxy)
    assert await _roundtrip(reader2, writer2, b"ok") == b"ok"
    assert [f.kind for f in proxy.faults] == ["refuse"]
    writer.close()
    writer2.close()


@pytest.mark.asyncio
async def test_latency_delays_each_chunk(proxy: FaultProxy) -> None:
    reader, writer = await _connect(proxy)
    loop = asyncio.get_running_loop()
    async with proxy.delayed(0.1):
        started = loop.time()
        await _roundtrip(reader, writer, b"slow")
        assert loop.time() - started >= 0.2, "one chunk each way, 0.1 s each"
    assert proxy.faults[0].kind == "latency"
    writer.close()


@pytest.mark.asyncio
async def test_cut_reply_delivers_the_request_and_loses_the_answer(proxy: FaultProxy) -> None:
    reader, writer = await _connect(proxy)
    other_reader, other_writer = await _connect(proxy)
    proxy.cut_reply_after(b"MARK")
    assert await _roundtrip(other_reader, other_writer, b"plain") == b"plain", "other traffic is untouched"
    writer.write(b"the MARK request")
    await writer.drain()
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        await asyncio.wait_for(reader.readexactly(16), 2)
    assert proxy.cut_fired
    assert await _roundtrip(other_reader, other_writer, b"after") == b"after", "one-shot: one link cut"
    other_writer.close()
