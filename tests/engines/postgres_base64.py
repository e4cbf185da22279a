"""The Postgres engine with its payloads and worker ids sent base64-encoded on the wire: it must be certified.

An engine may encode, compress or encrypt what it sends its server (msgpack,
zlib, TLS); the suite's network faults must meet it exactly as they meet one
that sends payloads verbatim — N3's cuts land at the server's answer to the
op under test, whatever its bytes. This driver sends each payload's JSON text
and each claim's worker id as base64, and the SQL decodes them
(``convert_from(decode(..., 'base64'), 'UTF8')``), so what the table holds is
the same as the engine's. ``tests/test_encoded_engine.py`` runs the suite on it
and demands CERTIFIED with every N clause passed and no leg not run; the
mutants ``pg_encoded_enqueue_retried`` and ``pg_encoded_claim_replayed`` are
this engine with one N3 fault each.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from datetime import datetime
from typing import Any

from alkstore_postgres import PgAdapter, PgDriver

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import Job, JobId

DECODED = "convert_from(decode({}, 'base64'), 'UTF8')"


def _replaced(sql: str, old: str, new: str) -> str:
    """``sql`` with ``old`` replaced; an engine that no longer says ``old`` makes this engine stale, loudly."""
    if old not in sql:
        raise RuntimeError(f"tests/engines/postgres_base64.py is stale: {old!r} is no longer in the engine's SQL")
    return sql.replace(old, new)


def encoded(text: str) -> str:
    """``text`` as it crosses the wire: base64 of its UTF-8 bytes."""
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _encoded_jobs(jobs: NewJobs) -> NewJobs:
    """``jobs`` with every payload as it crosses the wire."""
    return replace(jobs, payloads=[encoded(p) for p in jobs.payloads])


class Base64Driver(PgDriver):
    """``PgDriver`` sending payloads and worker ids base64-encoded, decoded by the server in the statement."""

    INSERT_SQL = _replaced(PgDriver.INSERT_SQL, "SELECT $2, p.payload,", f"SELECT $2, {DECODED.format('p.payload')},")
    INSERT_UNIQUE_SQL = _replaced(PgDriver.INSERT_UNIQUE_SQL, "SELECT $2, $11,", f"SELECT $2, {DECODED.format('$11')},")
    CLAIM_SQL = _replaced(PgDriver.CLAIM_SQL, "claimed_by = $4,", f"claimed_by = {DECODED.format('$4')},")

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        return await super().insert(queue, _encoded_jobs(jobs), now)

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        return await super().insert_unique(queue, unique_key, _encoded_jobs(jobs), now)

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        return await super().insert_in(transaction, queue, _encoded_jobs(jobs), now)

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        return await super().claim(queue, encoded(worker_id), n, token, now)


def base64_adapter(name: str, driver: type[Base64Driver]) -> Any:
    """An adapter of the Postgres engine named ``name`` whose stores run on ``driver``."""
    return type("Base64Adapter", (PgAdapter,), {"driver_class": driver, "name": name})()


adapter = base64_adapter("postgres-base64", Base64Driver)
