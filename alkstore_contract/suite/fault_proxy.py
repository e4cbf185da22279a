"""An in-process TCP fault proxy: the suite's nemesis between an engine and its server (contract N1–N5).

A ``networked`` engine's adapter can make a location whose connections go to
an address the suite chooses (``location_via``); the suite points it at a
``FaultProxy``, which forwards every accepted connection to the real server
and, on command, breaks the wire the ways a network does:

- ``reset()``: every open connection is aborted on both sides (an RST each way,
  as a crashed middlebox or a failover does);
- ``stalled()``: nothing is forwarded while the sockets stay open (a partition:
  the engine's packets go nowhere and no error comes back); bytes sent during
  the stall are delivered when it ends, as TCP retransmits after a partition
  heals; connections accepted during the stall wait too;
- ``refusing()``: new connections are closed as soon as they are accepted;
- ``latency``: every chunk waits this long before it is forwarded;
- ``cut_reply_after(marker)``: the first connection whose client sends
  ``marker`` is aborted as soon as the server answers it — the request
  reached the server and ran, its answer was lost (a cut during a commit).

Every fault is recorded as a ``Fault`` with the wall-clock instants it began
and ended, so a history can be read against it. Standard library only: the
suite must not need an external binary (toxiproxy, iptables) or root.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

CHUNK = 65536


@dataclass
class Fault:
    """One fault the proxy injected: what, when it began, when it ended (``None`` while it lasts)."""

    kind: str
    """``reset``, ``stall``, ``refuse``, ``latency`` or ``cut_reply``."""
    started_at: datetime
    ended_at: datetime | None = None
    detail: str = ""

    def describe(self) -> str:
        end = "…" if self.ended_at is None else self.ended_at.isoformat(timespec="milliseconds")
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.kind}{detail} {self.started_at.isoformat(timespec='milliseconds')}–{end}"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(eq=False)
class _Link:
    """One proxied connection: the engine's side, the server's side, and the tasks pumping between them."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    armed: bool = False
    """The client sent the cut marker: the server's next bytes abort this link instead of arriving."""

    def abort(self) -> None:
        for writer in (self.client, self.server):
            if writer is not None:
                writer.transport.abort()


class FaultProxy:
    """Forward ``host:port`` (chosen by the OS) to ``upstream``, breaking the wire on command."""

    def __init__(self, upstream_host: str, upstream_port: int, *, host: str = "127.0.0.1") -> None:
        self._upstream = (upstream_host, upstream_port)
        self._host = host
        self._server: asyncio.Server | None = None
        self._links: set[_Link] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._refusing = False
        self._latency_s = 0.0
        self._cut_marker: bytes | None = None
        self._cut_fault: Fault | None = None
        self.faults: list[Fault] = []
        """Every fault injected so far, in order."""
        self.accepted = 0
        """Connections accepted (refused ones included)."""

    @property
    def address(self) -> tuple[str, int]:
        """Where engines should connect."""
        if self._server is None:
            raise RuntimeError("FaultProxy.start() has not run")
        host, port = self._server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    @property
    def open_connections(self) -> int:
        return len(self._links)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, self._host, 0)

    async def close(self) -> None:
        """Stop listening and abort every link; ends any fault still running."""
        self._flowing.set()
        for fault in self.faults:
            if fault.ended_at is None:
                fault.ended_at = _now()
        if self._server is not None:
            self._server.close()
        for link in list(self._links):
            link.abort()
            for task in link.tasks:
                task.cancel()
        self._links.clear()
        if self._server is not None:
            await self._server.wait_closed()

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- the faults -------------------------------------------------------------------------------

    def reset(self) -> int:
        """Abort every open connection, both sides; how many there were."""
        links = list(self._links)
        for link in links:
            link.abort()
        at = _now()
        self.faults.append(Fault("reset", at, at, f"{len(links)} connections"))
        return len(links)

    def start_stall(self) -> Fault:
        """Stop forwarding, sockets kept open, until ``end`` is called on the returned fault's stall."""
        self._flowing.clear()
        fault = Fault("stall", _now())
        self.faults.append(fault)
        return fault

    def end_stall(self, fault: Fault) -> None:
        fault.ended_at = _now()
        self._flowing.set()

    @contextlib.asynccontextmanager
    async def stalled(self) -> AsyncIterator[Fault]:
        """Nothing is forwarded inside the block; what was sent meanwhile is delivered after it."""
        fault = self.start_stall()
        try:
            yield fault
        finally:
            self.end_stall(fault)

    @contextlib.asynccontextmanager
    async def refusing(self) -> AsyncIterator[Fault]:
        """New connections are closed on accept inside the block; open ones are left alone."""
        self._refusing = True
        fault = Fault("refuse", _now())
        self.faults.append(fault)
        try:
            yield fault
        finally:
            self._refusing = False
            fault.ended_at = _now()

    @contextlib.asynccontextmanager
    async def delayed(self, latency_s: float) -> AsyncIterator[Fault]:
        """Every chunk, both ways, waits ``latency_s`` before it is forwarded inside the block."""
        self._latency_s = latency_s
        fault = Fault("latency", _now(), detail=f"{latency_s} s")
        self.faults.append(fault)
        try:
            yield fault
        finally:
            self._latency_s = 0.0
            fault.ended_at = _now()

    def cut_reply_after(self, marker: bytes) -> Fault:
        """Abort the first connection whose client sends ``marker``, the moment the server answers it.

        The request is delivered, so the server runs (and commits) it; the
        engine never learns the outcome. One-shot: the fault ends when it fires.
        """
        self._cut_marker = marker
        self._cut_fault = Fault("cut_reply", _now(), detail=f"after {marker!r}")
        self.faults.append(self._cut_fault)
        return self._cut_fault

    @property
    def cut_fired(self) -> bool:
        """Whether the last ``cut_reply_after`` has fired."""
        return self._cut_fault is not None and self._cut_fault.ended_at is not None and self._cut_marker is None

    # --- forwarding -------------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self._refusing:
            writer.transport.abort()
            return
        link = _Link(client=writer)
        self._links.add(link)
        try:
            await self._flowing.wait()
            try:
                up_reader, up_writer = await asyncio.open_connection(*self._upstream)
            except OSError:
                link.abort()
                return
            link.server = up_writer
            link.tasks = [
                asyncio.create_task(self._pump(link, reader, up_writer, from_client=True)),
                asyncio.create_task(self._pump(link, up_reader, writer, from_client=False)),
            ]
            await asyncio.gather(*link.tasks, return_exceptions=True)
        finally:
            link.abort()
            self._links.discard(link)

    async def _pump(
        self, link: _Link, source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, from_client: bool
    ) -> None:
        """Copy ``source`` to ``sink`` chunk by chunk, obeying the faults; any end aborts the whole link."""
        try:
            while True:
                chunk = await source.read(CHUNK)
                if not chunk:
                    break
                if self._latency_s:
                    await asyncio.sleep(self._latency_s)
                await self._flowing.wait()
                if from_client and self._cut_marker is not None and self._cut_marker in chunk:
                    link.armed = True
                if not from_client and link.armed:
                    self._fire_cut()
                    break
                sink.write(chunk)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            link.abort()

    def _fire_cut(self) -> None:
        if self._cut_fault is not None:
            self._cut_fault.ended_at = _now()
        self._cut_marker = None
