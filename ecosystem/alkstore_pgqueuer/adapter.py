"""The adapter of ``pgqueuer`` (the library, pinned by the ``ecosystem`` extra) for the conformance suite.

A location is a schema of its own on the configured server (``--alkstore-pg-dsn``
/ ``$ALKSTORE_PG_DSN``, as for the project's Postgres engine), holding
pgqueuer's tables as ``Queries.install`` makes them and the adapter's claimant
table. ``emulates`` says what the adapter had to build because pgqueuer has no
place for it; every other verdict is pgqueuer's own behaviour.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as distribution_version
from typing import Any

from alkstore_contract.adapter import AdapterOption, Capability
from alkstore_contract.clock import Clock
from alkstore_contract.kit import KitStore
from alkstore_contract.surface import Store
from alkstore_pgqueuer.driver import CLAIMANTS, PgqueuerDriver

PINNED = "1.6.0"
"""The pgqueuer version this adapter and its expected-failures file were written against."""
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
DSN_ENV = "ALKSTORE_PG_DSN"
DSN_OPTION = AdapterOption(
    flag="--alkstore-pgqueuer-dsn",
    ini="alkstore_pgqueuer_dsn",
    env=DSN_ENV,
    help="Postgres server for the pgqueuer adapter",
    default=DEFAULT_DSN,
    metavar="DSN",
)
EMULATES: dict[str, str] = {
    "C3": "claimed_by and attempts: pgqueuer records a queue-manager uuid, not a worker name, and counts "
    "retries, not claims; the adapter claims as uuid5(worker id), keeps the name in a table of its own, and "
    "reports a picked or failed row's attempts as pgqueuer's + 1",
    "D2": "last_error: pgqueuer writes an error to its log table, not to the job; the adapter reads the "
    "latest one back from pgqueuer's own job_log_history",
    "H4": "one-shot handles: the project's kit refuses a second op on a handle before it reaches the library",
    "R2": "the backoff formula: the project's kit computes the contract's equal-jitter delay; the library's retry "
    "call takes whatever delay it is given",
    "R5": "the jitter's spread and its seed: the project's kit draws it, not the library",
}


def _pgqueuer_version() -> str | None:
    try:
        return distribution_version("pgqueuer")
    except PackageNotFoundError:
        return None


def _settings(schema: str) -> Any:
    from pgqueuer.domain.settings import DBSettings

    return DBSettings(db_schema=schema)


def _queries(driver: Any, schema: str) -> Any:
    from pgqueuer.adapters.persistence import qb
    from pgqueuer.queries import Queries

    settings = _settings(schema)
    return Queries(
        driver,
        qbe=qb.QueryBuilderEnvironment(settings=settings),
        qbq=qb.QueryQueueBuilder(settings=settings),
        qbs=qb.QuerySchedulerBuilder(settings=settings),
    )


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class PgqueuerAdapter:
    """pgqueuer under the contract: its ``Queries`` behind the kit (``alkstore.engines``: ``pgqueuer``)."""

    options = (DSN_OPTION,)
    emulates = EMULATES

    def __init__(self) -> None:
        self._dsn: str | None = None

    @property
    def name(self) -> str:
        return "pgqueuer"

    @property
    def version(self) -> str:
        return f"pgqueuer {_pgqueuer_version() or 'not installed'}"

    @property
    def capabilities(self) -> frozenset[Capability]:
        """One schema many stores and processes share, on a server that keeps what it committed."""
        return frozenset({Capability.SHARED_LOCATION, Capability.MULTI_PROCESS, Capability.DURABLE})

    @property
    def dsn(self) -> str:
        return self._dsn or os.environ.get(DSN_ENV) or DEFAULT_DSN

    def configure(self, values: Mapping[str, str | None]) -> None:
        self._dsn = values.get(DSN_OPTION.ini)

    async def unavailable_reason(self) -> str | None:
        found = _pgqueuer_version()
        if found is None:
            return f"pgqueuer is not installed; pip install 'alkstore[ecosystem]' (pins pgqueuer=={PINNED})"
        if found != PINNED:
            return f"pgqueuer {found} is installed; this adapter and its expected failures are for {PINNED}"
        import asyncpg

        try:
            conn = await asyncpg.connect(self.dsn, timeout=5)
        except Exception as exc:
            return f"the Postgres server did not answer: {type(exc).__name__}: {exc} (set ${DSN_ENV})"
        await conn.close()
        return None

    async def storage_version(self) -> str:
        import asyncpg

        conn = await asyncpg.connect(self.dsn, timeout=5)
        try:
            shown: str = await conn.fetchval("SHOW server_version")
        finally:
            await conn.close()
        return f"PostgreSQL {shown}"

    async def create_location(self) -> str:
        """A fresh schema with pgqueuer's tables (``Queries.install``) and the adapter's claimant table."""
        import asyncpg
        from pgqueuer.db import AsyncpgDriver

        schema = f"alk_pgq_{uuid.uuid4().hex[:16]}"
        conn = await asyncpg.connect(self.dsn, timeout=5)
        try:
            await conn.execute(f"CREATE SCHEMA {_quote(schema)}")
            await conn.execute(f"SET search_path TO {_quote(schema)}")
            await _queries(AsyncpgDriver(conn), schema).install()
            await conn.execute(
                f"CREATE TABLE {_quote(schema)}.{CLAIMANTS} (manager uuid PRIMARY KEY, worker_id text NOT NULL)"
            )
        finally:
            await conn.close()
        return json.dumps({"dsn": self.dsn, "schema": schema})

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A kit store over pgqueuer's ``Queries`` on an asyncpg pool; pgqueuer reads time from ``NOW()`` only."""
        import asyncpg
        from pgqueuer.adapters.drivers.asyncpg import AsyncpgPoolDriver

        parsed = json.loads(location)
        schema = parsed["schema"]
        pool = await asyncpg.create_pool(parsed["dsn"], min_size=1, max_size=4, server_settings={"search_path": schema})
        driver = PgqueuerDriver(pool, _queries(AsyncpgPoolDriver(pool), schema), _quote(schema))
        try:
            return KitStore(driver, clock=clock, seed=seed)
        except BaseException:
            await pool.close()
            raise

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: rows of pgqueuer's queue table, over a bare connection."""
        import asyncpg

        parsed = json.loads(location)
        conn = await asyncpg.connect(parsed["dsn"], timeout=5)
        try:
            count: int = await conn.fetchval(f"SELECT count(*) FROM {_quote(parsed['schema'])}.pgqueuer")
        finally:
            await conn.close()
        return count

    async def drop_location(self, location: str) -> None:
        import asyncpg

        parsed = json.loads(location)
        conn = await asyncpg.connect(parsed["dsn"], timeout=5)
        try:
            await conn.execute("SET lock_timeout = '30s'")
            await conn.execute(f"DROP SCHEMA IF EXISTS {_quote(parsed['schema'])} CASCADE")
        finally:
            await conn.close()


adapter = PgqueuerAdapter()
"""The adapter the ``alkstore.engines`` entry point ``pgqueuer`` names."""
