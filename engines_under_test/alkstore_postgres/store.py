"""The store: one asyncpg pool on one schema, its clock and random source, and how statements run.

Table names are spliced into SQL text, qualified with the quoted schema,
rather than found through ``search_path`` set in ``server_settings``: a
qualified text names its table wherever it runs (a pooler in transaction mode
such as PgBouncer does not carry session settings; a ``public.jobs`` can never
shadow the store's table), and it reads unambiguously in ``pg_stat_activity``
and the server log. Each store renders its texts once and keeps them constant,
so asyncpg's per-connection statement cache prepares each one once.

Network faults (SPEC N1–N3). Every operation is one statement on a pooled
connection, bounded three ways: acquiring a connection (waiting for a free one
or opening a new one) gives up after ``connect_timeout_s``; the statement gives
up after ``op_timeout_s`` (asyncpg's ``command_timeout``), after which asyncpg
sends the server a cancel request, itself bounded by both; releasing the
connection waits at most ``connect_timeout_s`` for that cancel and otherwise
terminates the connection. So an operation during an outage raises
``StoreUnavailable`` (``ServerConnectionError``) within ``outage_bound_s`` =
``2 × connect_timeout_s + op_timeout_s``, never hangs. A connection that broke
or timed out is dropped, and the pool opens a fresh one on the next acquire,
so the same open store serves again as soon as the server answers (N2). A
statement is never retried: after a lost answer nobody knows whether it
committed, and replaying an enqueue or a claim could store or hand out a job
twice (N3); the caller is told the outcome is unknown.
"""

from __future__ import annotations

import asyncio
import random
from datetime import datetime
from types import TracebackType
from typing import Any, ClassVar, Self

import asyncpg

from alkstore_contract.clock import Clock
from alkstore_contract.errors import InvalidArgument
from alkstore_contract.handles import raise_if_closed
from alkstore_contract.types import QueueOpts, validate_queue_opts
from alkstore_contract.validation import validate_instant, validate_queue_name
from alkstore_postgres.connection import StatelessConnection
from alkstore_postgres.errors import ServerConnectionError
from alkstore_postgres.location import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_OP_TIMEOUT_S,
    outage_bound_s,
    quote_ident,
    redact_dsn,
    validate_schema_name,
)
from alkstore_postgres.queue import PgQueue
from alkstore_postgres.rows import JOB_COLUMNS
from alkstore_postgres.schema import ensure_schema
from alkstore_postgres.upkeep import Upkeep

DEFAULT_SCHEMA = "alkstore"

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.exceptions.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.InternalClientError,
    OSError,
    TimeoutError,
)
"""What a lost or refused connection raises: a terminated backend (57P01), a dropped socket, a server down.

A backend killed under load mostly surfaces as asyncpg's ``ConnectionDoesNotExistError`` ("connection was
closed in the middle of operation"); one killed while its pooled connection sat idle can surface as
``InternalClientError`` ("cannot switch to state N; another operation (2) is in progress": the connection
is still consuming the server's FATAL message, asyncpg issues #784 and #1069). ``TimeoutError`` is a
statement, an acquire or a cancel that outlived its timeout (a silent server).
"""


def is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` says the server could not be reached, rather than that a statement was wrong.

    Besides ``CONNECTION_ERRORS``, asyncpg raises a bare ``InterfaceError``
    ("connection is closed") on a connection that was lost between two uses.
    Other interface errors (another operation in progress, bad client
    configuration, bad parameters) are bugs, not outages, and pass through.
    """
    if isinstance(exc, CONNECTION_ERRORS):
        return True
    return type(exc) is asyncpg.exceptions.InterfaceError and "connection is closed" in str(exc)


def application_name(schema: str) -> str:
    """The ``application_name`` of a store's connections, so an operator can find them in ``pg_stat_activity``."""
    return f"alkstore {schema}"


def _timeout(arg: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidArgument(f"{arg}={value!r}: a timeout must be a positive number of seconds")
    return float(value)


def _pool_size(arg: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(f"{arg}={value!r}: a pool size must be an int >= {minimum}")
    return value


class PgStore:
    """An open Postgres store. Create it with ``open_store`` (or ``PgStore.open``), not the constructor."""

    queue_class: ClassVar[type[PgQueue]] = PgQueue

    def __init__(
        self,
        pool: Any,
        *,
        schema: str,
        clock: Clock | None,
        seed: int | None,
        op_timeout_s: float = DEFAULT_OP_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        self._pool = pool
        self._op_timeout_s = op_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._schema = schema
        self._clock = clock
        self._rng = random.Random(seed)
        self._closed = False
        quoted = quote_ident(schema)
        self._placeholders = {
            "jobs": f"{quoted}.jobs",
            "schema": quoted,
            "columns": ", ".join(JOB_COLUMNS),
            "j_columns": ", ".join(f"j.{column}" for column in JOB_COLUMNS),
        }
        self._rendered: dict[str, str] = {}
        self.upkeep = Upkeep(pool, self._placeholders["jobs"])
        """Vacuums the jobs table as the store's own statements leave dead rows (see ``upkeep``)."""

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        clock: Clock | None = None,
        seed: int | None = None,
        min_size: int = 1,
        max_size: int = 10,
        op_timeout_s: float = DEFAULT_OP_TIMEOUT_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> Self:
        """Validate, create the pool, create or migrate the schema, and return the open store."""
        if not isinstance(dsn, str) or not dsn:
            raise InvalidArgument(f"dsn={dsn!r}: must be a non-empty str such as postgresql://user@host:5432/db")
        schema = validate_schema_name(schema)
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidArgument(f"clock={clock!r}: must have a now() returning an aware datetime, or be None")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidArgument(f"seed={seed!r}: must be an int or None")
        min_size = _pool_size("min_size", min_size, 0)
        max_size = _pool_size("max_size", max_size, max(min_size, 1))
        op_timeout_s = _timeout("op_timeout_s", op_timeout_s)
        connect_timeout_s = _timeout("connect_timeout_s", connect_timeout_s)
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                timeout=connect_timeout_s,
                command_timeout=op_timeout_s,
                server_settings={"application_name": application_name(schema)},
                # Released without asyncpg's reset query: one round trip per operation, not two.
                connection_class=StatelessConnection,
            )
        except CONNECTION_ERRORS as exc:
            raise ServerConnectionError(f"open_store: could not connect to {redact_dsn(dsn)}: {exc!r}") from exc
        try:
            async with pool.acquire(timeout=connect_timeout_s) as conn:
                await ensure_schema(conn, schema)
        except BaseException as exc:
            pool.terminate()
            if is_connection_error(exc):
                raise ServerConnectionError(
                    f"open_store: the connection to {redact_dsn(dsn)} failed while preparing schema {schema!r}: {exc!r}"
                ) from exc
            raise
        return cls(
            pool, schema=schema, clock=clock, seed=seed, op_timeout_s=op_timeout_s, connect_timeout_s=connect_timeout_s
        )

    @property
    def schema(self) -> str:
        return self._schema

    @property
    def rng(self) -> random.Random:
        """The store's own random source (backoff jitter, R5), seeded by ``open_store``'s ``seed``."""
        return self._rng

    @property
    def closed(self) -> bool:
        return self._closed

    def now_param(self) -> datetime | None:
        """The ``now`` parameter of a statement: the injected clock's instant, or ``None`` for the server's.

        Every statement computes ``COALESCE($1::timestamptz, statement_timestamp())``
        once, so with ``clock=None`` all worker hosts share the database
        server's clock (T3), and an injected clock overrides it through the
        very same SQL (T2).
        """
        if self._clock is None:
            return None
        return validate_instant("clock.now()", self._clock.now())

    def sql(self, template: str) -> str:
        """``template`` with this store's schema, table and column lists filled in (rendered once)."""
        text = self._rendered.get(template)
        if text is None:
            text = self._rendered[template] = template.format(**self._placeholders)
        return text

    async def fetch(self, op: str, template: str, *args: object) -> list[Any]:
        """Run one statement on a pooled connection; a lost or silent server becomes ``ServerConnectionError``.

        Bounded as the module docstring says (N1). asyncpg's pool drops a
        connection that broke and opens a new one on the next acquire, so the
        store heals once the server answers (N2). The statement is not retried
        here: after a lost connection nobody knows whether it committed, and
        replaying a claim or an enqueue could duplicate it (N3).
        """
        try:
            return await self._fetch(self.sql(template), *args)
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            raise ServerConnectionError(
                f"{op}: the connection to the Postgres server failed ({exc!r}); the operation was not confirmed "
                "and may or may not have taken effect; the next operation uses a fresh connection"
            ) from exc

    async def _fetch(self, sql: str, *args: object) -> list[Any]:
        async with self._pool.acquire(timeout=self._connect_timeout_s) as conn:
            rows: list[Any] = await conn.fetch(sql, *args)
        return rows

    def queue(self, name: str, opts: QueueOpts | None = None) -> PgQueue:
        """A handle on queue ``name`` (S1: validates, no I/O)."""
        raise_if_closed(self._closed, "queue()")
        name = validate_queue_name(name)
        return self.queue_class(self, name, validate_queue_opts(opts))

    async def close(self) -> None:
        """Close the pool, letting operations in flight finish; idempotent (S3).

        A server that does not answer the goodbye within the outage bound gets
        its connections dropped instead, so closing never hangs either.
        """
        if self._closed:
            return
        self._closed = True
        await self.upkeep.close()
        try:
            async with asyncio.timeout(outage_bound_s(self._op_timeout_s, self._connect_timeout_s)):
                await self._pool.close()
        except TimeoutError:
            self._pool.terminate()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


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
    outage (the module docstring says how).
    """
    return await PgStore.open(
        dsn,
        schema=schema,
        clock=clock,
        seed=seed,
        min_size=min_size,
        max_size=max_size,
        op_timeout_s=op_timeout_s,
        connect_timeout_s=connect_timeout_s,
    )
