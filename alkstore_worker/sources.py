"""Where an app's store lives, and what the worker asks of it beyond the store: how idle workers wake, how they
take turns sweeping, how dead letters are listed.

The runtime uses only the public ``Store``/``Queue``/``JobHandle`` surface to run jobs; what differs between
engines is outside that surface, and each engine package keeps it: ``alkstore_sqlite.SqliteSource``,
``alkstore_postgres.PostgresSource``, ``alkstore_mem.MemSource``. As River's client asks its driver what it
supports and never imports one, the worker never imports an engine: a source has the shape of ``WorkerSource``
(open a store, describe itself, how long an idle loop may wait) and, where the engine supports them, of the
optional parts below — ``Listens`` (a wake-up channel), ``TakesTurns`` (a lock for the sweep), ``ListsDeadJobs``
(the contract has no "list" operation) and ``NamesItsErrors`` (what its driver raises when the store is down).
``App`` reads any such source through ``StoreSource``, which supplies the defaults: polling, every worker
sweeping, no dead-letter listing. ``StoreSource(open)`` serves a third party's engine with those defaults alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from alkstore_contract.errors import AlkstoreError, InvalidArgument
from alkstore_contract.surface import Store
from alkstore_contract.validation import describe_value
from alkstore_worker.sweeping import NoLock, SweepLock
from alkstore_worker.wakeup import PollWaker, Waker


@runtime_checkable
class WorkerSource(Protocol):
    """What every source has: a store to open, a name for logs and errors, the longest idle wait."""

    description: str
    poll_max_s: float

    async def open(self) -> Store:
        """A new store; the caller closes it."""
        ...


@runtime_checkable
class Listens(Protocol):
    """A source whose engine can push "a job arrived" (Postgres NOTIFY)."""

    async def prepare(self) -> None:
        """Set up what the channel needs (a trigger); called once per worker process."""
        ...

    def waker(self) -> Waker | None:
        """This worker's waker, or ``None`` when the source was made without a channel."""
        ...


@runtime_checkable
class TakesTurns(Protocol):
    """A source whose engine can let one worker of many sweep a round."""

    def sweep_lock(self) -> SweepLock:
        """A lock of this worker's own."""
        ...


class DeadLetter(Protocol):
    """What a source's dead-letter listing gives per job (a contract ``Job`` has it all)."""

    @property
    def id(self) -> object: ...
    @property
    def queue(self) -> str: ...
    @property
    def attempts(self) -> int: ...
    @property
    def last_error(self) -> str | None: ...
    @property
    def died_at(self) -> datetime | None: ...


@runtime_checkable
class ListsDeadJobs(Protocol):
    """A source whose engine can list its dead letters, read-only."""

    async def dead_jobs(self, queue: str | None, limit: int) -> Sequence[DeadLetter]:
        """Dead letters, newest first, of ``queue`` (every queue with ``None``), at most ``limit``."""
        ...


@runtime_checkable
class NamesItsErrors(Protocol):
    """A source whose driver raises errors of its own when the store cannot be reached."""

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        """Those errors' classes."""
        ...


@dataclass(frozen=True, slots=True)
class DeadJob:
    """One dead letter as ``alkstore jobs dead`` lists it."""

    id: object
    queue: str
    attempts: int
    last_error: str | None
    died_at: str

    @classmethod
    def of(cls, letter: DeadLetter) -> DeadJob:
        """The listing's line of a source's dead letter (its death as ISO-8601 text)."""
        died = letter.died_at.isoformat() if letter.died_at is not None else ""
        return cls(letter.id, letter.queue, letter.attempts, letter.last_error, died)


class StoreSource:
    """A store any engine opens: polling wake-up, every worker sweeps, dead letters not listable.

    It is also how ``App`` reads an engine's own source (``as_source``): each part the engine supports replaces
    the default."""

    poll_max_s = 0.5
    """The longest an idle queue loop waits between claims (the backoff grows to it from 5 ms)."""
    one_process = False
    """Whether the store lives in this process alone (``alkstore worker --processes`` must then be 1)."""

    def __init__(self, open_store: Callable[[], Awaitable[Store]], description: str = "store") -> None:
        self._open = open_store
        self.description = description

    async def open(self) -> Store:
        """A new store; the caller closes it."""
        return await self._open()

    async def prepare(self) -> None:
        """Set up what the workers need beyond the store (a NOTIFY trigger); called once per worker process."""
        return None

    def waker(self) -> Waker:
        """How this worker's idle loops are woken."""
        return PollWaker()

    def sweep_lock(self) -> SweepLock:
        """The lock that lets one worker at a time sweep."""
        return NoLock()

    async def dead_jobs(self, queue: str | None, limit: int) -> list[DeadJob]:
        """Dead letters, newest first; engines without a listing raise ``NotImplementedError``."""
        raise NotImplementedError(f"{self.description}: this engine offers no way to list dead jobs")

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        """What opening or reading the store raises when it cannot be reached (the CLI's one line and exit 1):
        an OS or timeout error, or the contract's own; a source adds its driver's."""
        return (OSError, TimeoutError, AlkstoreError)


class EngineSource(StoreSource):
    """An engine's own source, each part it supports in place of ``StoreSource``'s default."""

    def __init__(self, engine: WorkerSource) -> None:
        super().__init__(engine.open, engine.description)
        self.engine = engine
        self.poll_max_s = engine.poll_max_s
        self.one_process = bool(getattr(engine, "one_process", False))

    async def prepare(self) -> None:
        if isinstance(self.engine, Listens):
            await self.engine.prepare()

    def waker(self) -> Waker:
        found = self.engine.waker() if isinstance(self.engine, Listens) else None
        return found if found is not None else PollWaker()

    def sweep_lock(self) -> SweepLock:
        return self.engine.sweep_lock() if isinstance(self.engine, TakesTurns) else NoLock()

    async def dead_jobs(self, queue: str | None, limit: int) -> list[DeadJob]:
        if not isinstance(self.engine, ListsDeadJobs):
            return await super().dead_jobs(queue, limit)
        return [DeadJob.of(letter) for letter in await self.engine.dead_jobs(queue, limit)]

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        own = self.engine.unreachable_errors() if isinstance(self.engine, NamesItsErrors) else ()
        return (*super().unreachable_errors(), *own)


def as_source(source: object) -> StoreSource:
    """``source`` as the worker reads it: a ``StoreSource`` as it is, an engine's own source through
    ``EngineSource``; anything else refused, naming what it is."""
    if isinstance(source, StoreSource):
        return source
    if isinstance(source, WorkerSource):
        return EngineSource(source)
    raise InvalidArgument(
        f"source={describe_value(source)}: must be a worker source: an engine's (alkstore_sqlite.SqliteSource, "
        "alkstore_postgres.PostgresSource, alkstore_mem.MemSource) or StoreSource(open_store)"
    )
