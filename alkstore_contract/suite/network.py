"""What the network-fault rows share: a fault proxy in front of a location, and ops timed against the bounds.

Part of the suite.

``open_wire(ctx)`` starts a ``FaultProxy`` forwarding to the server of the
row's location and opens stores whose connections go through it
(``NetworkedAdapter.location_via``). ``Wire.bounded`` awaits an op for at most
the bound the adapter reports plus ``SLACK_S`` and says what happened — a
value, an error, or nothing yet (hung) — without ever waiting on a hung op: it
is left running until the wire closes, after the faults have ended, so a row
that meets an engine that hangs fails on time instead of hanging with it.

A fault counts only where it hit. When the wire closes after a leg injected
faults, the proxy says what they touched: if no connection of the engine ever
reached the proxy, ``location_via`` does not route the engine through it, and
the leg fails N1 (the adapter breaks the hook N1–N6 are checked through); if
connections reached it but the faults touched none of them, the leg raises
``FaultMissed`` — not exercised, never passed, and a violation it found is
dropped (an engine that never met the fault cannot have broken what it tests).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from alkstore_contract.adapter import NetworkedAdapter
from alkstore_contract.errors import StoreUnavailable
from alkstore_contract.suite.checks import ContractViolation, expect
from alkstore_contract.suite.fault_proxy import FaultProxy
from alkstore_contract.suite.harness import FaultMissed, RowContext
from alkstore_contract.surface import Store

T = TypeVar("T")

SLACK_S = 1.0
"""Allowance over the adapter's bounds for the event loop on a busy machine (a bound is not a benchmark)."""
CLOSE_WAIT_S = 10.0
"""How long closing the wire waits for ops left hung once the faults are over, before cancelling them."""


def networked_adapter(ctx: RowContext) -> NetworkedAdapter:
    """The row's adapter as a ``NetworkedAdapter``; a declared ``networked`` without the hook fails N1."""
    adapter = ctx.adapter
    expect(
        isinstance(adapter, NetworkedAdapter),
        "N1",
        did="declares 'networked' but its adapter lacks server_address/location_via/op_timeout_s/reconnect_within_s",
        demands="an adapter that lets the suite route the engine through a fault proxy and reports its bounds",
    )
    assert isinstance(adapter, NetworkedAdapter)
    return adapter


@dataclass
class Outcome(Generic[T]):
    """How a bounded op ended: with a value, with an error, or not within the bound (``hung``)."""

    what: str
    value: T | None = None
    error: BaseException | None = None
    hung: bool = False
    elapsed_s: float = 0.0

    def describe(self) -> str:
        if self.hung:
            return f"{self.what} had not returned after {self.elapsed_s:.2f} s"
        if self.error is not None:
            return f"{self.what} raised {type(self.error).__name__}({self.error}) after {self.elapsed_s:.2f} s"
        return f"{self.what} returned {self.value!r} after {self.elapsed_s:.2f} s"

    @property
    def unavailable(self) -> bool:
        return isinstance(self.error, StoreUnavailable)


class Wire:
    """A fault proxy between the engine and its server, for one row."""

    def __init__(self, ctx: RowContext, adapter: NetworkedAdapter, proxy: FaultProxy) -> None:
        self.ctx = ctx
        self.adapter = adapter
        self.proxy = proxy
        self.via = proxy.address
        """The address ``location_via`` is given (kept: the proxy stops listening when the wire closes)."""
        self.stores_opened = 0
        """Stores opened through the proxy: a leg that opened one and injected faults must see connections."""
        self._hung: list[asyncio.Future[Any]] = []

    @property
    def op_bound_s(self) -> float:
        """N1's bound as the row checks it: the adapter's ``op_timeout_s`` and the slack."""
        return self.adapter.op_timeout_s + SLACK_S

    @property
    def reconnect_bound_s(self) -> float:
        """N2's bound as the row checks it: the adapter's ``reconnect_within_s`` and the slack."""
        return self.adapter.reconnect_within_s + SLACK_S

    def location_via_proxy(self, location: str | None = None) -> str:
        """``location`` (default: the row's) as stores reach it through the proxy."""
        return self.adapter.location_via(location or self.ctx.location, *self.proxy.address)

    async def open_store(self, location: str | None = None) -> Store:
        """A store on ``location`` (default: the row's) whose connections go through the proxy."""
        self.stores_opened += 1
        return await self.ctx.open_store(self.location_via_proxy(location))

    async def bounded(self, what: str, operation: Awaitable[T], bound_s: float | None = None) -> Outcome[T]:
        """Await ``operation`` for at most ``bound_s`` (default ``op_bound_s``); a hung op is left running."""
        limit = self.op_bound_s if bound_s is None else bound_s
        loop = asyncio.get_running_loop()
        started = loop.time()
        task: asyncio.Future[T] = asyncio.ensure_future(operation)
        done, _ = await asyncio.wait({task}, timeout=limit)
        elapsed = loop.time() - started
        if not done:
            self._hung.append(task)
            return Outcome(what, hung=True, elapsed_s=elapsed)
        error = task.exception()
        if error is not None:
            return Outcome(what, error=error, elapsed_s=elapsed)
        return Outcome(what, value=task.result(), elapsed_s=elapsed)

    def expect_unavailable(self, outcome: Outcome[Any], clause: str = "N1") -> None:
        """``outcome`` must be a ``StoreUnavailable`` raised within the bound: the op met an outage."""
        expect(
            outcome.unavailable,
            clause,
            did=outcome.describe() + " during an outage",
            demands=f"StoreUnavailable within the adapter's op_timeout_s ({self.adapter.op_timeout_s} s, "
            f"checked with {SLACK_S} s of slack), never a hang, another error or a result",
        )

    async def recovered(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """N2: call ``attempt`` until it succeeds, within ``reconnect_bound_s`` of now; its value.

        Each attempt may raise ``StoreUnavailable`` (it met a connection the
        outage broke); anything else, a hang, or no success in time fails N2.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_bound_s
        last: Outcome[T] | None = None
        while (remaining := deadline - loop.time()) > 0:
            last = await self.bounded(what, attempt(), remaining)
            if (last.error is None and not last.hung) or not last.unavailable:
                break
            await asyncio.sleep(0.05)
        served = last is not None and last.error is None and not last.hung
        expect(
            served,
            "N2",
            did=f"did not serve {what} again after the outage ended: last attempt: "
            f"{last.describe() if last else 'none'}",
            demands=f"the same open store to serve ops again within the adapter's reconnect_within_s "
            f"({self.adapter.reconnect_within_s} s, checked with {SLACK_S} s of slack), without reopening",
        )
        assert last is not None
        return last.value  # type: ignore[return-value]

    async def close(self) -> None:
        """End every fault, let ops left hung finish (or cancel them), and stop the proxy."""
        await self.proxy.close()
        if self._hung:
            _, pending = await asyncio.wait(self._hung, timeout=CLOSE_WAIT_S)
            for task in pending:
                task.cancel()
            for task in self._hung:
                if task.done() and not task.cancelled():
                    task.exception()


@contextlib.asynccontextmanager
async def open_wire(ctx: RowContext) -> AsyncIterator[Wire]:
    """A ``Wire`` in front of the row's location's server; closed (faults over, proxy stopped) on exit."""
    adapter = networked_adapter(ctx)
    proxy = FaultProxy(*adapter.server_address(ctx.location))
    await proxy.start()
    wire = Wire(ctx, adapter, proxy)
    error: Exception | None = None
    try:
        yield wire
    except Exception as exc:
        error = exc
    finally:
        await wire.close()
    _judge_reach(wire, error)


def _judge_reach(wire: Wire, error: Exception | None) -> None:
    """Re-raise the leg's ``error`` only if its faults reached the engine (see the module docstring)."""
    proxy = wire.proxy
    if proxy.faults and wire.stores_opened and proxy.accepted == 0:
        try:
            expect(
                False,
                "N1",
                did=f"opened {wire.stores_opened} store(s) on location_via(location, {wire.via[0]!r}, "
                f"{wire.via[1]}) and ran ops on them, but not one connection reached that address: the "
                f"suite's {len(proxy.faults)} fault(s) could not reach the engine",
                demands="the stores of a location_via location to connect to the host and port it was given "
                "(the suite's fault proxy), so the faults N1–N6 are checked with reach the engine",
            )
        except ContractViolation as violation:
            raise violation from error
    if proxy.faults and not proxy.reached and (error is None or isinstance(error, ContractViolation)):
        kinds = ", ".join(dict.fromkeys(fault.kind for fault in proxy.faults))
        raise FaultMissed(
            f"the fault never reached the engine: the proxy's faults ({kinds}) touched none of the "
            f"{proxy.accepted} connection(s) the engine made through it"
        ) from error
    if error is not None:
        raise error
