"""The contract's ``Store``, ``Queue`` and ``JobHandle`` over the wire: each op is one request.

Part of the wire.

These objects hold no state of the contract's: closed stores, spent handles,
leases, validation of every value that can be encoded are the engine's to keep
and to judge. They hold the ids the engine chose, the clock the store was
opened with (read once per op, its instant carried by the op: the engine never
reads a clock of its own then), and the one value the surface shows without
asking, a handle's ``job`` as claimed and a queue's ``opts`` as given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from alkstore_contract.clock import Clock
from alkstore_contract.errors import AlkstoreError, InvalidArgument
from alkstore_contract.handles import ClosingStore, NamedQueue, raise_if_closed
from alkstore_contract.instants import to_epoch_us
from alkstore_contract.surface import JobHandle
from alkstore_contract.types import Duration, EnqueueCall, Enqueued, Job, JobId, QueueOpts, validate_queue_opts
from alkstore_contract.validation import describe_value
from alkstore_contract.wire import codec
from alkstore_contract.wire.process import EngineProcess


class WireStore(ClosingStore):
    """A store the engine opened; ``closed`` flips when ``close`` is called, before the engine is asked."""

    def __init__(self, process: EngineProcess, store_id: str, clock: Clock | None) -> None:
        self._process = process
        self._id = store_id
        self._clock = clock
        self._closed = False

    def fields(self, **fields: Any) -> dict[str, Any]:
        """A request's fields, with ``now`` when the suite owns this store's time: the op's one clock read."""
        if self._clock is not None:
            fields["now"] = str(to_epoch_us(self._clock.now()))
        return fields

    def encode(self, op: str, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``build()``: the request's fields; a value no message can carry is refused here.

        On a closed store such a refusal is ``StoreClosed``, as DEC-order-of-checks puts the closed store
        first: the engine would say so, but a value that cannot be written cannot be sent to ask it.
        """
        try:
            return build()
        except AlkstoreError:
            raise_if_closed(self._closed, f"{op}()")
            raise

    async def request(self, op: str, fields: dict[str, Any], given: dict[str, object] | None = None) -> Any:
        """Send ``op``; ``given``: arguments the caller gave in a Python form the wire does not carry.

        An ``InvalidArgument`` from the engine names the argument and the value it received (``delay=-1``);
        the message then also shows the value as the caller gave it (a ``timedelta``, a ``datetime``).
        """
        try:
            return await self._process.request(op, fields)
        except InvalidArgument as exc:
            shown = [f"{arg}={describe_value(value)}" for arg, value in (given or {}).items() if arg in str(exc)]
            if not shown:
                raise
            raise InvalidArgument(f"{exc} (the caller gave {', '.join(shown)})") from None

    async def ask(
        self,
        op: str,
        target: dict[str, str],
        build: Callable[[], dict[str, Any]],
        given: dict[str, object] | None = None,
    ) -> Any:
        """``op`` on ``target`` (``{"queue": id}`` or ``{"handle": id}``): its fields built, ``now`` added, sent."""
        return await self.request(op, self.fields(**target, **self.encode(op, build)), given)

    def queue(self, name: str, opts: QueueOpts | None = None) -> WireQueue:
        checked_opts = self.encode("queue", lambda: {"opts": validate_queue_opts(opts)})["opts"]
        fields = self.encode("queue", lambda: {"name": codec.name(name), "opts": codec.queue_opts(checked_opts)})
        queue_id = self._process.request_sync("queue", {"store": self._id, **fields})
        return WireQueue(self, queue_id, name, checked_opts)

    async def close(self) -> None:
        """Idempotent; a store whose engine process has ended is closed without asking (nothing is left to free)."""
        self._closed = True
        if self._process.ended is None:
            await self._process.request("close_store", {"store": self._id})


class WireQueue(NamedQueue):
    """A queue handle the engine made; ``name`` and ``opts`` are the ones given."""

    def __init__(self, store: WireStore, queue_id: str, name: str, opts: QueueOpts) -> None:
        super().__init__(name, opts)
        self._store = store
        self._id = queue_id

    async def _ask(self, op: str, build: Callable[[], dict[str, Any]], given: dict[str, object] | None = None) -> Any:
        return await self._store.ask(op, {"queue": self._id}, build, given)

    async def _enqueue(self, payload: object, call: EnqueueCall) -> JobId:
        job_id: JobId = await self._ask(
            "enqueue",
            lambda: {"options": codec.enqueue_options(call), "payload": codec.payloads([payload])[0]},
            _given(delay=call.delay, expires=call.expires),
        )
        return job_id

    async def _enqueue_many(self, payloads: Sequence[object], call: EnqueueCall) -> list[JobId]:
        ids: list[JobId] = await self._ask(
            "enqueue_many",
            lambda: {"payloads": codec.payloads(payloads), "options": codec.enqueue_options(call)},
            _given(delay=call.delay, expires=call.expires),
        )
        return ids

    async def _enqueue_unique(self, payload: object, unique_key: str, call: EnqueueCall) -> Enqueued:
        """K1–K4, sent only to an engine whose handshake declares ``unique_keys`` (the row needs it)."""
        answer = await self._ask(
            "enqueue_unique",
            lambda: {
                "unique_key": codec.unique_key(unique_key),
                "options": codec.enqueue_options(call),
                "payload": codec.payloads([payload])[0],
            },
            _given(delay=call.delay, expires=call.expires),
        )
        return Enqueued(answer["id"], bool(answer["created"]))

    async def claim_one(self, worker_id: str) -> WireHandle | None:
        claimed = await self._ask("claim_one", lambda: {"worker_id": codec.worker_id(worker_id)})
        return None if claimed is None else WireHandle(self._store, claimed["handle"], codec.job(claimed["job"]))

    async def claim_batch(self, worker_id: str, n: int) -> list[JobHandle]:
        claimed = await self._ask(
            "claim_batch", lambda: {"worker_id": codec.worker_id(worker_id), "n": codec.integer("n", n)}
        )
        return [WireHandle(self._store, c["handle"], codec.job(c["job"])) for c in claimed]

    async def ack_batch(self, ids: Sequence[JobId]) -> int:
        count: int = await self._ask("ack_batch", lambda: {"ids": codec.job_ids(ids)})
        return count

    async def cancel(self, job_id: JobId) -> bool:
        deleted: bool = await self._ask("cancel", lambda: {"job_id": codec.job_id(job_id)})
        return deleted

    async def get_job(self, job_id: JobId) -> Job | None:
        found = await self._ask("get_job", lambda: {"job_id": codec.job_id(job_id)})
        return None if found is None else codec.job(found)

    async def sweep_expired(self) -> int:
        moved: int = await self._ask("sweep_expired", dict)
        return moved


class WireHandle:
    """One claim the engine handed out, named by the engine's handle id; the engine fences every op on it."""

    def __init__(self, store: WireStore, handle_id: str, job: Job) -> None:
        self._store = store
        self._id = handle_id
        self._job = job

    @property
    def job(self) -> Job:
        return self._job

    async def _ask(self, op: str, build: Callable[[], dict[str, Any]], given: dict[str, object] | None = None) -> bool:
        answer: bool = await self._store.ask(op, {"handle": self._id}, build, given)
        return answer

    async def ack(self) -> bool:
        return await self._ask("ack", dict)

    async def retry(self, error: str | None = None, delay: Duration | None = None) -> bool:
        return await self._ask(
            "retry",
            lambda: {"error": codec.error_text(error), "delay_s": codec.duration("delay", delay)},
            _given(delay=delay),
        )

    async def fail(self, error: str | None = None) -> bool:
        return await self._ask("fail", lambda: {"error": codec.error_text(error)})

    async def heartbeat(self, extend: Duration | None = None) -> bool:
        return await self._ask(
            "heartbeat", lambda: {"extend_s": codec.duration("extend", extend)}, _given(extend=extend)
        )

    async def release(self, delay: Duration | None = None) -> bool:
        """L1–L4, sent only to an engine whose handshake declares ``release`` (the row needs it)."""
        return await self._ask("release", lambda: {"delay_s": codec.duration("delay", delay)}, _given(delay=delay))


def _given(**values: object) -> dict[str, object]:
    """The arguments given as a ``timedelta``: their Python form, for the engine's error messages."""
    return {arg: value for arg, value in values.items() if isinstance(value, timedelta)}
