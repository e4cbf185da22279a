"""The kit's storage driver over procrastinate's own ``JobManager``: each step is the library's public call.

procrastinate (3.10.0) keeps a job as a row of ``procrastinate_jobs``: ``queue_name``, ``priority``
(``integer``), ``task_kwargs`` (``args``, ``jsonb``), ``status`` (``todo``, ``doing``, ``failed``, …),
``scheduled_at``, ``attempts`` (finished or retried runs) and ``worker_id``. Liveness is per *worker*:
a worker row with ``last_heartbeat``, and a job is stalled when its worker's heartbeat is older than a
number of seconds. The driver maps the contract onto that:

- ``insert`` is ``JobManager.batch_defer_jobs_async`` (``scheduled_at`` absolute, the payload and the
  contract's stamps in the job's kwargs);
- ``claim`` registers a procrastinate worker for the claim (``register_worker``: its heartbeat is the
  claim's lease start), asks ``get_stalled_jobs`` for the queue's jobs whose worker went quiet for the
  visibility timeout and hands them back with ``retry_job`` (what procrastinate's own worker loop does
  on its schedule), then takes jobs with ``fetch_job`` (priority desc, id asc);
- ``ack`` is ``finish_job_by_id_async(…, succeeded, delete_job=True)``, ``retry`` is
  ``retry_job_by_id_async``, ``dead_letter`` is ``finish_job_by_id_async(…, failed)``, ``heartbeat``
  is ``update_heartbeat`` of the claim's worker, ``cancel`` is ``cancel_job_by_id_async(delete_job=True)``;
- the claim token is not stored and not checked: procrastinate finishes a job by id;
- ``insert_unique`` (K1–K4) is ``defer_job_async`` with the key as the job's ``queueing_lock``, whose
  partial unique index holds only while the job is ``todo`` (waiting), over every queue of the location;
- ``insert_in`` (W1–W4) is ``batch_defer_jobs_async`` with the caller's psycopg connection as its
  ``connection``: procrastinate's INSERT runs there and the caller commits or rolls back.

procrastinate reads time from the server (``now()``), so the driver never receives ``now``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from alkstore_contract.kit import int_job_id
from alkstore_contract.resolution import NewJobs
from alkstore_contract.types import Job, JobId, JobState
from alkstore_contract.validation import decode_payload

TASK = "alkstore"
"""The task name every contract job is deferred under."""
WORKERS = "alkstore_workers"
"""The adapter's own table: procrastinate worker id → the worker id the contract names (C3's ``claimed_by``)."""
_STATES = {"todo": JobState.READY, "doing": JobState.PROCESSING, "failed": JobState.DEAD}


class ProcrastinateDriver:
    """One store's procrastinate ``App`` (its connector pool) on one location's schema."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._manager = app.job_manager
        self._connector = app.connector

    async def _one(self, query: str, **params: Any) -> dict[str, Any]:
        row: dict[str, Any] = await self._connector.execute_query_one_async(query, **params)
        return row

    async def _server_now(self) -> datetime:
        return (await self._one("SELECT now() AS now"))["now"].astimezone(UTC)  # type: ignore[no-any-return]

    async def _new_jobs(self, queue: str, jobs: NewJobs, queueing_lock: str | None = None) -> list[Any]:
        """procrastinate jobs for ``jobs``, stamped from the server's clock now (its own ``now()``)."""
        from procrastinate.jobs import Job as ProcJob

        enqueued_at = await self._server_now()
        expires = jobs.expires_at_from(enqueued_at)
        stamps: dict[str, Any] = {
            "max_attempts": jobs.max_attempts,
            "visibility_timeout_s": jobs.visibility_timeout_s,
            "backoff_base_s": jobs.backoff_base_s,
            "dead_letter_retention_s": jobs.dead_letter_retention_s,
            "expires_at": None if expires is None else expires.isoformat(),
            "enqueued_at": enqueued_at.isoformat(),
        }
        return [
            ProcJob(
                id=None,
                queue=queue,
                priority=jobs.priority,
                lock=None,
                queueing_lock=queueing_lock,
                task_name=TASK,
                task_kwargs={"payload": text, "alkstore": stamps},
                scheduled_at=jobs.run_at_from(enqueued_at),
            )
            for text in jobs.payloads
        ]

    async def insert(self, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        deferred = await self._manager.batch_defer_jobs_async(await self._new_jobs(queue, jobs))
        return [int(job.id) for job in deferred]

    async def insert_unique(
        self, queue: str, unique_key: str, jobs: NewJobs, now: datetime | None
    ) -> tuple[JobId, bool]:
        """procrastinate's queueing lock: ``defer_job_async`` raises ``AlreadyEnqueued`` while a job holding the
        lock waits (``todo``); then the holder is read. It may leave ``todo`` between the two: the defer runs again.
        """
        from procrastinate.exceptions import AlreadyEnqueued

        while True:
            try:
                job = await self._manager.defer_job_async((await self._new_jobs(queue, jobs, unique_key))[0])
            except AlreadyEnqueued:
                for holder in await self._manager.list_jobs_async(queueing_lock=unique_key, status="todo"):
                    return int(holder.id), False
                continue
            return int(job.id), True

    def transaction_problem(self, transaction: object) -> str | None:
        """W1–W4: a psycopg ``AsyncConnection`` outside autocommit, so procrastinate's INSERT joins the caller's
        transaction (procrastinate's ``connection`` option of ``configure``/``defer_job_async``)."""
        import psycopg

        if not isinstance(transaction, psycopg.AsyncConnection):
            return "must be a psycopg AsyncConnection inside a transaction the caller opened"
        if transaction.closed:
            return "the connection is closed"
        if transaction.autocommit:
            return "the connection is in autocommit mode: the job would commit on its own, not with the caller"
        return None

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        """procrastinate's ``batch_defer_jobs_async(…, connection=the caller's)``: nothing here commits."""
        deferred = await self._manager.batch_defer_jobs_async(await self._new_jobs(queue, jobs), connection=transaction)
        return [int(job.id) for job in deferred]

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        vt = await self._queue_timeout(queue)
        if vt is None:
            return []
        for stalled in await self._manager.get_stalled_jobs(queue=queue, seconds_since_heartbeat=vt):
            await self._manager.retry_job(stalled)
        worker = await self._manager.register_worker()
        await self._connector.execute_query_async(
            f"INSERT INTO {WORKERS} (worker_id, name) VALUES (%(worker)s, %(name)s)", worker=worker, name=worker_id
        )
        taken = []
        for _ in range(n):
            job = await self._manager.fetch_job([queue], worker)
            if job is None:
                break
            taken.append(await self._job(job))
        return taken

    async def _queue_timeout(self, queue: str) -> float | None:
        """The visibility timeout of any one job of ``queue`` (procrastinate's stalled-job age is per call)."""
        found = await self._manager.list_jobs_async(queue=queue)
        for job in found:
            return float(job.task_kwargs["alkstore"]["visibility_timeout_s"])
        return None

    async def _found(self, queue: str, job_id: JobId) -> Any:
        number = int_job_id(job_id)
        if number is None:
            return None
        for job in await self._manager.list_jobs_async(id=number, queue=queue):
            return job
        return None

    async def _finish(self, job_id: int, status: str, delete: bool) -> bool:
        """``finish_job_by_id_async``; it raises when the job is not todo or doing, which is ``False`` here."""
        from procrastinate.jobs import Status

        try:
            await self._manager.finish_job_by_id_async(job_id=job_id, status=Status(status), delete_job=delete)
        except Exception as exc:
            if "was not found" in f"{exc} {exc.__cause__}":
                return False
            raise
        return True

    async def ack(self, queue: str, job_id: JobId, token: str, now: datetime | None) -> bool:
        job = await self._found(queue, job_id)
        return job is not None and await self._finish(job.id, "succeeded", True)

    async def retry(
        self, queue: str, job_id: JobId, token: str, now: datetime | None, delay_s: float, last_error: str | None
    ) -> bool:
        job = await self._found(queue, job_id)
        if job is None or job.status not in ("doing", "failed"):
            return False
        retry_at = await self._server_now() + timedelta(seconds=delay_s)
        await self._manager.retry_job_by_id_async(
            job_id=job.id, retry_at=retry_at, priority=None, queue=None, lock=None
        )
        return True

    async def dead_letter(self, queue: str, job_id: JobId, token: str, now: datetime | None, last_error: str) -> bool:
        job = await self._found(queue, job_id)
        return job is not None and await self._finish(job.id, "failed", False)

    async def heartbeat(self, queue: str, job_id: JobId, token: str, now: datetime | None, lease_s: float) -> bool:
        job = await self._found(queue, job_id)
        if job is None or job.worker_id is None:
            return False
        await self._manager.update_heartbeat(job.worker_id)
        return True

    async def ack_batch(self, queue: str, job_ids: Sequence[JobId], now: datetime | None) -> int:
        done = 0
        for job_id in job_ids:
            job = await self._found(queue, job_id)
            if job is not None and await self._finish(job.id, "succeeded", True):
                done += 1
        return done

    async def cancel(self, queue: str, job_id: JobId) -> bool:
        job = await self._found(queue, job_id)
        if job is None:
            return False
        return bool(await self._manager.cancel_job_by_id_async(job.id, delete_job=True))

    async def get(self, queue: str, job_id: JobId) -> Job | None:
        job = await self._found(queue, job_id)
        return None if job is None or job.status not in _STATES else await self._job(job)

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        """procrastinate has no expiry and no attempt limit to sweep by: nothing moves."""
        return 0

    async def close(self) -> None:
        await self._app.close_async()

    async def _job(self, job: Any) -> Job:
        """A contract snapshot of one procrastinate job; the lease is its worker's heartbeat + the timeout."""
        stamps = job.task_kwargs["alkstore"]
        state = _STATES[job.status]
        vt = float(stamps["visibility_timeout_s"])
        lease = None
        claimed_by = None
        if state is JobState.PROCESSING and job.worker_id is not None:
            row = await self._one(
                f"SELECT w.last_heartbeat, a.name FROM procrastinate_workers w JOIN {WORKERS} a "
                "ON a.worker_id = w.id WHERE w.id = %(worker)s",
                worker=job.worker_id,
            )
            if row is not None:
                lease = row["last_heartbeat"].astimezone(UTC) + timedelta(seconds=vt)
                claimed_by = row["name"]
        expires = stamps["expires_at"]
        return Job(
            job.id,
            job.queue,
            decode_payload(job.task_kwargs["payload"]),
            state,
            job.priority,
            job.attempts + 1 if state is JobState.PROCESSING else job.attempts,
            int(stamps["max_attempts"]),
            job.scheduled_at.astimezone(UTC),
            None if expires is None else datetime.fromisoformat(expires),
            datetime.fromisoformat(stamps["enqueued_at"]),
            lease,
            claimed_by,
            vt,
            float(stamps["backoff_base_s"]),
            stamps["dead_letter_retention_s"],
            None,
            None,
        )


def schema_ddl() -> str:
    """The adapter's own table, beside procrastinate's."""
    return f"CREATE TABLE {WORKERS} (worker_id bigint PRIMARY KEY, name text NOT NULL)"
