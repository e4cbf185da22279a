"""The adapter of ``procrastinate`` (the library, pinned by the ``ecosystem`` extra) for the conformance suite.

A location is a schema of its own on the configured server (``--alkstore-pg-dsn``
/ ``$ALKSTORE_PG_DSN``, as for the project's Postgres engine), holding
procrastinate's tables as ``SchemaManager.apply_schema_async`` makes them and the
adapter's worker-name table. ``emulates`` says what the adapter had to build because procrastinate has no
place for it; every other verdict is procrastinate's own behaviour.
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
from alkstore_procrastinate.driver import ProcrastinateDriver, schema_ddl

PINNED = "3.10.0"
"""The procrastinate version this adapter and its expected-failures file were written against."""
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
DSN_ENV = "ALKSTORE_PG_DSN"
DSN_OPTION = AdapterOption(
    flag="--alkstore-procrastinate-dsn",
    ini="alkstore_procrastinate_dsn",
    env=DSN_ENV,
    help="Postgres server for the procrastinate adapter",
    default=DEFAULT_DSN,
    metavar="DSN",
)
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


def _procrastinate_version() -> str | None:
    try:
        return distribution_version("procrastinate")
    except PackageNotFoundError:
        return None


def _app(dsn: str, schema: str) -> Any:
    """A procrastinate ``App`` whose pool's connections use the location's schema (``search_path``)."""
    from procrastinate import App, PsycopgConnector

    connector = PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}, min_size=1, max_size=4)
    return App(connector=connector)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class ProcrastinateAdapter:
    """procrastinate under the contract: its ``JobManager`` behind the kit (``alkstore.engines``: ``procrastinate``)."""

    options = (DSN_OPTION,)
    emulates = EMULATES

    def __init__(self) -> None:
        self._dsn: str | None = None

    @property
    def name(self) -> str:
        return "procrastinate"

    @property
    def version(self) -> str:
        return f"procrastinate {_procrastinate_version() or 'not installed'}"

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
        found = _procrastinate_version()
        if found is None:
            return f"procrastinate is not installed; pip install 'alkstore[ecosystem]' (pins procrastinate=={PINNED})"
        if found != PINNED:
            return f"procrastinate {found} is installed; this adapter and its expected failures are for {PINNED}"
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
        """A fresh schema with procrastinate's tables (``apply_schema_async``) and the adapter's worker-name table."""
        import asyncpg

        schema = f"alk_proc_{uuid.uuid4().hex[:16]}"
        conn = await asyncpg.connect(self.dsn, timeout=5)
        try:
            await conn.execute(f"CREATE SCHEMA {_quote(schema)}")
        finally:
            await conn.close()
        app = _app(self.dsn, schema)
        await app.open_async()
        try:
            await app.schema_manager.apply_schema_async()
            await app.connector.execute_query_async(schema_ddl())
        finally:
            await app.close_async()
        return json.dumps({"dsn": self.dsn, "schema": schema})

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        """A kit store over procrastinate's ``JobManager``; procrastinate reads time from the server only."""
        parsed = json.loads(location)
        app = _app(parsed["dsn"], parsed["schema"])
        await app.open_async()
        try:
            return KitStore(ProcrastinateDriver(app), clock=clock, seed=seed)
        except BaseException:
            await app.close_async()
            raise

    async def count_stored_jobs(self, location: str) -> int:
        """The oracle: rows of procrastinate's jobs table (an ack deletes its row), over a bare connection."""
        import asyncpg

        parsed = json.loads(location)
        conn = await asyncpg.connect(parsed["dsn"], timeout=5)
        try:
            count: int = await conn.fetchval(f"SELECT count(*) FROM {_quote(parsed['schema'])}.procrastinate_jobs")
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


adapter = ProcrastinateAdapter()
"""The adapter the ``alkstore.engines`` entry point ``procrastinate`` names."""
