"""The public surface every engine implements (docs/contract.md, "Public surface").

Part of the contract.

These are ``Protocol`` classes: an engine satisfies them by shape, it does not
inherit from them. Every coroutine reads the store's clock at most once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self, Unpack

from alkstore_contract.types import Duration, Enqueued, EnqueueKeywords, Job, JobId, QueueOpts


class JobHandle(Protocol):
    """One claim of one job. Every op is fenced to this claim (contract clause H1)."""

    @property
    def job(self) -> Job:
        """The job as it was when claimed."""
        ...

    async def ack(self) -> bool:
        """Delete the job (H2). One-shot (H4)."""
        ...

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        """Back to ready after a delay, or dead when attempts are spent (R1–R4). One-shot."""
        ...

    async def fail(self, error: str | None = None) -> bool:
        """Dead at once (D1). One-shot."""
        ...

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        """Reset the lease to now + extend (or the stamped visibility timeout) (H3). Repeatable."""
        ...


class ReleasableJobHandle(JobHandle, Protocol):
    """A handle of an engine declaring ``release`` (contract 2.1, L1–L4).

    A protocol of its own, so an engine written for 2.0 still satisfies ``JobHandle``.
    """

    async def release(self, delay: Duration | None = None) -> bool:
        """Hand the job back: ready at now + ``delay``, its attempt given back, its id kept (L1–L3). One-shot (L4)."""
        ...


class Queue(Protocol):
    """A name inside a store, with the options it stamps on what it enqueues."""

    @property
    def name(self) -> str:
        """The queue's name, exactly as given to ``store.queue`` (names are case-sensitive, S1)."""
        ...

    @property
    def opts(self) -> QueueOpts:
        """The options this handle stamps on every job it enqueues (E1)."""
        ...

    async def enqueue(
        self,
        payload: object,
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        max_attempts: int | None = None,
        priority: int = 0,
    ) -> JobId:
        """Store one ready job: now, after ``delay`` or at ``run_at`` (E1–E10); bad input stores nothing."""
        ...

    async def enqueue_many(
        self,
        payloads: Sequence[object],
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        max_attempts: int | None = None,
        priority: int = 0,
    ) -> list[JobId]:
        """Store every payload from one clock read, all or none; ids in input order (E11)."""
        ...

    async def claim_one(self, worker_id: str) -> JobHandle | None:
        """The first claimable job in C2 order under a fresh lease and token, or ``None`` (C1–C4, C6)."""
        ...

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        """Up to ``n`` claimable jobs in C2 order; ``n <= 0`` claims nothing (C5)."""
        ...

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        """Delete each listed job of this queue held under a live lease, by anyone; how many (B1)."""
        ...

    async def cancel(self, job_id: JobId) -> bool:
        """Delete the job of this queue in any state; ``True`` iff one was deleted (B2)."""
        ...

    async def get_job(self, job_id: JobId) -> Job | None:
        """A fresh snapshot of the job of this queue, or ``None`` (B3)."""
        ...

    async def sweep_expired(self) -> int:
        """Purge dead jobs past retention, then move expired and exhausted jobs to dead; how many moved (X2, X3)."""
        ...


class UniqueQueue(Queue, Protocol):
    """A queue of an engine declaring ``unique_keys`` (contract 2.1, K1–K4)."""

    async def enqueue_unique(
        self,
        payload: object,
        unique_key: str,
        **options: Unpack[EnqueueKeywords],
    ) -> Enqueued:
        """Store one job holding ``unique_key`` unless an unfinished job of this queue holds it (K1–K4); ``options``
        are ``enqueue``'s."""
        ...


class TransactionalQueue(Queue, Protocol):
    """A queue of an engine declaring ``transactional_enqueue`` (contract 2.1, W1–W4)."""

    async def enqueue_in(
        self,
        transaction: object,
        payload: object,
        **options: Unpack[EnqueueKeywords],
    ) -> JobId:
        """Store one job inside the caller's ``transaction``: it exists iff the caller commits (W1–W4); ``options``
        are ``enqueue``'s."""
        ...


class Store(Protocol):
    """An open engine instance on one location."""

    def queue(self, name: str, opts: QueueOpts | None = None) -> Queue:
        """A handle on queue ``name``; validates, does no I/O (S1)."""
        ...

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called (S3)."""
        ...

    async def close(self) -> None:
        """Release the store; idempotent (S3)."""
        ...

    async def __aenter__(self) -> Self:
        """The store itself: ``async with`` closes it on exit."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """``close()``."""
        ...
