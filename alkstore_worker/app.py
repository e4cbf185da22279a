"""The app: tasks registered by a decorator, and ``defer`` to enqueue them.

``app = App(SqliteSource("jobs.sqlite3"))``, then ``@app.task(queue="emails")``
on an ``async def`` taking the payload (and, optionally, a ``JobContext``);
``await send_email.defer({"to": ...}, delay=..., priority=...)`` enqueues it,
``await send_email.defer_many([...])`` enqueues many in one round trip.
``defer`` is ``Queue.enqueue`` on the task's queue with the payload wrapped in
an envelope naming the task, so bad input gets exactly the contract's errors
(``InvalidArgument``, ``PayloadError``) raised before any write: nothing is
stored. Two rules are the app's own, checked by ``Task.envelopes`` for both
calls: a payload's JSON text may be at most the app's ``max_payload_bytes``
(a job that size is a bug, and would slow every claim that reads it), and
``delay`` with ``run_at`` is refused (the contract lets ``delay`` win, E2;
a caller who gives both meant one of them).

A caller's own transaction: no engine's public surface takes one (each
``enqueue`` commits by itself), so ``defer`` cannot join it; an application
that must enqueue atomically with its own writes keeps them in the same store
and enqueues last, or uses an outbox. docs/worker.md says so.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, ParamSpec, TypedDict, TypeVar, Unpack

from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError
from alkstore_contract.surface import Queue, Store
from alkstore_contract.types import Duration, Enqueued, EnqueueKeywords, Job, JobId, QueueOpts
from alkstore_contract.validation import (
    UNIQUE_KEY_MAX_CHARS,
    describe_value,
    encode_payload,
    validate_max_attempts,
    validate_queue_name,
    validate_unique_key,
)
from alkstore_worker.envelope import Envelope
from alkstore_worker.events import Settlement
from alkstore_worker.lease import Lease
from alkstore_worker.periodic import tick_key
from alkstore_worker.schedules import Schedule, schedule_of
from alkstore_worker.sources import StoreSource, WorkerSource, as_source

P = ParamSpec("P")
R = TypeVar("R")
Handler = Callable[..., Awaitable[object]]

DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20
"""The largest payload ``defer`` stores by default: 1 MiB of JSON text (``App(max_payload_bytes=...)``)."""


@dataclass(frozen=True, slots=True)
class JobContext:
    """What a handler may want besides its payload: the job as claimed (id, attempts, ...) and its lease."""

    job: Job
    lease: Lease | None = None
    """The claim's lease as the worker keeps it (``None`` when the handler is called outside a worker)."""

    @property
    def attempt(self) -> int:
        """Which attempt this run is (1 for the first)."""
        return self.job.attempts

    @property
    def lease_deadline(self) -> float | None:
        """When the lease ends unless renewed, by ``time.monotonic()`` (``None`` outside a worker)."""
        return self.lease.deadline if self.lease is not None else None

    def still_holding(self) -> bool:
        """Whether this run still holds its job, by the worker's own clock: check it before a long side effect.

        ``False`` once the lease's deadline passed without a renewal or a heartbeat was refused; the
        worker then cancels the handler at its next ``await`` (docs/worker.md, "A lost lease").
        """
        return self.lease.still_holding() if self.lease is not None else True


class DeferKeywords(TypedDict, total=False):
    """The keyword options of ``Task.defer``, for the calls that take them as they are (``defer_unique``,
    ``defer_in``): written once, so those calls cannot drift from ``defer``. A key left out takes ``defer``'s
    default."""

    delay: Duration | None
    run_at: datetime | None
    expires: Duration | None
    priority: int


class TaskKeywords(TypedDict, total=False):
    """The keyword options of ``App.task``, which ``App.periodic`` takes as they are: written once, so the two
    cannot drift. A key left out takes ``task``'s default."""

    queue: str
    queue_opts: QueueOpts | None
    max_attempts: int | None
    timeout: float | None
    fail_on: tuple[type[BaseException], ...]


@dataclass(frozen=True, slots=True)
class TaskOptions:
    """A task's settings, fixed at registration."""

    name: str
    queue: str
    queue_opts: QueueOpts | None
    max_attempts: int | None
    timeout_s: float | None
    fail_on: tuple[type[BaseException], ...]
    schedule: Schedule | None = None
    """When a periodic task's ticks fall (``App.periodic``); ``None`` for a task run only when deferred."""


class Task(Generic[P, R]):
    """A registered handler: call ``defer`` to enqueue it, or call it directly to run it in-process."""

    def __init__(self, app: App, function: Callable[P, Awaitable[R]], options: TaskOptions) -> None:
        self.app = app
        self.function = function
        self.options = options
        self.takes_context = len(inspect.signature(function).parameters) >= 2

    @property
    def name(self) -> str:
        """The name stored in each job's envelope."""
        return self.options.name

    async def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.function(*args, **kwargs)

    async def defer(
        self,
        payload: object,
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        priority: int = 0,
    ) -> JobId:
        """Enqueue one run of this task; returns the job id. Bad input raises the contract's errors, stores nothing."""
        (job_id,) = await self._enqueue((payload,), True, delay, run_at, expires, priority)
        return job_id

    async def defer_many(
        self,
        payloads: Sequence[object],
        *,
        delay: Duration | None = None,
        run_at: datetime | None = None,
        expires: Duration | None = None,
        priority: int = 0,
    ) -> list[JobId]:
        """Enqueue one run of this task per payload, in one round trip (``Queue.enqueue_many``, E11); the ids in
        input order. All or nothing: one bad payload or option raises as ``defer`` would, and stores none."""
        return await self._enqueue(payloads, False, delay, run_at, expires, priority)

    async def defer_unique(
        self,
        payload: object,
        unique_key: str,
        **options: Unpack[DeferKeywords],
    ) -> Enqueued:
        """Enqueue one run of this task unless an unfinished job of its queue holds ``unique_key`` (contract K1–K4).

        Returns the id of the job holding the key and ``created``: whether this call stored it (``False``: one was
        queued or running already, and nothing was stored). The key is free again once that job is acked, dead or
        cancelled, so a key names "at most one of these at a time", not "once ever". Concurrent calls with one key,
        from any number of processes, store one job. Needs an engine declaring ``unique_keys`` (SQLite, Postgres,
        mem); on another, ``NotImplementedError`` names the capability and nothing is stored.
        """
        enqueue_unique, envelope = await self._one_through("enqueue_unique", "unique_keys", payload, options)
        enqueued: Enqueued = await enqueue_unique(envelope, unique_key, **self._options(options))
        return enqueued

    async def defer_in(
        self,
        transaction: object,
        payload: object,
        **options: Unpack[DeferKeywords],
    ) -> JobId:
        """Enqueue one run of this task inside the caller's open ``transaction`` (contract W1–W4): the job exists if
        and only if the caller commits, and no worker can claim it before; the store never commits, rolls back or
        ends the transaction. On Postgres, ``transaction`` is the asyncpg connection inside the transaction the
        caller opened (``async with connection.transaction(): await task.defer_in(connection, payload)``), on the
        database and schema of the app's store. Needs an engine declaring ``transactional_enqueue`` (Postgres); on
        another, ``NotImplementedError`` names the capability and nothing is stored.
        """
        enqueue_in, envelope = await self._one_through("enqueue_in", "transactional_enqueue", payload, options)
        job_id: JobId = await enqueue_in(transaction, envelope, **self._options(options))
        return job_id

    async def _one_through(
        self, op: str, capability: str, payload: object, options: DeferKeywords
    ) -> tuple[Any, dict[str, object]]:
        """The queue's ``op`` (a contract 2.1 enqueue) and ``payload``'s envelope, after the app's own rules; an
        engine without ``op`` is refused naming ``capability`` before anything is stored."""
        delay, run_at = options.get("delay"), options.get("run_at")
        (envelope,) = self.envelopes((payload,), delay=delay, run_at=run_at, single=True)
        method = getattr(await self.app.queue_for(self), op, None)
        if method is None:
            raise NotImplementedError(f"{self.app.source.description}: the engine does not declare '{capability}'")
        return method, envelope

    def _options(self, options: DeferKeywords) -> EnqueueKeywords:
        """The enqueue options of one run of this task: the caller's, and the task's ``max_attempts``."""
        return {**options, "max_attempts": self.options.max_attempts}

    async def _enqueue(
        self,
        payloads: Sequence[object],
        single: bool,
        delay: Duration | None,
        run_at: datetime | None,
        expires: Duration | None,
        priority: int,
    ) -> list[JobId]:
        """``defer`` (``single``: one ``enqueue``) or ``defer_many`` (one ``enqueue_many``), after ``envelopes``."""
        envelopes = self.envelopes(payloads, delay=delay, run_at=run_at, single=single)
        queue = await self.app.queue_for(self)
        attempts = self.options.max_attempts
        if single:
            return [
                await queue.enqueue(
                    envelopes[0], delay=delay, run_at=run_at, expires=expires, max_attempts=attempts, priority=priority
                )
            ]
        return await queue.enqueue_many(
            envelopes, delay=delay, run_at=run_at, expires=expires, max_attempts=attempts, priority=priority
        )

    def envelopes(
        self, payloads: Sequence[object], *, delay: Duration | None, run_at: datetime | None, single: bool
    ) -> list[dict[str, object]]:
        """The stored envelopes of ``payloads``, after the app's own rules, which ``defer`` and ``defer_many`` share.

        Each payload is encoded as the store will encode it (``PayloadError`` for what is no JSON value, E8) and
        its text measured against ``max_payload_bytes``; ``delay`` with ``run_at`` is refused. The contract checks
        the rest (E9) in ``enqueue``, before any write. ``single`` names the argument ``payload`` (``defer``)
        rather than ``payloads[i]`` (``defer_many``) in the errors.
        """
        if delay is not None and run_at is not None:
            raise InvalidArgument(
                f"delay={describe_value(delay)} and run_at={describe_value(run_at)}: give one of them, not both "
                "(delay is relative to now, run_at an instant)"
            )
        if single:
            named = ["payload"]
        else:
            if isinstance(payloads, str | bytes) or not isinstance(payloads, Sequence):
                raise InvalidArgument(f"payloads={describe_value(payloads)}: must be a sequence (a list) of payloads")
            named = [f"payloads[{index}]" for index in range(len(payloads))]
        bound = self.app.max_payload_bytes
        envelopes: list[dict[str, object]] = []
        for name, payload in zip(named, payloads, strict=True):
            try:
                size = len(encode_payload(payload))  # ensure_ascii: one byte per character
            except PayloadError as exc:
                raise PayloadError(f"{name}{str(exc).removeprefix('payload')}") from None
            if size > bound:
                raise PayloadError(
                    f"{name}: its JSON text is {size} bytes, over this app's max_payload_bytes={bound}; "
                    "store large data elsewhere and enqueue a reference to it"
                )
            envelopes.append(Envelope(self.name, payload).encode())
        return envelopes

    def run_with(self, payload: object, job: Job, lease: Lease | None = None) -> Awaitable[object]:
        """The handler's coroutine for one claimed job held under ``lease``."""
        if self.takes_context:
            return self.function(payload, JobContext(job, lease))  # type: ignore[call-arg, arg-type]
        return self.function(payload)  # type: ignore[call-arg, arg-type]


class App:
    """Tasks, and the store they are deferred to and run from.

    ``source`` is an engine's worker source (``alkstore_sqlite.SqliteSource``,
    ``alkstore_postgres.PostgresSource``, ``alkstore_mem.MemSource``) or
    ``StoreSource(open)`` for any engine; ``app.source`` is it as the worker reads
    it (``alkstore_worker.sources.as_source``). The app opens one store lazily for
    ``defer`` and closes it in ``close()`` (or ``async with app``).
    ``max_payload_bytes`` bounds one deferred payload's JSON text.
    """

    def __init__(
        self, source: StoreSource | WorkerSource, *, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES
    ) -> None:
        resolved = as_source(source)
        if isinstance(max_payload_bytes, bool) or not isinstance(max_payload_bytes, int) or max_payload_bytes < 1:
            raise InvalidArgument(f"max_payload_bytes={describe_value(max_payload_bytes)}: must be an int >= 1")
        self._source = resolved
        self.max_payload_bytes = max_payload_bytes
        self.tasks: dict[str, Task[Any, Any]] = {}
        self.settled_hooks: list[Callable[[Settlement], object]] = []
        self._store: Store | None = None

    @property
    def source(self) -> StoreSource:
        """Where the app's store lives, as the worker reads it."""
        return self._source

    @source.setter
    def source(self, source: StoreSource | WorkerSource) -> None:
        self._source = as_source(source)

    def on_settled(self, hook: Callable[[Settlement], object]) -> Callable[[Settlement], object]:
        """Register ``hook`` (a decorator): every worker of this app calls it once per claim it settles, with a
        ``Settlement`` saying which operation it called and whether the store accepted it.

        Called in the worker's event loop, so it must be quick and must not block; an exception it raises is
        logged (``hook_error``) and does not stop the worker.
        """
        if not callable(hook):
            raise InvalidArgument(f"hook={describe_value(hook)}: must be a callable taking a Settlement")
        self.settled_hooks.append(hook)
        return hook

    def task(
        self,
        name: str | None = None,
        *,
        queue: str = "default",
        queue_opts: QueueOpts | None = None,
        max_attempts: int | None = None,
        timeout: float | None = None,
        fail_on: tuple[type[BaseException], ...] = (),
    ) -> Callable[[Callable[P, Awaitable[R]]], Task[P, R]]:
        """Register an ``async def`` as a task (its name defaults to the function's ``__name__``).

        ``max_attempts`` overrides the queue's for this task's jobs; ``timeout``
        (seconds) bounds one run, after which the run is cancelled and retried;
        an exception that is an instance of ``fail_on`` dead-letters at once
        instead of retrying.
        """
        options = TaskKeywords(
            queue=queue, queue_opts=queue_opts, max_attempts=max_attempts, timeout=timeout, fail_on=fail_on
        )
        return self._register(name, None, options)

    def periodic(
        self,
        name: str | None = None,
        *,
        every: float | timedelta | None = None,
        cron: str | None = None,
        **options: Unpack[TaskKeywords],
    ) -> Callable[[Callable[P, Awaitable[R]]], Task[P, R]]:
        """Register an ``async def`` as a task that the workers run on a schedule: ``every`` (seconds or a
        ``timedelta``, ticks at its multiples since the Unix epoch) or ``cron`` (5 fields, UTC), exactly one.

        Each tick is one job whose payload is ``{"tick": ISO-8601}`` (``alkstore_worker.tick_of`` reads it), stored
        once by whichever worker serving the task's queue offers it first (docs/worker.md, "Periodic tasks", says
        what is guaranteed). The other options are ``task``'s, with its defaults; the task can also be deferred.
        """
        unknown = sorted(set(options) - TaskKeywords.__optional_keys__)
        if unknown:
            raise TypeError(f"periodic() got an unexpected keyword argument {unknown[0]!r}")
        return self._register(name, schedule_of(every, cron), options)

    def _register(
        self, name: str | None, schedule: Schedule | None, options: TaskKeywords
    ) -> Callable[[Callable[P, Awaitable[R]]], Task[P, R]]:
        """``task`` and ``periodic``: every option checked before the decorator is applied, then the name."""
        queue = options.get("queue", "default")
        queue_opts = options.get("queue_opts")
        max_attempts = options.get("max_attempts")
        timeout = options.get("timeout")
        fail_on = options.get("fail_on", ())
        validate_queue_name(queue)
        if queue_opts is not None and not isinstance(queue_opts, QueueOpts):
            raise InvalidArgument(f"queue_opts={describe_value(queue_opts)}: must be a QueueOpts or None")
        if max_attempts is not None:
            validate_max_attempts("max_attempts", max_attempts)
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout < float("inf")
        ):
            raise InvalidArgument(f"timeout={describe_value(timeout)}: must be a finite number of seconds > 0 or None")
        if not isinstance(fail_on, tuple) or not all(
            isinstance(kind, type) and issubclass(kind, BaseException) for kind in fail_on
        ):
            raise InvalidArgument(f"fail_on={describe_value(fail_on)}: must be a tuple of exception classes")

        def register(function: Callable[P, Awaitable[R]]) -> Task[P, R]:
            if not inspect.iscoroutinefunction(function):
                raise InvalidArgument(f"task {describe_value(function)}: must be an async def")
            task_name = name if name is not None else function.__name__
            if not isinstance(task_name, str) or not task_name:
                raise InvalidName(f"name={describe_value(task_name)}: a task name must be a non-empty str")
            if task_name in self.tasks:
                raise InvalidName(f"name={task_name!r}: a task of that name is already registered")
            if schedule is not None:
                _check_tick_key(task_name)
            settings = TaskOptions(
                task_name,
                queue,
                queue_opts,
                max_attempts,
                float(timeout) if timeout is not None else None,
                fail_on,
                schedule,
            )
            registered = Task(self, function, settings)
            self.tasks[task_name] = registered
            return registered

        return register

    def queues(self) -> list[str]:
        """Every queue some task is on, in registration order."""
        return list(dict.fromkeys(task.options.queue for task in self.tasks.values()))

    def queue_opts(self, queue: str) -> QueueOpts | None:
        """The options of the first task registered on ``queue`` that sets some."""
        for task in self.tasks.values():
            if task.options.queue == queue and task.options.queue_opts is not None:
                return task.options.queue_opts
        return None

    async def store(self) -> Store:
        """The app's own store, opened on first use."""
        if self._store is None or self._store.closed:
            self._store = await self.source.open()
        return self._store

    async def queue_for(self, task: Task[Any, Any]) -> Queue:
        """The queue handle ``task`` enqueues on, stamping its queue options."""
        return (await self.store()).queue(task.options.queue, task.options.queue_opts)

    async def close(self) -> None:
        """Close the store ``defer`` opened, if any."""
        if self._store is not None:
            await self._store.close()
            self._store = None

    async def __aenter__(self) -> App:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _check_tick_key(task_name: str) -> None:
    """Refuse a periodic task whose ticks' unique keys (``periodic:<name>:<tick>``) the contract would refuse (K4)."""
    key = tick_key(task_name, datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC))
    try:
        validate_unique_key(key)
    except InvalidArgument:
        raise InvalidName(
            f"name={describe_value(task_name)}: a periodic task's ticks are stored under the unique key "
            f"'periodic:<name>:<tick>', which must be UTF-8 text without NUL of at most {UNIQUE_KEY_MAX_CHARS} "
            f"characters (contract K4); with this name it is {len(key)}"
        ) from None
