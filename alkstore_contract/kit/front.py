"""The public surface (``Store``, ``Queue``, ``JobHandle``) written once, over a ``StorageDriver``.

Part of the kit.

Every op here follows one order (the contract's "Order of checks"): refuse a
closed store (S3) → refuse a spent handle (H4) → validate every argument, so
bad input stores nothing → spend the handle (ack/retry/fail) → read the clock
once (T1, T2) → one driver call. The driver only stores; every message a
caller sees for a closed store, a spent handle or a bad argument is written
here, so all engines on the kit say it the same way.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Generic, TypeVar, cast

from alkstore_contract.clock import Clock
from alkstore_contract.errors import InvalidArgument, StoreUnavailable
from alkstore_contract.handles import ClosingStore, NamedQueue, OneShot, raise_if_closed
from alkstore_contract.kit.driver import (
    AcksClaims,
    HeartbeatsClaims,
    ReleasingDriver,
    StorageDriver,
    TransactionalDriver,
    UniqueDriver,
    c2_order_key,
)
from alkstore_contract.kit.fast import resolve_new_jobs
from alkstore_contract.resolution import (
    LAST_ERROR_EXPIRED,
    LAST_ERROR_MAX_ATTEMPTS,
    EnqueueOptions,
    decide_retry,
    encode_payloads,
    fail_error,
)
from alkstore_contract.surface import JobHandle
from alkstore_contract.types import Duration, EnqueueCall, Enqueued, Job, JobId, QueueOpts, validate_queue_opts
from alkstore_contract.validation import (
    INT64_MAX,
    describe_value,
    encode_payload,
    optional_duration_seconds,
    validate_batch_size,
    validate_error,
    validate_job_id,
    validate_job_ids,
    validate_queue_name,
    validate_unique_key,
    validate_worker_id,
)

D = TypeVar("D", bound=StorageDriver)


def _require(driver: object, method: str, op: str, capability: str, clauses: str) -> None:
    """Refuse a contract 2.1 op on a driver written for 2.0, which lacks its method: its engine does not declare it."""
    if not hasattr(driver, method):
        raise NotImplementedError(
            f"{op}(): the driver {type(driver).__name__} has no {method}(); its engine does not declare "
            f"the '{capability}' capability (contract {clauses})"
        )


class KitStore(ClosingStore, Generic[D]):
    """An open store: a driver, the clock every op reads, the random source of backoff jitter, a closed flag.

    ``clock=None`` hands ``now=None`` to the driver, which then keeps time
    itself (a server's clock); an engine that has no clock of its own passes
    ``SystemClock()``. ``seed`` seeds the jitter (R5), so a run can be replayed.
    Engines subclass it to add what is theirs (a location, an option).
    """

    def __init__(self, driver: D, *, clock: Clock | None, seed: int | None) -> None:
        if clock is not None and not isinstance(clock, Clock):
            raise InvalidArgument(
                f"clock={describe_value(clock)}: must have a now() method returning an aware datetime"
            )
        self._driver = driver
        self._clock = clock
        self._rng = random.Random(seed)
        self._closed = False

    @property
    def driver(self) -> D:
        """The storage this store runs on."""
        return self._driver

    @property
    def clock(self) -> Clock | None:
        """The clock every op reads, or ``None`` when the driver keeps time."""
        return self._clock

    @property
    def rng(self) -> random.Random:
        """The source of backoff jitter (R5)."""
        return self._rng

    def now(self) -> datetime | None:
        """The op's one clock read (T1): the store's clock, or ``None`` for the driver's own."""
        clock = self._clock
        return None if clock is None else clock.now()

    def check_open(self, op: str) -> None:
        """S3: raise ``StoreClosed`` naming ``op`` when the store is closed."""
        raise_if_closed(self._closed, op)

    def queue(self, name: str, opts: QueueOpts | None = None) -> KitQueue[D]:
        """S1: a handle on queue ``name`` stamping ``opts`` (default ``QueueOpts()``) on what it enqueues; no I/O."""
        raise_if_closed(self._closed, "queue")
        return KitQueue(self, validate_queue_name(name), validate_queue_opts(opts))

    async def close(self) -> None:
        """S3: refuse every later op, then let the driver finish what runs and release the storage. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._driver.close()


class KitQueue(NamedQueue, Generic[D]):
    """A name inside a store, with the options it stamps on what it enqueues (E1)."""

    __slots__ = ("_driver", "_store")

    def __init__(self, store: KitStore[D], name: str, opts: QueueOpts) -> None:
        super().__init__(name, opts)
        self._store = store
        self._driver = store.driver

    async def _enqueue(self, payload: object, call: EnqueueCall) -> JobId:
        """E1–E10 for ``enqueue``: the payload and options checked, then one clock read and one insert."""
        store = self._store
        store.check_open("enqueue")
        payload_json = encode_payload(payload)
        jobs = resolve_new_jobs((payload_json,), EnqueueOptions.validate_call(call), self._opts)
        return (await self._driver.insert(self._name, jobs, store.now()))[0]

    async def _enqueue_many(self, payloads: Sequence[object], call: EnqueueCall) -> list[JobId]:
        """E11 for ``enqueue_many``: every payload stored from one clock read, or none. ``[]`` does no I/O."""
        store = self._store
        store.check_open("enqueue_many")
        if not isinstance(payloads, list | tuple):
            raise InvalidArgument(f"payloads={describe_value(payloads)}: must be a list or tuple of payloads")
        payload_jsons = encode_payloads(payloads)
        options = EnqueueOptions.validate_call(call)
        if not payload_jsons:
            return []
        jobs = resolve_new_jobs(payload_jsons, options, self._opts)
        return await self._driver.insert(self._name, jobs, store.now())

    async def _enqueue_in(self, transaction: object, payload: object, call: EnqueueCall) -> JobId:
        """W1–W4: one job inserted through the caller's ``transaction``; the store commits nothing of it.

        The transaction is checked with the other arguments (bad input stores
        nothing), then one clock read and one driver step on that transaction.
        """
        store = self._store
        store.check_open("enqueue_in")
        driver = self._driver
        _require(driver, "insert_in", "enqueue_in", "transactional_enqueue", "W1–W4")
        transactional = cast(TransactionalDriver, driver)
        problem = transactional.transaction_problem(transaction)
        if problem is not None:
            raise InvalidArgument(f"transaction={describe_value(transaction)}: {problem}")
        payload_json = encode_payload(payload)
        jobs = resolve_new_jobs((payload_json,), EnqueueOptions.validate_call(call), self._opts)
        return (await transactional.insert_in(transaction, self._name, jobs, store.now()))[0]

    async def _enqueue_unique(self, payload: object, unique_key: str, call: EnqueueCall) -> Enqueued:
        """K1–K4: store one job holding ``unique_key`` unless an unfinished job of this queue holds it.

        Every argument is checked first (bad input stores nothing), then one
        clock read and one driver step. On a driver without ``insert_unique``
        (an engine written for contract 2.0) it raises ``NotImplementedError``
        after the checks: such an engine does not declare ``unique_keys``.
        """
        store = self._store
        store.check_open("enqueue_unique")
        key = validate_unique_key(unique_key)
        payload_json = encode_payload(payload)
        options = EnqueueOptions.validate_call(call)
        driver = self._driver
        _require(driver, "insert_unique", "enqueue_unique", "unique_keys", "K1–K4")
        jobs = resolve_new_jobs((payload_json,), options, self._opts)
        job_id, created = await cast(UniqueDriver, driver).insert_unique(self._name, key, jobs, store.now())
        return Enqueued(job_id, created)

    async def claim_one(self, worker_id: str) -> KitJobHandle[D] | None:
        """C1–C4, C6: the first claimable job in C2 order under a fresh lease, or ``None``."""
        handles = await self._claim("claim_one", worker_id, 1)
        return handles[0] if handles else None

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        """C5: up to ``n`` claimable jobs in C2 order; ``n <= 0`` claims nothing and reads nothing."""
        return list(await self._claim("claim_batch", worker_id, n))

    async def _claim(self, op: str, worker_id: object, n: object) -> list[KitJobHandle[D]]:
        store = self._store
        store.check_open(op)
        worker = validate_worker_id(worker_id)
        count = validate_batch_size(n)
        if count <= 0:
            return []
        token = self._mint_token()
        jobs = await self._driver.claim(self._name, worker, min(count, INT64_MAX), token, store.now())
        if len(jobs) > 1:
            jobs.sort(key=c2_order_key)
        return [KitJobHandle(self, job, token) for job in jobs]

    def _mint_token(self) -> str:
        """A fresh claim token, one per claim call: fencing is on id AND token, so one batch's jobs may share it.

        It comes from the OS's randomness rather than the store's seeded rng: two
        stores opened with one seed must never mint the same token (H5).
        """
        return secrets.token_hex(16)

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        """B1: delete the listed jobs of this queue whose lease is live; how many. ``[]`` does no I/O."""
        store = self._store
        store.check_open("ack_batch")
        unique = list(dict.fromkeys(validate_job_ids(ids)))
        if not unique:
            return 0
        return await self._driver.ack_batch(self._name, unique, store.now())

    async def ack_handles(self, handles: Sequence[JobHandle]) -> list[bool]:
        """Each handle's ``ack()`` (H1, H2, H4, N6) at once: one storage step where the driver acks claims in
        batches (``AcksClaims``), else one ``ack`` per handle, run concurrently.

        Every handle must be a claim of this queue, each listed once. Each ack
        is fenced by its own claim, as ``ack()`` is, so a stale handle is
        refused (``False``) while the others complete; ``[]`` does no I/O.
        Every handle is spent before the storage step (a spent one raises
        ``HandleSpent`` and none is spent); if the step raises
        ``StoreUnavailable`` none is: each may be acked again (N6).
        """
        claims = self._unspent_claims("ack_handles", "ack", handles)
        if not claims:
            return []
        store = self._store
        for claim in claims:
            claim._one_shot().spend("ack")
        now = store.now()
        driver = self._driver
        batched: AcksClaims | None = driver if hasattr(driver, "ack_claims") else None  # type: ignore[assignment]
        try:
            if batched is not None:
                acked = set(await batched.ack_claims(self._name, [(c._job.id, c._token) for c in claims], now))
                return [claim._job.id in acked for claim in claims]
            return list(await asyncio.gather(*(driver.ack(self._name, c._job.id, c._token, now) for c in claims)))
        except StoreUnavailable:
            for claim in claims:
                claim._one_shot().reopen()
            raise

    async def heartbeat_handles(self, handles: Sequence[JobHandle]) -> list[bool]:
        """Each handle's ``heartbeat()`` (H1, H3: the lease reset to now + the job's visibility timeout) at once:
        one storage step where the driver renews claims in batches (``HeartbeatsClaims``), else one
        ``heartbeat`` per handle, run concurrently.

        Every handle must be an unspent claim of this queue, each listed once
        (a spent one raises ``HandleSpent``, before any I/O); ``[]`` does no I/O.
        """
        claims = self._unspent_claims("heartbeat_handles", "heartbeat", handles)
        if not claims:
            return []
        now = self._store.now()
        driver = self._driver
        if hasattr(driver, "heartbeat_claims"):
            batched: HeartbeatsClaims = driver  # type: ignore[assignment]
            renewed = set(
                await batched.heartbeat_claims(
                    self._name, [(c._job.id, c._token, c._job.visibility_timeout_s) for c in claims], now
                )
            )
            return [claim._job.id in renewed for claim in claims]
        return list(
            await asyncio.gather(
                *(driver.heartbeat(self._name, c._job.id, c._token, now, c._job.visibility_timeout_s) for c in claims)
            )
        )

    def _unspent_claims(self, op: str, each: str, handles: Sequence[JobHandle]) -> list[KitJobHandle[D]]:
        """S3, then ``handles`` as this queue's claims, each once and none spent (H4, checked as ``each``)."""
        self._store.check_open(op)
        claims = self._own_claims(handles)
        for claim in claims:
            claim._one_shot().check(each)
        return claims

    def _own_claims(self, handles: Sequence[JobHandle]) -> list[KitJobHandle[D]]:
        """``handles`` as this queue's claims, each once; ``InvalidArgument`` naming the first that is not."""
        if not isinstance(handles, list | tuple):
            raise InvalidArgument(f"handles={describe_value(handles)}: must be a list or tuple of job handles")
        claims: list[KitJobHandle[D]] = []
        seen: set[JobId] = set()
        for handle in handles:
            if not (
                isinstance(handle, KitJobHandle)
                and handle._queue._store is self._store
                and handle._job.queue == self._name
            ):
                raise InvalidArgument(
                    f"handles: {describe_value(handle)} is not a claim of queue {self._name!r} of this store"
                )
            if handle._job.id in seen:
                raise InvalidArgument(f"handles: job {handle._job.id!r} is listed twice")
            seen.add(handle._job.id)
            claims.append(handle)
        return claims

    async def cancel(self, job_id: JobId) -> bool:
        """B2: delete the job of this queue in any state; ``True`` iff one was deleted."""
        self._store.check_open("cancel")
        return await self._driver.cancel(self._name, validate_job_id(job_id))

    async def get_job(self, job_id: JobId) -> Job | None:
        """B3: a fresh snapshot of the job of this queue, or ``None``."""
        self._store.check_open("get_job")
        return await self._driver.get(self._name, validate_job_id(job_id))

    async def sweep_expired(self) -> int:
        """X2, X3: purge dead jobs past retention, then move expired and exhausted jobs to dead; how many moved."""
        store = self._store
        store.check_open("sweep_expired")
        return await self._driver.sweep(self._name, store.now(), LAST_ERROR_EXPIRED, LAST_ERROR_MAX_ATTEMPTS)


class KitJobHandle(Generic[D]):
    """One claim of one job: ``ack``/``retry``/``fail`` once, ``heartbeat`` as often as needed (H1–H5); once more
    after one raised ``StoreUnavailable`` (N6)."""

    __slots__ = ("_job", "_once", "_queue", "_token")

    def __init__(self, queue: KitQueue[D], job: Job, token: str) -> None:
        self._queue = queue
        self._job = job
        self._token = token
        self._once: OneShot | None = None

    def _one_shot(self) -> OneShot:
        """H4's bookkeeping, made by the first op that needs it: a batch acked by id never does."""
        once = self._once
        if once is None:
            once = self._once = OneShot(self._job.id)
        return once

    @property
    def job(self) -> Job:
        """The job as this claim left it (processing, attempts counted, lease set)."""
        return self._job

    async def ack(self) -> bool:
        """H2: delete the job if this claim still holds it."""
        queue = self._queue
        store = queue._store
        store.check_open("ack")
        once = self._one_shot()
        once.spend("ack")
        return await once.outcome(queue._driver.ack(queue._name, self._job.id, self._token, store.now()))

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        """R1–R4: back to ready after ``delay`` (or the backoff curve), or dead when attempts are spent.

        The outcome is decided from the claim's snapshot before the fenced
        write: its attempts and stamps cannot change while this claim holds
        the job, and if it no longer does the write changes nothing. So every
        engine draws the same jitter sequence from the same seed.
        """
        queue = self._queue
        store = queue._store
        store.check_open("retry")
        self._one_shot().check("retry")
        checked_error = validate_error(error)
        delay_s = optional_duration_seconds("delay", delay)
        once = self._one_shot()
        once.spend("retry")
        job = self._job
        decision = decide_retry(
            attempts=job.attempts,
            max_attempts=job.max_attempts,
            backoff_base_s=job.backoff_base_s,
            error=checked_error,
            delay_s=delay_s,
            rng=store.rng,
        )
        now = store.now()
        if decision.dead:
            assert decision.last_error is not None, "a dead-letter decision always names its error"
            return await once.outcome(
                queue._driver.dead_letter(queue._name, job.id, self._token, now, decision.last_error)
            )
        return await once.outcome(
            queue._driver.retry(queue._name, job.id, self._token, now, decision.delay_s, decision.last_error)
        )

    async def fail(self, error: str | None = None) -> bool:
        """D1: dead at once, ``last_error`` = error or ``"failed"``."""
        queue = self._queue
        store = queue._store
        store.check_open("fail")
        self._one_shot().check("fail")
        last_error = fail_error(validate_error(error))
        once = self._one_shot()
        once.spend("fail")
        return await once.outcome(
            queue._driver.dead_letter(queue._name, self._job.id, self._token, store.now(), last_error)
        )

    async def release(self, delay: Duration | None = None) -> bool:
        """L1–L4: hand the job back, ready at now + ``delay`` (``None``: now), its attempt given back, its id kept.

        One-shot with ack/retry/fail, and fenced like them. On a driver
        without ``release`` (an engine written for contract 2.0) it raises
        ``NotImplementedError`` before touching the handle: such an engine
        does not declare the ``release`` capability.
        """
        queue = self._queue
        store = queue._store
        store.check_open("release")
        self._one_shot().check("release")
        delay_s = optional_duration_seconds("delay", delay)
        driver = queue._driver
        _require(driver, "release", "release", "release", "L1–L4")
        releasing = cast(ReleasingDriver, driver)
        self._one_shot().spend("release")
        return await releasing.release(queue._name, self._job.id, self._token, store.now(), delay_s or 0.0)

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        """H3: lease = now + (``extend``, or the stamped visibility timeout); repeatable."""
        queue = self._queue
        store = queue._store
        store.check_open("heartbeat")
        self._one_shot().check("heartbeat")
        extend_s = optional_duration_seconds("extend", extend, positive=True)
        lease_s = self._job.visibility_timeout_s if extend_s is None else extend_s
        return await queue._driver.heartbeat(queue._name, self._job.id, self._token, store.now(), lease_s)
