"""The adapter of ``procrastinate`` (the library, pinned by the ``ecosystem`` extra) for the conformance suite.

A location is a schema of its own on the configured server (``--alkstore-procrastinate-dsn``
/ ``$ALKSTORE_PG_DSN``, as for the project's Postgres engine), holding
procrastinate's tables as ``SchemaManager.apply_schema_async`` makes them and the
adapter's worker-name table. ``emulates`` says what the adapter had to build because procrastinate has no
place for it; every other verdict is procrastinate's own behaviour. What every Postgres-backed library's adapter
does alike is ``alkstore_ecosystem_kit``'s.
"""

from __future__ import annotations

from typing import Any

from alkstore_ecosystem_kit import PostgresLibraryAdapter
from alkstore_postgres.adapter import OwnConnectionTransaction

from alkstore_contract.adapter import CallerTransaction, Capability
from alkstore_contract.clock import Clock
from alkstore_contract.kit import KitStore
from alkstore_contract.surface import Store
from alkstore_procrastinate.driver import ProcrastinateDriver, schema_ddl

EMULATES: dict[str, str] = {
    "C1": "reclaiming a lapsed lease: procrastinate's worker reclaims nothing by itself (it only prunes stalled "
    "workers); the adapter runs the library's own recovery, get_stalled_jobs(queue, seconds_since_heartbeat=the "
    "visibility timeout) and retry_job on each, before every claim",
    "C3": "claimed_by, attempts and the lease: procrastinate records an integer worker id, counts finished or "
    "retried runs rather than claims, and keeps liveness per worker; the adapter registers a procrastinate worker "
    "per claim, keeps its name in a table of its own, reports a doing job's attempts as procrastinate's + 1 and "
    "its lease as its worker's last heartbeat + the visibility timeout",
    "H4": "one-shot handles: the project's kit refuses a second op on a handle before it reaches the library",
    "R2": "the backoff formula: the project's kit computes the contract's equal-jitter delay; the library's retry "
    "call takes whatever delay it is given",
    "R5": "the jitter's spread and its seed: the project's kit draws it, not the library",
}


class PsycopgCallerTransaction(OwnConnectionTransaction):
    """An application's transaction as procrastinate's docs have one: a psycopg ``AsyncConnection`` outside
    autocommit (psycopg opens the transaction at its first statement, and the connection's ``commit`` or
    ``rollback`` ends it), on the location's schema (W1–W4). ``enqueue_in`` takes the connection as
    procrastinate's ``connection`` option."""

    @classmethod
    async def begin(cls, dsn: str, schema: str) -> PsycopgCallerTransaction:
        import psycopg

        connection = await psycopg.AsyncConnection.connect(dsn, options=f"-c search_path={schema}")
        await connection.execute("SELECT 1")  # the caller's transaction is open, before the job is enqueued in it
        return cls(connection, connection)


def _app(dsn: str, schema: str) -> Any:
    """A procrastinate ``App`` whose pool's connections use the location's schema (``search_path``)."""
    from procrastinate import App, PsycopgConnector

    connector = PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}, min_size=1, max_size=4)
    return App(connector=connector)


class ProcrastinateAdapter(PostgresLibraryAdapter):
    """procrastinate under the contract: its ``JobManager`` behind the kit (``alkstore.engines``: ``procrastinate``)."""

    library = "procrastinate"
    pinned = "3.10.0"
    schema_prefix = "alk_proc"
    jobs_table = "procrastinate_jobs"
    """An ack deletes its row."""
    emulates = EMULATES

    @property
    def capabilities(self) -> frozenset[Capability]:
        """The kit's, ``unique_keys`` (procrastinate's ``queueing_lock``) and ``transactional_enqueue`` (its
        ``connection`` option); procrastinate has no release: its retry counts an attempt (docs/ecosystem.md)."""
        return super().capabilities | {Capability.UNIQUE_KEYS, Capability.TRANSACTIONAL_ENQUEUE}

    async def begin_transaction(self, location: str) -> CallerTransaction:
        """W1–W4: a caller's transaction on the location's schema, on a psycopg connection of its own."""
        return await PsycopgCallerTransaction.begin(*self.location_of(location))

    async def install(self, conn: Any, dsn: str, schema: str) -> None:
        """procrastinate's tables (``apply_schema_async``, over its own connector) and the adapter's worker-name
        table."""
        app = _app(dsn, schema)
        await app.open_async()
        try:
            await app.schema_manager.apply_schema_async()
            await app.connector.execute_query_async(schema_ddl())
        finally:
            await app.close_async()

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A kit store over procrastinate's ``JobManager``; procrastinate reads time from the server only."""
        app = _app(*self.location_of(location))
        await app.open_async()
        try:
            return KitStore(ProcrastinateDriver(app), clock=clock, seed=seed)
        except BaseException:
            await app.close_async()
            raise


adapter = ProcrastinateAdapter()
"""The adapter the ``alkstore.engines`` entry point ``procrastinate`` names."""
