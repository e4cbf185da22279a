"""The Postgres engine's adapter: what the conformance suite needs to know and do about it.

This module imports asyncpg only inside the coroutines that talk to a server,
so the engine stays registered, and says why it cannot run, on a machine
without the ``postgres`` extra.

Which server: the adapter declares ``DSN_OPTION`` (``--alkstore-pg-dsn``, ini
``alkstore_pg_dsn``, ``$ALKSTORE_PG_DSN``), which the suite's plugin registers
and resolves (option, then environment, then ini) and hands to ``configure``;
outside pytest, ``$ALKSTORE_PG_DSN``, else ``DEFAULT_DSN``. Each location
carries its own DSN, so a worker process needs none of this.

The engine is ``networked`` (contract N1–N6): ``location_via`` swaps the DSN's
host and port for the suite's fault proxy and gives the location short
timeouts, so the suite's outages of a second or two are long enough to time
operations out; ``op_timeout_s`` and ``reconnect_within_s`` are the bounds that
follow from those timeouts (``alkstore_postgres.location.outage_bound_s``).

It also lets the suite crash the server (contract P3 for a networked engine):
``create_crashable_location`` makes a location on a throwaway cluster of its
own (``alkstore_postgres.provision``: initdb in a temporary directory, a
free loopback port), never on the configured server; ``crash_server`` kills that
cluster's processes with SIGKILL, ``restart_server`` starts it again on its
data, and ``drop_location`` deletes the cluster with the location.

And it gives the suite a server whose clock runs ahead of this host's (contract
T3): ``create_skewed_server_location`` makes a schema on a throwaway cluster
under libfaketime (``alkstore_postgres.provision_skewed``), one cluster per offset
for the adapter's life, so the suite can measure that every instant is the server's.

Those test servers are the engine's provisioning, beside its code as a dialect's are in
SQLAlchemy: imported only inside the hooks that start them, so a user's store never loads them.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import version as distribution_version
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from alkstore_contract.adapter import AdapterOption, CallerTransaction, Capability
from alkstore_contract.clock import Clock
from alkstore_contract.errors import InvalidArgument
from alkstore_contract.surface import Store
from alkstore_contract.validation import describe_value
from alkstore_postgres.location import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_OP_TIMEOUT_S,
    Location,
    new_schema_name,
    outage_bound_s,
    quote_ident,
    redact_dsn,
)
from alkstore_postgres.oracle import OracleConnections

if TYPE_CHECKING:
    from alkstore_postgres.driver import PgDriver
    from alkstore_postgres.provision import ThrowawayCluster

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
DSN_ENV = "ALKSTORE_PG_DSN"
DSN_OPTION = AdapterOption(
    flag="--alkstore-pg-dsn",
    ini="alkstore_pg_dsn",
    env=DSN_ENV,
    help="Postgres server for the postgres engine",
    default=DEFAULT_DSN,
    metavar="DSN",
    redact=redact_dsn,
)
CONNECT_TIMEOUT_S = 5.0
NETWORK_OP_TIMEOUT_S = 1.0
"""The statement timeout of stores on a ``location_via`` location.

Short, so the network rows' outages end soon, but not shorter: the suite's manual-clock run is niced and shares two
cores, and at 0.5 s a claim or a connect with no fault injected timed out (3 of 4 runs of the network rows, nice 10,
beside four busy loops); at 1 s none did (7 of 7, beside four and seven)."""
NETWORK_CONNECT_TIMEOUT_S = 1.0
"""The acquire/connect timeout of stores on a ``location_via`` location (as short as it can be, as above)."""
DROP_LOCK_TIMEOUT = "30s"
"""A drop blocked by a store left mid-transaction fails after this instead of hanging the suite."""
RESTART_WITHIN_S = 30.0
"""The restart bound the adapter declares: a crashed throwaway cluster is back within this."""


async def _connect(dsn: str) -> Any:
    """A bare asyncpg connection, outside any engine class (the oracle and the location housekeeping)."""
    import asyncpg

    return await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT_S)


async def server_version(dsn: str) -> str:
    """A report's storage version: the server's own version string (``SHOW server_version``). The ecosystem
    adapters' kit reports the server under a library with it too, so every column names its server alike."""
    conn = await _connect(dsn)
    try:
        shown: str = await conn.fetchval("SHOW server_version")
    finally:
        await conn.close()
    return f"PostgreSQL {shown}"


class _Ending(Protocol):
    """What a Postgres driver ends a transaction with: asyncpg's ``Transaction``, a psycopg connection itself."""

    async def commit(self) -> None: ...
    async def rollback(self) -> None: ...


class _Connection(Protocol):
    """A driver's connection, as far as ``OwnConnectionTransaction`` uses it."""

    async def close(self) -> None: ...


@dataclass(frozen=True)
class OwnConnectionTransaction:
    """An application's transaction on a connection of its own (W1–W4), whichever Postgres driver holds it.

    ``commit`` and ``rollback`` end the transaction through ``ending`` and close the connection even when ending
    it raised, so no caller's transaction leaves a connection open. The engine's own (asyncpg,
    ``PgCallerTransaction``) and procrastinate's adapter's (psycopg) are this, each begun through its driver.
    """

    transaction: _Connection
    """What ``enqueue_in`` takes: the connection, inside its open transaction."""
    ending: _Ending
    """What ends the transaction: asyncpg's ``Transaction``; for psycopg, the connection itself."""

    async def commit(self) -> None:
        await self._end(self.ending.commit)

    async def rollback(self) -> None:
        await self._end(self.ending.rollback)

    async def _end(self, end: Callable[[], Awaitable[None]]) -> None:
        try:
            await end()
        finally:
            await self.transaction.close()


class PgCallerTransaction(OwnConnectionTransaction):
    """An application's transaction: a bare asyncpg connection, a transaction open on it (W1–W4)."""

    @classmethod
    async def begin(cls, dsn: str) -> PgCallerTransaction:
        import asyncpg  # loaded with the engine, as the driver loads it, not when the adapter is listed

        connection = await asyncpg.connect(dsn)
        transaction = connection.transaction()
        await transaction.start()
        return cls(connection, transaction)


class PgAdapter:
    """Adapter of the ``postgres`` engine (entry point ``alkstore.engines``: ``postgres``)."""

    driver_class: type[PgDriver] | None = None
    """The storage the stores run on; ``None`` means ``PgDriver`` (imported on first use, as it needs asyncpg).

    The project's broken-engine mutants put a subclass here."""
    options = (DSN_OPTION,)

    def __init__(self) -> None:
        self._dsn: str | None = None
        self._clusters: dict[str, ThrowawayCluster] = {}
        """The throwaway clusters of the crashable locations this adapter made, by DSN."""
        self._skewed: dict[float, ThrowawayCluster] = {}
        """The skewed-clock clusters, by offset: each serves every skewed location with its offset (a schema each)."""
        self._oracle = OracleConnections(_connect)
        """The oracle's bare connections, kept per event loop (``alkstore_postgres.oracle``)."""

    @property
    def name(self) -> str:
        return "postgres"

    @property
    def version(self) -> str:
        return distribution_version("alkstore")

    @property
    def capabilities(self) -> frozenset[Capability]:
        return frozenset(
            {
                Capability.INJECTABLE_CLOCK,
                Capability.SHARED_LOCATION,
                Capability.MULTI_PROCESS,
                Capability.DURABLE,
                Capability.NETWORKED,
                Capability.RELEASE,
                Capability.UNIQUE_KEYS,
                Capability.TRANSACTIONAL_ENQUEUE,
            }
        )

    @property
    def op_timeout_s(self) -> float:
        """N1: an op on a ``location_via`` store raises ``StoreUnavailable`` within this during an outage."""
        return outage_bound_s(NETWORK_OP_TIMEOUT_S, NETWORK_CONNECT_TIMEOUT_S)

    @property
    def reconnect_within_s(self) -> float:
        """N2: one op may still meet a connection the outage broke (bounded as above); the next opens a fresh one."""
        return 2 * self.op_timeout_s

    def server_address(self, location: str) -> tuple[str, int]:
        """The host and port in the location's DSN (5432 when it names none)."""
        parts = urlsplit(Location.decode(location).dsn)
        if not parts.hostname:
            raise InvalidArgument(
                f"location={describe_value(location)}: its DSN names no TCP host, so it cannot be proxied"
            )
        return parts.hostname, parts.port or 5432

    async def begin_transaction(self, location: str) -> CallerTransaction:
        """W1–W4: a transaction on the location's database on a connection of its own, as an application holds one."""
        return await PgCallerTransaction.begin(Location.decode(location).dsn)

    def location_via(self, location: str, host: str, port: int) -> str:
        """The same schema, its DSN pointing at ``host:port``, with the short timeouts above."""
        parsed = Location.decode(location)
        parts = urlsplit(parsed.dsn)
        user = parts.netloc.rpartition("@")[0]
        netloc = f"{user}@{host}:{port}" if user else f"{host}:{port}"
        return Location(
            dsn=urlunsplit(parts._replace(netloc=netloc)),
            schema=parsed.schema,
            op_timeout_s=NETWORK_OP_TIMEOUT_S,
            connect_timeout_s=NETWORK_CONNECT_TIMEOUT_S,
        ).encode()

    @property
    def dsn(self) -> str:
        """The server new locations are made on: the configured DSN, else ``$ALKSTORE_PG_DSN``, else the default."""
        return self._dsn or os.environ.get(DSN_ENV) or DEFAULT_DSN

    def configure(self, values: Mapping[str, str | None]) -> None:
        """Point new locations at the DSN the suite resolved (``None`` returns to the environment or the default)."""
        self._dsn = values.get(DSN_OPTION.ini)

    def _driver_class(self) -> type[PgDriver]:
        if self.driver_class is not None:
            return self.driver_class
        from alkstore_postgres.driver import PgDriver

        return PgDriver

    async def unavailable_reason(self) -> str | None:
        """``None`` when asyncpg is installed and the server answers within 5 s, else why not."""
        try:
            import asyncpg  # noqa: F401
        except ImportError as exc:
            return f"asyncpg is not installed ({exc}); install the postgres extra: pip install 'alkstore[postgres]'"
        dsn = self.dsn
        try:
            conn = await _connect(dsn)
        except Exception as exc:
            return (
                f"the Postgres server at {redact_dsn(dsn)} did not answer: {type(exc).__name__}: {exc} "
                f"(set --alkstore-pg-dsn or ${DSN_ENV} to a server where the suite may create and drop schemas, "
                "e.g. a throwaway one: docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15)"
            )
        await conn.close()
        return None

    async def storage_version(self) -> str:
        """For the report: the server's own version string (``server_version``)."""
        return await server_version(self.dsn)

    async def create_location(self) -> str:
        """A fresh schema (``alk_`` + random hex), created and migrated, on the configured server."""
        return await self._schema_on(self.dsn)

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A ``PgStore`` on the location's schema; typed ``Store`` so mypy checks the engine against the contract."""
        from alkstore_postgres.store import store_on

        parsed = Location.decode(location)
        driver = await self._driver_class().open(
            parsed.dsn,
            schema=parsed.schema,
            op_timeout_s=parsed.op_timeout_s or DEFAULT_OP_TIMEOUT_S,
            connect_timeout_s=parsed.connect_timeout_s or DEFAULT_CONNECT_TIMEOUT_S,
        )
        return await store_on(driver, clock=clock, seed=seed)

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: ``count(*)`` of the location's jobs table over a bare connection (kept per event loop)."""
        parsed = Location.decode(location)
        count: int = await self._oracle.fetchval(parsed.dsn, f"SELECT count(*) FROM {quote_ident(parsed.schema)}.jobs")
        return count

    @property
    def restart_within_s(self) -> float:
        """P3: a crashed throwaway cluster accepts connections again within this (it replays its WAL first)."""
        return RESTART_WITHIN_S

    async def _schema_on(self, dsn: str) -> str:
        """A fresh schema, created and migrated, on the server at ``dsn``: its location."""
        from alkstore_postgres.schema import ensure_schema

        location = Location(dsn=dsn, schema=new_schema_name())
        conn = await _connect(location.dsn)
        try:
            await ensure_schema(conn, location.schema)
        finally:
            await conn.close()
        return location.encode()

    async def create_crashable_location(self) -> str:
        """A fresh schema on a throwaway cluster made for it alone, which ``crash_server`` may kill."""
        from alkstore_postgres.provision import ThrowawayCluster

        cluster = await ThrowawayCluster.create()
        self._clusters[cluster.dsn] = cluster
        return await self._schema_on(cluster.dsn)

    async def skewed_server_unavailable_reason(self) -> str | None:
        """``None`` when initdb and libfaketime are here, else which is missing and how to get it."""
        from alkstore_postgres.provision_skewed import skewed_unavailable_reason

        return skewed_unavailable_reason()

    async def create_skewed_server_location(self, offset_s: float) -> str:
        """A fresh schema on this adapter's throwaway cluster whose clock runs ``offset_s`` ahead (started once)."""
        cluster = self._skewed.get(offset_s)
        if cluster is None:
            from alkstore_postgres.provision_skewed import skewed_cluster

            cluster = await skewed_cluster(offset_s)
            self._skewed[offset_s] = cluster
        return await self._schema_on(cluster.dsn)

    def _cluster(self, location: str) -> ThrowawayCluster:
        cluster = self._clusters.get(Location.decode(location).dsn)
        if cluster is None:
            raise InvalidArgument(
                f"location={describe_value(location)}: not a crashable location of this adapter; the suite crashes "
                "only servers it started (create_crashable_location), never the one a user configured"
            )
        return cluster

    async def crash_server(self, location: str) -> None:
        """SIGKILL the location's throwaway server, postmaster and backends at once: no shutdown, no checkpoint."""
        await self._cluster(location).kill()

    async def restart_server(self, location: str) -> None:
        """Start the crashed server on its data directory; returns once it accepts connections."""
        await self._cluster(location).start()

    async def drop_location(self, location: str) -> None:
        """``DROP SCHEMA ... CASCADE``: the jobs, the version table and the function go with it.

        A crashable location goes with its whole throwaway cluster.
        """
        parsed = Location.decode(location)
        cluster = self._clusters.pop(parsed.dsn, None)
        if cluster is not None:
            await cluster.destroy()
            return
        conn = await _connect(parsed.dsn)
        try:
            await conn.execute(f"SET lock_timeout = '{DROP_LOCK_TIMEOUT}'")
            await conn.execute(f"DROP SCHEMA IF EXISTS {quote_ident(parsed.schema)} CASCADE")
        finally:
            await conn.close()


adapter = PgAdapter()
"""The adapter the ``alkstore.engines`` entry point ``postgres`` names."""
