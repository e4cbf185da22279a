"""The adapter of a Postgres-backed job-queue library, less the library: a schema per location, a pinned version.

Part of the ecosystem adapters (docs/ecosystem.md). pgqueuer and procrastinate
are judged the same way: a location is a fresh schema on the configured server
(``--alkstore-<library>-dsn`` / ``$ALKSTORE_PG_DSN``, as for the project's
Postgres engine), the library's own tables in it, and the jobs table counted
over a bare connection as the oracle. Only the library's mapping differs: how
its tables are installed (``install``) and how a store is opened over it
(``open_store``), each in the library's own package. Keeping the rest here
means a fix to how a schema is made, checked or dropped reaches every library
at once, so no column of the matrix rests on an older copy.
"""

from __future__ import annotations

import json
import os
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as distribution_version
from typing import Any, ClassVar

from alkstore_postgres.adapter import server_version

from alkstore_contract.adapter import AdapterOption, Capability
from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
DSN_ENV = "ALKSTORE_PG_DSN"


def dsn_from_env() -> str:
    """The server a reproduction script uses when given none: ``$ALKSTORE_PG_DSN``, else the local default."""
    return os.environ.get(DSN_ENV) or DEFAULT_DSN


def quote_ident(name: str) -> str:
    """A Postgres identifier, quoted (a schema name goes into DDL, which takes no parameters)."""
    return '"' + name.replace('"', '""') + '"'


def _installed_version(distribution: str) -> str | None:
    try:
        return distribution_version(distribution)
    except PackageNotFoundError:
        return None


class PostgresLibraryAdapter(ABC):
    """An engine adapter over a library that keeps its jobs in Postgres tables of its own.

    A subclass names the library (its PyPI distribution, also the engine's
    name), the version it was written against, its schema prefix and jobs
    table, and what it ``emulates``; it implements ``install`` and
    ``open_store``. A location is ``{"dsn": …, "schema": …}`` as JSON.
    """

    library: ClassVar[str]
    """The PyPI distribution and the name users pass to ``--alkstore-engine``."""
    pinned: ClassVar[str]
    """The version this adapter and its expected-failures file were written against."""
    schema_prefix: ClassVar[str]
    jobs_table: ClassVar[str]
    """The library's table of jobs in the location's schema: the oracle counts its rows."""
    emulates: ClassVar[dict[str, str]]

    def __init__(self) -> None:
        self._dsn: str | None = None
        self.options = (
            AdapterOption(
                flag=f"--alkstore-{self.library}-dsn",
                ini=f"alkstore_{self.library}_dsn",
                env=DSN_ENV,
                help=f"Postgres server for the {self.library} adapter",
                default=DEFAULT_DSN,
                metavar="DSN",
            ),
        )

    @abstractmethod
    async def install(self, conn: Any, dsn: str, schema: str) -> None:
        """Put the library's tables (and the adapter's own) into the fresh ``schema``; ``conn`` is an asyncpg
        connection to ``dsn`` the schema was created on."""

    @abstractmethod
    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A kit store over the library on ``location`` (see ``location_of``)."""

    @staticmethod
    def location_of(location: str) -> tuple[str, str]:
        """``(dsn, schema)`` of a location this adapter made."""
        parsed = json.loads(location)
        return parsed["dsn"], parsed["schema"]

    @property
    def name(self) -> str:
        return self.library

    @property
    def version(self) -> str:
        return f"{self.library} {_installed_version(self.library) or 'not installed'}"

    @property
    def capabilities(self) -> frozenset[Capability]:
        """One schema many stores and processes share, on a server that keeps what it committed."""
        return frozenset({Capability.SHARED_LOCATION, Capability.MULTI_PROCESS, Capability.DURABLE})

    @property
    def dsn(self) -> str:
        return self._dsn or dsn_from_env()

    def configure(self, values: Mapping[str, str | None]) -> None:
        self._dsn = values.get(self.options[0].ini)

    async def unavailable_reason(self) -> str | None:
        found = _installed_version(self.library)
        if found is None:
            pins = f"{self.library}=={self.pinned}"
            return f"{self.library} is not installed; pip install 'alkstore[ecosystem]' (pins {pins})"
        if found != self.pinned:
            return f"{self.library} {found} is installed; this adapter and its expected failures are for {self.pinned}"
        import asyncpg

        try:
            conn = await asyncpg.connect(self.dsn, timeout=5)
        except Exception as exc:
            return f"the Postgres server did not answer: {type(exc).__name__}: {exc} (set ${DSN_ENV})"
        await conn.close()
        return None

    async def storage_version(self) -> str:
        return await server_version(self.dsn)

    async def create_location(self) -> str:
        """A fresh schema holding what ``install`` puts in it."""
        import asyncpg

        schema = f"{self.schema_prefix}_{uuid.uuid4().hex[:16]}"
        conn = await asyncpg.connect(self.dsn, timeout=5)
        try:
            await conn.execute(f"CREATE SCHEMA {quote_ident(schema)}")
            await self.install(conn, self.dsn, schema)
        finally:
            await conn.close()
        return json.dumps({"dsn": self.dsn, "schema": schema})

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: rows of the library's jobs table, over a bare connection."""
        import asyncpg

        dsn, schema = self.location_of(location)
        conn = await asyncpg.connect(dsn, timeout=5)
        try:
            count: int = await conn.fetchval(f"SELECT count(*) FROM {quote_ident(schema)}.{self.jobs_table}")
        finally:
            await conn.close()
        return count

    async def drop_location(self, location: str) -> None:
        import asyncpg

        dsn, schema = self.location_of(location)
        conn = await asyncpg.connect(dsn, timeout=5)
        try:
            await conn.execute("SET lock_timeout = '30s'")
            await conn.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema)} CASCADE")
        finally:
            await conn.close()
