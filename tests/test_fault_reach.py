"""N1–N6: a fault counts only where it hit — a network leg's verdict follows what the proxy's faults touched.

The leg runs through the real harness (``RowContext.leg``) and the real wire
(``open_wire``) against a tiny echo server standing in for an engine's
server: whether a fault reached a connection is the proxy's business, not the
engine's, so no engine is needed. If one of these fails, check
``alkstore_contract/suite/network.py`` (``_judge_reach``) and ``RowContext.leg``'s
handling of ``FaultMissed``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from alkstore_contract.clock import Clock
from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.network import Wire, open_wire
from tests.echo_server import echo
from tests.row_context import row_context


class EchoAdapter:
    """Just enough of a networked adapter for the wire: stores are never opened through it here."""

    name = "echo"
    version = "0"
    capabilities: frozenset[Any] = frozenset()
    op_timeout_s = 0.5
    reconnect_within_s = 1.0

    def __init__(self, port: int) -> None:
        self.port = port

    async def unavailable_reason(self) -> str | None:
        return None

    async def create_location(self) -> str:
        return "echo"

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Any:
        raise NotImplementedError

    async def count_stored_jobs(self, location: str) -> int:
        return 0

    async def drop_location(self, location: str) -> None:
        return None

    def server_address(self, location: str) -> tuple[str, int]:
        return "127.0.0.1", self.port

    def location_via(self, location: str, host: str, port: int) -> str:
        return f"{host}:{port}"


@pytest_asyncio.fixture
async def context() -> AsyncIterator[RowContext]:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with row_context("network_faults", EchoAdapter(port), "echo", manual=True, tolerance_s=0.1) as ctx:
        await ctx.setup()
        yield ctx
    server.close()
    await server.wait_closed()


async def _connect(wire: Wire) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection through the proxy, as a store of ``location_via`` would make; counted as a store opened."""
    wire.stores_opened += 1
    return await asyncio.open_connection(*wire.proxy.address)


@pytest.mark.asyncio
async def test_a_stall_that_held_no_byte_of_the_engine_is_not_exercised_and_its_checks_are_taken_back(
    context: RowContext,
) -> None:
    """N1: the engine sent nothing during the stall, so its op "surviving" it proves nothing."""

    async def leg(ctx: RowContext) -> None:
        async with open_wire(ctx) as wire:
            _, writer = await _connect(wire)
            async with wire.proxy.stalled():
                await asyncio.sleep(0.05)
            expect(True, "N1", did="", demands="")
            expect(False, "N1", did="returned a value during the stall", demands="StoreUnavailable")
            writer.close()

    assert not await context.leg("partition", ("N1", "N2"), leg)
    [record] = context.ledger.legs
    assert record.status == "not run"
    assert record.gap == "fault missed"
    assert "never reached the engine" in str(record.reason)
    assert context.ledger.checks == {}, "the missed leg's checks are taken back"
    assert context.ledger.failures == [], "a violation found where no fault hit is dropped"
    assert set(context.ledger.gaps) == {"N1", "N2"}


@pytest.mark.asyncio
async def test_a_stall_that_held_the_engines_bytes_counts_and_its_violation_stands(context: RowContext) -> None:
    """N1: a stall that held a request is a real outage: what the leg found there is the engine's verdict."""

    async def leg(ctx: RowContext) -> None:
        async with open_wire(ctx) as wire:
            reader, writer = await _connect(wire)
            async with wire.proxy.stalled():
                writer.write(b"request")
                await writer.drain()
                await asyncio.sleep(0.05)
            assert await asyncio.wait_for(reader.readexactly(7), 2) == b"request"
            expect(False, "N1", did="returned a value during the stall", demands="StoreUnavailable")

    assert not await context.leg("partition", ("N1",), leg)
    assert context.ledger.legs[0].status == "failed"
    assert context.ledger.checks["N1"] >= 1, "the leg's checks count"


@pytest.mark.asyncio
async def test_stores_that_never_reached_the_proxy_fail_n1_naming_location_via(context: RowContext) -> None:
    """N1: a location_via whose stores connect elsewhere breaks the hook every N clause is checked through."""

    async def leg(ctx: RowContext) -> None:
        async with open_wire(ctx) as wire:
            wire.stores_opened += 1
            async with wire.proxy.stalled():
                await asyncio.sleep(0.01)

    assert not await context.leg("partition", ("N1", "N2"), leg)
    [failure] = context.ledger.failures
    assert failure.clause == "N1"
    assert "not one connection reached that address" in failure.message
