"""The adapter of ``pgqueuer`` (the library, pinned by the ``ecosystem`` extra) for the conformance suite.

A location is a schema of its own on the configured server (``--alkstore-pgqueuer-dsn``
/ ``$ALKSTORE_PG_DSN``, as for the project's Postgres engine), holding
pgqueuer's tables as ``Queries.install`` makes them and the adapter's claimant
table. ``emulates`` says what the adapter had to build because pgqueuer has no
place for it; every other verdict is pgqueuer's own behaviour. What every
Postgres-backed library's adapter does alike is ``alkstore_ecosystem_kit``'s.
"""

from __future__ import annotations

from typing import Any

from alkstore_ecosystem_kit import PostgresLibraryAdapter, quote_ident

from alkstore_contract.adapter import Capability
from alkstore_contract.clock import Clock
from alkstore_contract.kit import KitStore
from alkstore_contract.surface import Store
from alkstore_pgqueuer.driver import CLAIMANTS, PgqueuerDriver

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


def _queries(driver: Any, schema: str) -> Any:
    from pgqueuer.adapters.persistence import qb
    from pgqueuer.domain.settings import DBSettings
    from pgqueuer.queries import Queries

    settings = DBSettings(db_schema=schema)
    return Queries(
        driver,
        qbe=qb.QueryBuilderEnvironment(settings=settings),
        qbq=qb.QueryQueueBuilder(settings=settings),
        qbs=qb.QuerySchedulerBuilder(settings=settings),
    )


class PgqueuerAdapter(PostgresLibraryAdapter):
    """pgqueuer under the contract: its ``Queries`` behind the kit (``alkstore.engines``: ``pgqueuer``)."""

    library = "pgqueuer"
    pinned = "1.6.0"
    schema_prefix = "alk_pgq"
    jobs_table = "pgqueuer"
    emulates = EMULATES

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The kit's, and ``unique_keys``: pgqueuer's ``dedupe_key`` (docs/ecosystem.md). pgqueuer has no release
        (its retry counts an attempt) and its drivers' connections must be in autocommit mode, so no
        ``transactional_enqueue``."""
        return super().capabilities | {Capability.UNIQUE_KEYS}

    async def install(self, conn: Any, dsn: str, schema: str) -> None:
        """pgqueuer's tables (``Queries.install``) and the adapter's claimant table."""
        from pgqueuer.db import AsyncpgDriver

        await conn.execute(f"SET search_path TO {quote_ident(schema)}")
        await _queries(AsyncpgDriver(conn), schema).install()
        await conn.execute(
            f"CREATE TABLE {quote_ident(schema)}.{CLAIMANTS} (manager uuid PRIMARY KEY, worker_id text NOT NULL)"
        )

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A kit store over pgqueuer's ``Queries`` on an asyncpg pool; pgqueuer reads time from ``NOW()`` only."""
        import asyncpg
        from pgqueuer.adapters.drivers.asyncpg import AsyncpgPoolDriver

        dsn, schema = self.location_of(location)
        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, server_settings={"search_path": schema})
        driver = PgqueuerDriver(pool, _queries(AsyncpgPoolDriver(pool), schema), quote_ident(schema))
        try:
            return KitStore(driver, clock=clock, seed=seed)
        except BaseException:
            await pool.close()
            raise


adapter = PgqueuerAdapter()
"""The adapter the ``alkstore.engines`` entry point ``pgqueuer`` names."""
