"""Bookkeeping every engine's ``JobHandle``, ``Queue`` and ``Store`` need, written once (contract H4, N6, S3, E1).

Part of the contract.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Self, Unpack

from alkstore_contract.errors import HandleSpent, StoreClosed, StoreUnavailable
from alkstore_contract.types import EnqueueCall, Enqueued, EnqueueKeywords, JobId, QueueOpts


class ClosingStore:
    """A store's ``closed`` flag and ``async with``, as every engine's ``Store`` answers them (S3).

    The kit's store and the wire's both start from it: each sets ``_closed`` and
    defines ``close``; ``async with`` gives the store itself and closes it on exit.
    """

    __slots__ = ()
    _closed: bool

    @property
    def closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Release the store: the engine's own part of ``Store``."""
        raise NotImplementedError(f"{type(self).__name__} releases nothing: it must define close")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _packed(op: str, options: EnqueueKeywords) -> EnqueueCall:
    """``options`` as one ``EnqueueCall``. A keyword the surface does not have is refused naming ``op``, as a
    written-out signature would: ``EnqueueCall``'s own error would name a class the caller never called."""
    unknown = sorted(options.keys() - EnqueueCall._fields)
    if unknown:
        raise TypeError(
            f"{op}() got an unexpected keyword argument {', '.join(map(repr, unknown))}; "
            f"its options are {', '.join(EnqueueCall._fields)}"
        )
    return EnqueueCall(**options)


class NamedQueue:
    """A queue's name and the options it stamps on what it enqueues (E1), as every engine's ``Queue`` answers them.

    The kit's queue and the wire's both start from it; they keep ``_name`` and
    ``_opts`` for their own ops to read. ``enqueue`` and ``enqueue_many`` are
    written here once: each hands its options, packed in an ``EnqueueCall``, to
    the subclass's ``_enqueue`` or ``_enqueue_many``, which is all an engine's
    queue says about storing. They take the options as ``EnqueueKeywords``, the
    surface's keyword set written once, rather than spelling out the
    ``Queue`` protocol's signature again: the protocol is the page authors read,
    and mypy holds these to it wherever a store built on this is used as a
    ``Store``.
    """

    __slots__ = ("_name", "_opts")

    def __init__(self, name: str, opts: QueueOpts) -> None:
        self._name = name
        self._opts = opts

    @property
    def name(self) -> str:
        return self._name

    @property
    def opts(self) -> QueueOpts:
        return self._opts

    async def enqueue(self, payload: object, **options: Unpack[EnqueueKeywords]) -> JobId:
        """E1–E10: store one job, ready now, after ``delay`` or at ``run_at``; bad input stores nothing."""
        return await self._enqueue(payload, _packed("enqueue", options))

    async def enqueue_many(self, payloads: Sequence[object], **options: Unpack[EnqueueKeywords]) -> list[JobId]:
        """E11: every payload stored from one clock read, or none; ids in input order."""
        return await self._enqueue_many(payloads, _packed("enqueue_many", options))

    async def enqueue_unique(
        self,
        payload: object,
        unique_key: str,
        **options: Unpack[EnqueueKeywords],
    ) -> Enqueued:
        """K1–K4 (contract 2.1): one job holding ``unique_key`` unless an unfinished job of the queue holds it."""
        return await self._enqueue_unique(payload, unique_key, _packed("enqueue_unique", options))

    async def enqueue_in(
        self,
        transaction: object,
        payload: object,
        **options: Unpack[EnqueueKeywords],
    ) -> JobId:
        """W1–W4 (contract 2.1): one job stored inside the caller's ``transaction``, never committed by the store."""
        return await self._enqueue_in(transaction, payload, _packed("enqueue_in", options))

    async def _enqueue(self, payload: object, call: EnqueueCall) -> JobId:
        """Store one job as ``call`` asks: the engine's own part of ``enqueue``."""
        raise NotImplementedError(f"{type(self).__name__} stores no job: it must define _enqueue")

    async def _enqueue_many(self, payloads: Sequence[object], call: EnqueueCall) -> list[JobId]:
        """Store every payload as ``call`` asks, all or none: the engine's own part of ``enqueue_many``."""
        raise NotImplementedError(f"{type(self).__name__} stores no job: it must define _enqueue_many")

    async def _enqueue_in(self, transaction: object, payload: object, call: EnqueueCall) -> JobId:
        """The engine's own part of ``enqueue_in``: only an engine declaring ``transactional_enqueue`` defines it."""
        raise NotImplementedError(
            f"{type(self).__name__} has no _enqueue_in: its engine does not declare 'transactional_enqueue' "
            "(contract W1–W4)"
        )

    async def _enqueue_unique(self, payload: object, unique_key: str, call: EnqueueCall) -> Enqueued:
        """The engine's own part of ``enqueue_unique``: only an engine declaring ``unique_keys`` defines it."""
        raise NotImplementedError(
            f"{type(self).__name__} has no _enqueue_unique: its engine does not declare 'unique_keys' (contract K1–K4)"
        )


class OneShot:
    """Tracks whether ``ack``/``retry``/``fail`` already returned on a handle (H4, N6).

    ``spend`` is called before the storage op is awaited, so a second op racing
    the first on the same handle is refused too; the handle is spent whatever
    the op returned, as H4 says "once one has returned". An op that raised
    ``StoreUnavailable`` did not return: ``settle`` leaves the handle unspent (N6).
    """

    __slots__ = ("_job_id", "_spent_by")

    def __init__(self, job_id: JobId) -> None:
        self._job_id = job_id
        self._spent_by: str | None = None

    @property
    def spent(self) -> bool:
        return self._spent_by is not None

    def check(self, op: str) -> None:
        """Raise ``HandleSpent`` when the handle is spent; touches nothing."""
        if self._spent_by is not None:
            raise HandleSpent(
                f"{op}() on job {self._job_id!r}: this handle's {self._spent_by}() already returned; "
                "ack, retry, fail and release are one-shot and any later op on the handle is refused (H4, L4)"
            )

    def spend(self, op: str) -> None:
        """``check``, then mark the handle spent by ``op``."""
        self.check(op)
        self._spent_by = op

    async def outcome(self, step: Awaitable[bool]) -> bool:
        """Await the storage ``step`` of the op that spent the handle; a ``StoreUnavailable`` unspends it (N6).

        The op's outcome is then unknown (N3), so the same claim may settle the
        job again: the repeat is fenced by the claim's token and lease as the
        first was, so it cannot apply twice nor complete a job another claim
        holds. Any other outcome (a bool, another error) leaves the handle spent.
        """
        try:
            return await step
        except StoreUnavailable:
            self.reopen()
            raise

    def reopen(self) -> None:
        """Unspend the handle: its op raised ``StoreUnavailable`` and did not return (N6)."""
        self._spent_by = None


def raise_if_closed(closed: bool, op: str) -> None:
    """contract S3: every op on a closed store raises ``StoreClosed`` before any I/O."""
    if closed:
        raise StoreClosed(f"{op}: the store is closed; open a new one to go on (S3)")
