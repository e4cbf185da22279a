"""An in-process TCP fault proxy: the suite's nemesis between an engine and its server (contract N1–N6).

Part of the suite.

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
- ``cut_answer(n)``: armed just before the op under test is called, it takes
  the first connection on which the engine then sends anything, forwards what
  the engine sends, and aborts that connection as the first byte of the
  server's ``n``-th answer on it arrives — the request reached the server and
  ran, its answer was lost (a cut during a commit). The request is identified
  by the moment it was sent, never by its bytes, so an engine that encodes,
  compresses or encrypts its traffic meets the same cut as one that does not.
  An *answer* is whatever the server sends after the engine last sent, so a
  cut at answer 1, 2, … lands after each round trip of a multi-round-trip op
  (an asyncpg statement's prepare, then its execution).

Every fault is recorded as a ``Fault`` with the wall-clock instants it began
and ended and what it touched: which connections (numbered in the order the
proxy accepted them) and how many of their bytes it held, delayed or dropped.
A fault that touched no connection never reached the engine, and a row must
not count it as exercising anything. Standard library only: the suite must
not need an external binary (toxiproxy, iptables) or root.
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
    """One fault the proxy injected: what, when it began and ended (``None`` while it lasts), what it touched."""

    kind: str
    """``reset``, ``stall``, ``refuse``, ``latency`` or ``cut``."""
    started_at: datetime
    ended_at: datetime | None = None
    detail: str = ""
    connections: set[int] = field(default_factory=set)
    """The connections (by accept order) the fault aborted, refused, held, delayed or cut."""
    bytes: int = 0
    """How many bytes of those connections it held, delayed or dropped."""

    @property
    def reached(self) -> bool:
        """Whether the fault touched any connection: one that touched none never reached the engine."""
        return bool(self.connections)

    def touch(self, link: int, size: int = 0) -> None:
        self.connections.add(link)
        self.bytes += size

    def describe(self) -> str:
        end = "…" if self.ended_at is None else self.ended_at.isoformat(timespec="milliseconds")
        detail = f" ({self.detail})" if self.detail else ""
        touched = f", touched {len(self.connections)} connections and {self.bytes} bytes"
        return f"{self.kind}{detail} {self.started_at.isoformat(timespec='milliseconds')}–{end}{touched}"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(eq=False)
class _Link:
    """One proxied connection: its number, the engine's side, the server's side, the tasks pumping between them."""

    number: int
    client: asyncio.StreamWriter
    server: asyncio.StreamWriter | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    answers: int = 0
    """Answers the server sent on this link since it became the cut's target."""
    awaiting_answer: bool = False
    """The engine sent bytes since the server last answered: the server's next bytes are a new answer."""

    def abort(self) -> None:
        for writer in (self.client, self.server):
            if writer is not None:
                writer.transport.abort()


@dataclass
class _Cut:
    """An armed ``cut_answer``: the answer it waits for, and the link it chose (the first to send once armed)."""

    fault: Fault
    answer: int
    target: _Link | None = None
    fired: bool = False


class FaultProxy:
    """Forward ``host:port`` (chosen by the OS) to ``upstream``, breaking the wire on command."""

    def __init__(self, upstream_host: str, upstream_port: int, *, host: str = "127.0.0.1") -> None:
        self._upstream = (upstream_host, upstream_port)
        self._host = host
        self._server: asyncio.Server | None = None
        self._links: set[_Link] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._stall: Fault | None = None
        self._refuse: Fault | None = None
        self._latency: Fault | None = None
        self._latency_s = 0.0
        self._cut: _Cut | None = None
        self.faults: list[Fault] = []
        """Every fault injected so far, in order."""
        self.accepted = 0
        """Connections accepted (refused ones included): the engine's connections that reached the proxy."""

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

    @property
    def reached(self) -> bool:
        """Whether any fault injected so far touched a connection."""
        return any(fault.reached for fault in self.faults)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, self._host, 0)

    async def close(self) -> None:
        """Stop listening and abort every link; ends any fault still running."""
        self._flowing.set()
        self._cut = None
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

    def _begin(self, kind: str, detail: str = "") -> Fault:
        fault = Fault(kind, _now(), detail=detail)
        self.faults.append(fault)
        return fault

    def reset(self) -> int:
        """Abort every open connection, both sides; how many there were."""
        links = list(self._links)
        fault = self._begin("reset", f"{len(links)} connections")
        for link in links:
            link.abort()
            fault.touch(link.number)
        fault.ended_at = fault.started_at
        return len(links)

    def start_stall(self) -> Fault:
        """Stop forwarding, sockets kept open, until ``end_stall`` is called with the returned fault."""
        self._flowing.clear()
        self._stall = self._begin("stall")
        return self._stall

    def end_stall(self, fault: Fault) -> None:
        fault.ended_at = _now()
        self._stall = None
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
        fault = self._refuse = self._begin("refuse")
        try:
            yield fault
        finally:
            self._refuse = None
            fault.ended_at = _now()

    @contextlib.asynccontextmanager
    async def delayed(self, latency_s: float) -> AsyncIterator[Fault]:
        """Every chunk, both ways, waits ``latency_s`` before it is forwarded inside the block."""
        self._latency_s = latency_s
        fault = self._latency = self._begin("latency", f"{latency_s} s")
        try:
            yield fault
        finally:
            self._latency_s = 0.0
            self._latency = None
            fault.ended_at = _now()

    def cut_answer(self, answer: int = 1) -> Fault:
        """Cut the next connection the engine sends on at the first byte of the server's ``answer``-th answer.

        Arm it just before calling the op under test: the first connection on
        which the engine sends anything afterwards is the op's. What the engine
        sends is delivered, so the server runs (and commits) it; the engine
        never learns the outcome. One-shot: the fault ends when it fires, or
        when ``disarm`` is called (an op that needed fewer answers).
        """
        if answer < 1:
            raise ValueError(f"answer={answer!r}: the cut lands on the 1st answer or a later one")
        fault = self._begin("cut", f"at answer {answer}")
        self._cut = _Cut(fault, answer)
        return fault

    @property
    def cut_fired(self) -> bool:
        """Whether the last ``cut_answer`` has fired."""
        return self._cut is not None and self._cut.fired

    def disarm(self) -> None:
        """End an armed cut that has not fired (the op finished in fewer answers); it then touched nothing more."""
        if self._cut is not None and self._cut.fault.ended_at is None:
            self._cut.fault.ended_at = _now()

    # --- forwarding -------------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        link = _Link(number=self.accepted, client=writer)
        if self._refuse is not None:
            self._refuse.touch(link.number)
            writer.transport.abort()
            return
        self._links.add(link)
        try:
            if self._stall is not None:
                self._stall.touch(link.number)
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
                    if self._latency is not None:
                        self._latency.touch(link.number, len(chunk))
                    await asyncio.sleep(self._latency_s)
                if not self._flowing.is_set():
                    if self._stall is not None:
                        self._stall.touch(link.number, len(chunk))
                    await self._flowing.wait()
                if self._cuts(link, chunk, from_client=from_client):
                    break
                sink.write(chunk)
                await sink.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            link.abort()

    def _cuts(self, link: _Link, chunk: bytes, *, from_client: bool) -> bool:
        """Whether ``chunk`` is where an armed cut fires (it then drops it); keeps the cut's count of answers."""
        cut = self._cut
        if cut is None or cut.fired or cut.fault.ended_at is not None:
            return False
        if from_client:
            if cut.target is None:
                cut.target = link
                link.answers, link.awaiting_answer = 0, False
            if cut.target is link:
                link.awaiting_answer = True
            return False
        if cut.target is not link or not link.awaiting_answer:
            return False
        link.awaiting_answer = False
        link.answers += 1
        if link.answers < cut.answer:
            return False
        cut.fired = True
        cut.fault.touch(link.number, len(chunk))
        cut.fault.ended_at = _now()
        return True
