"""The fault proxy against a tiny echo server: it forwards, and each fault does what it says and is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from alkstore_contract.suite.fault_proxy import FaultProxy
from tests.echo_server import echo

SHORT_S = 0.3
"""Long enough that a forwarded echo (well under a millisecond here) would have come back."""


@pytest_asyncio.fixture
async def proxy() -> AsyncIterator[FaultProxy]:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()[:2]
    async with FaultProxy(host, port) as running:
        yield running
    server.close()
    await server.wait_closed()


async def _connect(proxy: FaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(*proxy.address)


async def _established(proxy: FaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that has carried one echo: the proxy holds both of its sides before a fault begins."""
    reader, writer = await _connect(proxy)
    await _roundtrip(reader, writer, b"x")
    return reader, writer


async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` and let the socket take it, awaiting no answer (one a fault may hold back or lose)."""
    writer.write(data)
    await writer.drain()


async def _roundtrip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes) -> bytes:
    await _send(writer, data)
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
    reader, writer = await _established(proxy)
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
    reader, writer = await _established(proxy)
    async with proxy.stalled() as fault:
        await _send(writer, b"held")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(reader.readexactly(4), SHORT_S)
        assert proxy.open_connections == 1, "a stall keeps the sockets open"
        late_reader, late_writer = await _connect(proxy)
        await _send(late_writer, b"late")
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
async def test_cut_answer_takes_the_next_sender_and_loses_its_answer_whatever_its_bytes(proxy: FaultProxy) -> None:
    """N3's cut: armed before the op, it cuts the first connection that sends, at its server's first answer."""
    reader, writer = await _connect(proxy)
    other_reader, other_writer = await _connect(proxy)
    fault = proxy.cut_answer()
    request = b"\x00\x01 any bytes at all"
    await _send(writer, request)
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        await asyncio.wait_for(reader.readexactly(len(request)), 2)
    assert proxy.cut_fired
    assert fault.connections == {1}, "the cut records the connection it cut"
    assert fault.bytes == len(request), "and the bytes of the answer it dropped"
    assert await _roundtrip(other_reader, other_writer, b"after") == b"after", "one-shot: one link cut"
    other_writer.close()


@pytest.mark.asyncio
async def test_cut_at_a_later_answer_lets_the_earlier_round_trips_through(proxy: FaultProxy) -> None:
    """N3: a cut at answer 2 forwards the first round trip and drops the second one's answer."""
    reader, writer = await _connect(proxy)
    proxy.cut_answer(2)
    assert await _roundtrip(reader, writer, b"prepare") == b"prepare"
    assert not proxy.cut_fired
    await _send(writer, b"execute")
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        await asyncio.wait_for(reader.readexactly(7), 2)
    assert proxy.cut_fired


@pytest.mark.asyncio
async def test_a_cut_disarmed_before_any_answer_touched_nothing(proxy: FaultProxy) -> None:
    """N3: a cut that never fired (the op needed fewer answers) records no connection: it never reached one."""
    reader, writer = await _connect(proxy)
    fault = proxy.cut_answer(2)
    assert await _roundtrip(reader, writer, b"only one") == b"only one"
    proxy.disarm()
    assert await _roundtrip(reader, writer, b"more") == b"more", "a disarmed cut fires no more"
    assert not fault.reached
    assert fault.ended_at is not None
    writer.close()


@pytest.mark.asyncio
async def test_each_fault_records_the_connections_and_bytes_it_touched(proxy: FaultProxy) -> None:
    """N1–N4 count a fault only where it hit: the proxy records what each fault touched."""
    reader, writer = await _established(proxy)
    async with proxy.stalled() as idle_stall:
        await asyncio.sleep(0.05)
    assert not idle_stall.reached, "a stall during which nothing was sent touched nothing"
    async with proxy.stalled() as stall:
        await _send(writer, b"held")
        await asyncio.sleep(0.1)
    assert stall.connections == {1}
    assert stall.bytes == 4
    assert await asyncio.wait_for(reader.readexactly(4), 2) == b"held"
    async with proxy.delayed(0.01) as latency:
        await _roundtrip(reader, writer, b"slow")
    assert latency.connections == {1}
    assert latency.bytes == 8, "4 bytes each way"
    proxy.reset()
    assert proxy.faults[-1].connections == {1}
    async with proxy.refusing() as refuse:
        await _connect(proxy)
        await asyncio.sleep(0.05)
    assert refuse.connections == {2}
    assert proxy.reset() == 0
    assert not proxy.faults[-1].reached, "a reset with no connection open touched none"
    assert proxy.reached
