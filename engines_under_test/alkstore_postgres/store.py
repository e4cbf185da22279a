"""A Postgres store: the kit's store over a ``PgDriver`` on one schema of one database."""

from __future__ import annotations

from alkstore_contract.clock import Clock
from alkstore_contract.kit import KitStore
from alkstore_postgres.driver import DEFAULT_SCHEMA, PgDriver
from alkstore_postgres.location import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_OP_TIMEOUT_S


class PgStore(KitStore[PgDriver]):
    """An open Postgres store. Create it with ``open_store``, not the constructor.

    Opened with ``clock=None`` (the default), it hands the driver ``now=None``
    and every statement reads the database server's clock (T3).
    """

    @property
    def schema(self) -> str:
        """The schema holding this store's jobs table."""
        return self.driver.schema


async def open_store(
    dsn: str,
    *,
    schema: str = DEFAULT_SCHEMA,
    clock: Clock | None = None,
    seed: int | None = None,
    min_size: int = 1,
    max_size: int = 10,
    op_timeout_s: float = DEFAULT_OP_TIMEOUT_S,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> PgStore:
    """Open a store on schema ``schema`` of the database at ``dsn``, creating or migrating it.

    ``clock=None`` uses the database server's clock (T3); ``seed`` seeds the
    backoff jitter; ``min_size``/``max_size`` size the store's asyncpg pool;
    ``op_timeout_s`` and ``connect_timeout_s`` bound every operation during an
    outage (``alkstore_postgres.driver`` says how).
    """
    driver = await PgDriver.open(
        dsn,
        schema=schema,
        min_size=min_size,
        max_size=max_size,
        op_timeout_s=op_timeout_s,
        connect_timeout_s=connect_timeout_s,
    )
    return await store_on(driver, clock=clock, seed=seed)


async def store_on(driver: PgDriver, *, clock: Clock | None, seed: int | None) -> PgStore:
    """The store over an open ``driver`` (the adapter's ``driver_class``: a mutant puts a subclass there).

    The kit refuses a bad ``clock`` when the store is built, after the pool
    exists; the driver is then closed again, so a refused store holds nothing.
    """
    try:
        return PgStore(driver, clock=clock, seed=seed)
    except BaseException:
        await driver.close()
        raise
