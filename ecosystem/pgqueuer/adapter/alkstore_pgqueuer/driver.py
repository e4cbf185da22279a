"""The kit's storage driver over pgqueuer's own ``Queries``: each step is the library's public call.

pgqueuer (1.6.0) keeps a job as a row of its queue table: ``priority``
(``integer``), ``execute_after``, ``status`` (``queued``, ``picked``,
``failed``), ``heartbeat``, ``attempts`` (retries so far), ``queue_manager_id``
and ``headers`` (``jsonb``). The driver maps the contract onto that:

- a contract queue is an entrypoint; ``insert`` is ``Queries.enqueue`` with
  ``execute_after = run_at - now`` and the contract's stamps (visibility
  timeout, max attempts, backoff base, expiry, retention) in ``headers``;
- ``claim`` is ``Queries.dequeue`` with ``heartbeat_timeout`` the visibility
  timeout: it hands out queued rows and picked rows whose heartbeat is older
  than that, in pgqueuer's order (priority desc, id asc);
- ``ack`` is ``Queries.log_jobs(…, "successful")``, ``retry`` is
  ``Queries.retry_job``, ``dead_letter`` is ``log_jobs(…, "failed")`` (pgqueuer
  holds failed rows in its table), ``heartbeat`` is ``Queries.update_heartbeat``,
  ``cancel`` is ``Queries.mark_job_as_cancelled``;
- the claim token is not stored and not checked: pgqueuer completes a job by id;
- ``insert_unique`` (K1–K4) is ``Queries.enqueue(…, dedupe_key=the key, on_conflict="skip")``: pgqueuer's
  partial unique index over ``dedupe_key`` of queued and picked rows decides, and a skipped enqueue is
  answered with the holder's id, read from pgqueuer's table. The index is over the key alone, not the
  entrypoint, so a key is one across every queue of the location (what K1 calls another queue's key).

What pgqueuer has no place for is said, clause by clause, in the adapter's
``emulates``: the claimant's name (pgqueuer records a queue-manager uuid) is
kept in a table of the adapter's own; pgqueuer's ``attempts`` counts retries,
so a picked or failed row reports one more (the claim in hand); and the last
error is read back from pgqueuer's own log table. pgqueuer reads time from the server (``NOW()``), so
the driver never receives ``now`` and the store is opened without a clock.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from alkstore_contract.kit import int_job_id
from alkstore_contract.resolution import NewJobs
from alkstore_contract.types import Job, JobId, JobState
from alkstore_contract.validation import decode_payload

STAMPS = "alkstore"
"""The header under which the contract's stamps ride with a job (pgqueuer keeps headers verbatim)."""
CLAIMANTS = "alkstore_claimants"
"""The adapter's own table: queue-manager uuid → the worker id the contract names (C3's ``claimed_by``)."""
_WORKERS = uuid.UUID("6f0b1f3e-2a52-4d7c-9a57-6b1d0d0e9c11")
_STATES = {"queued": JobState.READY, "picked": JobState.PROCESSING, "failed": JobState.DEAD}


def manager_id(worker_id: str) -> uuid.UUID:
    """The queue-manager uuid a worker id claims as (stable, so every process maps a name alike)."""
    return uuid.uuid5(_WORKERS, worker_id)


def _stamps(jobs: NewJobs) -> dict[str, str]:
    """The stamps pgqueuer has no column for; expiry relative, as pgqueuer's own ``created`` is the enqueue's now."""
    return {
        STAMPS: json.dumps(
            {
                "max_attempts": jobs.max_attempts,
                "visibility_timeout_s": jobs.visibility_timeout_s,
                "backoff_base_s": jobs.backoff_base_s,
                "dead_letter_retention_s": jobs.dead_letter_retention_s,
                "expires_s": jobs.expires_s,
            }
        )
    }


class PgqueuerDriver:
    """One store's connection pool and pgqueuer ``Queries`` on one location's schema."""

    def __init__(self, pool: Any, queries: Any, schema: str) -> None:
        self._pool = pool
        self._queries = queries
        self._schema = schema

    @property
    def queries(self) -> Any:
        return self._queries

    async def _server_now(self) -> datetime:
        now: datetime = await self._pool.fetchval("SELECT now()")
        return now

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        enqueued_at = await self._server_now()
        run_at = jobs.run_at_from(enqueued_at)
        count = len(jobs.payloads)
        ids = await self._queries.enqueue(
            [queue] * count,
            [text.encode() for text in jobs.payloads],
            [jobs.priority] * count,
            [run_at - enqueued_at] * count,
            None,
            [_stamps(jobs)] * count,
        )
        return [int(i) for i in ids]

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        """pgqueuer's own dedupe: its enqueue skips a key a queued or picked job holds; then the holder is read.

        The holder may finish between the skip and the read: then the key is free and the enqueue runs again.
        """
        while True:
            enqueued_at = await self._server_now()
            ids = await self._queries.enqueue(
                [queue],
                [jobs.payloads[0].encode()],
                [jobs.priority],
                [jobs.run_at_from(enqueued_at) - enqueued_at],
                [unique_key],
                [_stamps(jobs)],
                on_conflict="skip",
            )
            if ids[0] is not None:
                return int(ids[0]), True
            holder = await self._pool.fetchval(
                f"SELECT id FROM {self._schema}.pgqueuer WHERE dedupe_key = $1 AND status IN ('queued', 'picked')",
                unique_key,
            )
            if holder is not None:
                return int(holder), False

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        from pgqueuer.queries import EntrypointExecutionParameter

        stamps = await self._queue_stamps(queue)
        if stamps is None:
            return []
        manager = manager_id(worker_id)
        await self._pool.execute(
            f"INSERT INTO {self._schema}.{CLAIMANTS} (manager, worker_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            manager,
            worker_id,
        )
        picked = await self._queries.dequeue(
            batch_size=n,
            entrypoints={queue: EntrypointExecutionParameter(concurrency_limit=0)},
            queue_manager_id=manager,
            global_concurrency_limit=None,
            heartbeat_timeout=timedelta(seconds=float(stamps["visibility_timeout_s"])),
        )
        return [await self._job(row, queue) for row in picked]

    async def _queue_stamps(self, queue: str) -> dict[str, Any] | None:
        """The stamps of any one job of ``queue`` (the claim's heartbeat timeout is the queue's visibility timeout)."""
        headers = await self._pool.fetchval(
            f"SELECT headers FROM {self._schema}.pgqueuer WHERE entrypoint = $1 LIMIT 1", queue
        )
        return None if headers is None else dict(json.loads(json.loads(headers)[STAMPS]))

    async def _found(self, queue: str, job_id: JobId) -> Any:
        number = int_job_id(job_id)
        if number is None:
            return None
        row = await self._queries.queue_job_by_id(number)
        return row if row is not None and row.entrypoint == queue else None

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        row = await self._found(queue, job_id)
        if row is None:
            return False
        await self._queries.log_jobs([(row, "successful", None)])
        return True

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        from pgqueuer.models import TracebackRecord

        row = await self._found(queue, job_id)
        if row is None:
            return False
        record = None if last_error is None else _record(TracebackRecord, row.id, last_error)
        await self._queries.retry_job(row, timedelta(seconds=delay_s), record)
        return True

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        from pgqueuer.models import TracebackRecord

        row = await self._found(queue, job_id)
        if row is None:
            return False
        await self._queries.log_jobs([(row, "failed", _record(TracebackRecord, row.id, last_error))])
        return True

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        row = await self._found(queue, job_id)
        if row is None:
            return False
        await self._queries.update_heartbeat([row.id])
        return True

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        rows = [row for job_id in job_ids if (row := await self._found(queue, job_id)) is not None]
        if rows:
            await self._queries.log_jobs([(row, "successful", None) for row in rows])
        return len(rows)

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        row = await self._found(queue, job_id)
        if row is None:
            return False
        await self._queries.mark_job_as_cancelled([row.id])
        return True

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        row = await self._found(queue, job_id)
        return None if row is None else await self._job(row, queue)

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        """pgqueuer has no expiry, attempt limit or dead-letter retention to sweep by: nothing moves."""
        return 0

    async def close(self) -> None:
        await self._pool.close()

    async def _job(self, row: Any, queue: str) -> Job:
        """A contract snapshot of one pgqueuer row, its stamps from the row's own headers."""
        stamps = json.loads(row.headers[STAMPS])
        state = _STATES[row.status]
        vt = float(stamps["visibility_timeout_s"])
        claimed_by = None
        if state is JobState.PROCESSING and row.queue_manager_id is not None:
            claimed_by = await self._pool.fetchval(
                f"SELECT worker_id FROM {self._schema}.{CLAIMANTS} WHERE manager = $1", row.queue_manager_id
            )
        last_error = None
        died_at = None
        for entry in reversed(await self._queries.job_log_history(row.id)):
            if entry.traceback is not None and last_error is None:
                last_error = entry.traceback.exception_message
        if state is JobState.DEAD:
            died_at = row.updated
        expires_s = stamps["expires_s"]
        created = row.created.astimezone(UTC)
        return Job(
            row.id,
            queue,
            decode_payload(row.payload.decode()),
            state,
            row.priority,
            row.attempts if state is JobState.READY else row.attempts + 1,
            int(stamps["max_attempts"]),
            row.execute_after.astimezone(UTC),
            None if expires_s is None else created + timedelta(seconds=expires_s),
            created,
            row.heartbeat.astimezone(UTC) + timedelta(seconds=vt) if state is JobState.PROCESSING else None,
            claimed_by,
            vt,
            float(stamps["backoff_base_s"]),
            stamps["dead_letter_retention_s"],
            last_error,
            died_at,
        )


def _record(record_type: Any, job_id: int, error: str) -> Any:
    """pgqueuer's own error record (what its executors write on an exception), carrying the contract's message."""
    return record_type(
        job_id=job_id,
        timestamp=datetime.now(UTC),
        exception_type="alkstore",
        exception_message=error,
        traceback="",
        additional_context=None,
    )
