"""The engine adapter: the one object a third party writes besides its engine.

Part of the contract.

It says who the engine is, what it can do, whether it can run here, and how
to make a fresh location, open a store on it with a given clock, read it
without going through the engine (the oracle), and drop it. Rows talk only to
this and to the contract surface; they never import an engine.

A location is an opaque ``str`` (a file path, a DSN plus schema, a space name)
so that it can be handed to a worker in another OS process.

Some members are optional, and so not part of the protocol below:

- ``async def storage_version(self) -> str``, what the engine stores into (e.g.
  ``"SQLite 3.40.1"``, the server's version). The suite asks it once an engine
  is available and writes the answer into the report; an adapter without it
  reports none.
- ``time_resolution_us: int``, the resolution at which the engine keeps
  instants: 1 (microseconds, the default), 1000 (milliseconds) or 1000000
  (whole seconds). The rows compare instants to within it, move the manual
  clock across boundaries by whole units of it, and the certificate names it.
  An engine must keep instants consistently at its resolution; one that
  declares 1 µs and truncates to milliseconds fails T1.
- ``options: Sequence[AdapterOption]`` with ``def configure(self, values:
  Mapping[str, str | None]) -> None``: settings the engine takes from the
  pytest command line, the ini file or the environment (a server's DSN),
  declared as data. The suite's plugin registers each as an option paired
  with an ini key for every installed engine, resolves it (option, then
  environment variable, then ini key, then default), and calls ``configure``
  once per session with every declared option's value under its ini key
  (``None`` when nothing set it and it has no default). So an engine needs
  no pytest plugin of its own and never imports the suite; outside pytest an
  adapter reads its own defaults.
- ``emulates: Mapping[str, str]``: for an adapter over a library, each clause
  whose verdict rests on something the adapter built because the library
  lacks it (a field it keeps elsewhere, a recovery the library runs only on
  its own schedule), mapped to one line on what it built and why. The
  verdicts of those clauses are marked *emulated* in the certificate, the
  safety profile, the report and the ecosystem matrix, so a library is never
  credited with what its adapter did (docs/capabilities.md, "Native or
  emulated").

An adapter whose engine declares ``networked`` also has the four members of
``NetworkedAdapter`` below: where a location's server is, the same location
reached through another address (the suite's fault proxy), and the two bounds
its engine documents for an outage (N1, N2). For an engine on asyncpg that is
a DSN with another host and port; see the Postgres engine's adapter.

An adapter whose engine declares both ``networked`` and ``durable`` also has the
four members of ``CrashableServerAdapter`` below, by which the suite crashes
the engine's server (kill -9) and restarts it: for an engine whose storage is a
server, P3 means surviving the server's crash, not only its own process's.
Without them the durability row fails P3, saying so (docs/capabilities.md).

An adapter whose ``networked`` engine keeps its default clock on its server (the
Postgres engine: contract T3) also has the two members of
``SkewedServerAdapter`` below, by which the suite gets a location whose server's
clock runs ahead of this host's and measures, through the engine, that every
instant an op stamps is the server's. Without them T3 is not exercised
(``untested``), never passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store


class Capability(StrEnum):
    """What an engine may declare beyond the required rows (see docs/capabilities.md)."""

    INJECTABLE_CLOCK = "injectable_clock"
    """T2: the engine reads time only from the clock it was opened with."""
    SHARED_LOCATION = "shared_location"
    """P1: several stores opened on one location see one state and keep C4 across them."""
    MULTI_PROCESS = "multi_process"
    """P2: C4 holds across OS processes sharing one location."""
    DURABLE = "durable"
    """P3: committed writes survive close, kill -9 and reopen."""
    NETWORKED = "networked"
    """N1–N6: the engine reaches its storage over TCP, and its adapter is a ``NetworkedAdapter``.

    The suite then puts a fault proxy between the engine and its server and
    checks that cuts and stalls fail ops in bounded time, heal without a
    reopen, and neither lose a job nor hand one to two live claims.
    """
    RELEASE = "release"
    """L1–L4 (since 2.1): ``JobHandle.release(delay=None)`` hands a claim back without spending an attempt."""
    UNIQUE_KEYS = "unique_keys"
    """K1–K4 (since 2.1): ``Queue.enqueue_unique`` stores nothing while a job with the key is unfinished."""
    TRANSACTIONAL_ENQUEUE = "transactional_enqueue"
    """W1–W4 (since 2.1): ``Queue.enqueue_in`` enqueues inside the caller's own transaction."""


TIME_RESOLUTIONS_US = {1: "1 µs", 1000: "1 ms", 1_000_000: "1 s"}
"""The resolutions an adapter may declare (``time_resolution_us``), with how reports write them."""


def time_resolution_us(adapter: object) -> int:
    """The adapter's declared time resolution in microseconds (1 when it declares none)."""
    value = getattr(adapter, "time_resolution_us", 1)
    if value not in TIME_RESOLUTIONS_US:
        raise ValueError(
            f"time_resolution_us={value!r}: an adapter declares 1 (µs), 1000 (ms) or 1000000 (s), or nothing for 1 µs"
        )
    return int(value)


@dataclass(frozen=True, slots=True)
class AdapterOption:
    """One setting an adapter declares (its optional ``options``): an option, its ini key, its environment variable."""

    flag: str
    """The command-line option, ``--alkstore-`` and the engine's words (``--alkstore-pg-dsn``)."""
    ini: str
    """Its ini key (``alkstore_pg_dsn``), also its key in the values ``configure`` receives."""
    env: str | None
    """The environment variable that sets it (``ALKSTORE_PG_DSN``), or ``None``."""
    help: str
    """One line for ``pytest --help``, shared by the option and the ini key."""
    default: str | None = None
    """Its value when nothing sets it; ``None`` leaves the choice to the adapter."""
    metavar: str = "VALUE"
    redact: Callable[[str], str] | None = None
    """How the report header shows a value (a DSN with its password masked); ``None`` shows it as given."""


@runtime_checkable
class ConfigurableAdapter(Protocol):
    """An adapter with the optional ``options`` and ``configure`` members (see the module docstring)."""

    @property
    def options(self) -> Sequence[AdapterOption]:
        """The settings this adapter takes; the plugin registers each once per installed engine."""
        ...

    def configure(self, values: Mapping[str, str | None]) -> None:
        """Take every declared option's value, keyed by its ini key; ``None``: not set, no default."""
        ...


def declared_options(adapter: object) -> tuple[AdapterOption, ...]:
    """The options ``adapter`` declares (none when it has no ``options``); a malformed declaration raises."""
    if not hasattr(adapter, "options"):
        return ()
    if not isinstance(adapter, ConfigurableAdapter):
        raise ValueError("options: an adapter declaring options also has configure(values)")
    options = tuple(adapter.options)
    for option in options:
        if not isinstance(option, AdapterOption):
            raise ValueError(f"options: {type(option).__name__} is not an AdapterOption")
        if not option.flag.startswith("--alkstore-"):
            raise ValueError(f"options: {option.flag} must start with --alkstore- (one namespace for the suite)")
    return options


CAPABILITY_CLAUSES: dict[Capability, str] = {
    Capability.INJECTABLE_CLOCK: "T2",
    Capability.SHARED_LOCATION: "P1",
    Capability.MULTI_PROCESS: "P2",
    Capability.DURABLE: "P3",
    Capability.NETWORKED: "N1–N6, T3",
    Capability.RELEASE: "L1–L4",
    Capability.UNIQUE_KEYS: "K1–K4",
    Capability.TRANSACTIONAL_ENQUEUE: "W1–W4",
}

CAPABILITIES_SINCE: dict[Capability, str] = {
    Capability.RELEASE: "2.1",
    Capability.UNIQUE_KEYS: "2.1",
    Capability.TRANSACTIONAL_ENQUEUE: "2.1",
}
"""The capabilities a minor version of the contract added, with that version; the others date from 2.0."""

VERSION_CAPABILITIES: dict[str, frozenset[Capability]] = {
    "2.0": frozenset(),
    "2.1": frozenset({Capability.RELEASE, Capability.UNIQUE_KEYS}),
}
"""What an engine must declare (and pass) to be certified for each contract version (docs/contract.md,
"What 2.1 added"); the versions in ascending order."""


@runtime_checkable
class EngineAdapter(Protocol):
    """What the suite needs to know and do about an engine."""

    @property
    def name(self) -> str:
        """The name users pass to ``--alkstore-engine``."""
        ...

    @property
    def version(self) -> str:
        """The engine's distribution version, for the report."""
        ...

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The capabilities the engine declares; rows needing others skip, naming them."""
        ...

    async def unavailable_reason(self) -> str | None:
        """``None`` when the engine can run here, else why not (e.g. the server did not answer)."""
        ...

    async def create_location(self) -> str:
        """A fresh, empty location no other test uses."""
        ...

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """Open a store on ``location``.

        ``clock=None`` means the engine's production clock. ``seed`` seeds the
        engine's random source (backoff jitter) so a run can be replayed.
        """
        ...

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: how many jobs ``location`` holds, read without the engine's code path.

        ``location`` is always one ``create_location`` returned, never a ``location_via`` one (networked
        engines): the oracle reads the server directly, past the suite's fault proxy.
        """
        ...

    async def drop_location(self, location: str) -> None:
        """Remove everything ``create_location`` made; given the location it returned, never a ``location_via`` one."""
        ...


@runtime_checkable
class NetworkedAdapter(Protocol):
    """What an adapter of a ``networked`` engine adds, so the suite can cut the wire (N1–N6).

    The suite starts a fault proxy that forwards to ``server_address`` and
    opens stores on ``location_via(location, *proxy_address)``; it never needs
    to know the engine's wire protocol.
    """

    def server_address(self, location: str) -> tuple[str, int]:
        """The host and TCP port the stores opened on ``location`` connect to."""
        ...

    def location_via(self, location: str, host: str, port: int) -> str:
        """The same location (same jobs), its stores connecting to ``host:port`` instead of the server.

        Every connection of those stores must go to ``host:port``: a store that
        reaches the server another way meets none of the suite's faults, and a
        leg whose faults reached no connection at all fails N1.

        The engine may give stores opened on it shorter timeouts than its
        production defaults (the suite's outages last a few seconds); the two
        bounds below must hold for them. The suite only opens stores on the
        returned location: ``count_stored_jobs`` and ``drop_location`` always
        get the original one.
        """
        ...

    @property
    def op_timeout_s(self) -> float:
        """N1: during an outage, an op on a ``location_via`` store raises ``StoreUnavailable`` within this."""
        ...

    @property
    def reconnect_within_s(self) -> float:
        """N2: after an outage ends, the same open store serves ops again within this."""
        ...


class CallerTransaction(Protocol):
    """A transaction the suite opened as an application would, on the location's storage (contract W1–W4)."""

    @property
    def transaction(self) -> object:
        """What the engine's ``enqueue_in`` takes: its own handle on this open transaction."""
        ...

    async def commit(self) -> None:
        """Commit the caller's transaction and release it."""
        ...

    async def rollback(self) -> None:
        """Roll the caller's transaction back and release it."""
        ...


@runtime_checkable
class TransactionalAdapter(Protocol):
    """What the adapter of an engine declaring ``transactional_enqueue`` adds: a caller's transaction to use."""

    async def begin_transaction(self, location: str) -> CallerTransaction:
        """Open a transaction on the storage of ``location``, as the application would, outside any store."""
        ...


@runtime_checkable
class CrashableServerAdapter(Protocol):
    """What the adapter of a ``networked`` and ``durable`` engine adds, so the suite can crash its server (P3).

    The suite makes a location with ``create_crashable_location``, has a
    worker process write to it, calls ``crash_server`` while the worker runs,
    then ``restart_server``, reopens the location and checks that every write
    the worker reported survived, and nothing acked or cancelled came back.
    The server must be one the adapter starts and owns for that location (a
    throwaway cluster in a temporary directory, say) — never the server a user
    pointed the engine at. ``drop_location`` removes it with the location.
    """

    async def create_crashable_location(self) -> str:
        """A fresh, empty location on a server of the adapter's own, which ``crash_server`` may kill."""
        ...

    async def crash_server(self, location: str) -> None:
        """Crash the location's server as a kill -9 does: every server process, at once, no shutdown.

        Returns once the server is down (its processes gone); it does not come back by itself.
        """
        ...

    async def restart_server(self, location: str) -> None:
        """Start the crashed server again on whatever it kept; return once it accepts connections."""
        ...

    @property
    def restart_within_s(self) -> float:
        """P3: ``restart_server`` returns within this (recovery included); the suite fails P3 when it does not."""
        ...


@runtime_checkable
class SkewedServerAdapter(Protocol):
    """What the adapter of a ``networked`` engine on its server's clock adds, so the suite can check that clock (T3).

    On one machine the client's and the server's clocks agree, so a store that
    stamped a lease by the client's clock would pass every other row. The
    suite asks for a location on a server whose clock runs ``offset_s`` ahead
    of this host's, opens a store on it with the engine's default clock, and
    *measures* the offset through the engine (the ``enqueued_at`` it stamps
    against this host's clock) before judging anything: the hook's word is
    never taken for it. The server must be one the adapter starts and owns for
    such locations (a throwaway cluster under libfaketime, say), never the one
    a user pointed the engine at; ``drop_location`` removes a location it made.
    """

    async def skewed_server_unavailable_reason(self) -> str | None:
        """``None`` when a skewed server can be started here, else what is missing (a tool, a library)."""
        ...

    async def create_skewed_server_location(self, offset_s: float) -> str:
        """A fresh, empty location on a server of the adapter's own, its clock ``offset_s`` ahead of the host's."""
        ...
