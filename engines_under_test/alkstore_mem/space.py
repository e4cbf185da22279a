"""The shared state of a location: a named in-memory space and its per-queue indexes.

A location of this engine is a space name. ``SPACES`` maps each name to one
``MemSpace`` object, and every store opened on that name works on that very
object, so several stores see one state (contract P1). The space holds only data
and the bookkeeping that keeps the indexes consistent; what is claimable and in
which order is decided by the driver (``alkstore_mem.driver``), so a
subclass can change the policy without touching the storage.

Why heaps: a claim must stay cheap on a large backlog, so no claim scans the
queue. Each queue keeps three binary heaps, with lazy deletion: every entry
carries the job's ``version`` at filing time and is ignored when the job has
changed or gone since.

- ``delayed``: ``(run_at, id, version)`` of ready jobs not yet due.
- ``ready``: ``(*order_key, id, version)`` of jobs a claim may take, in claim order
  (flat rather than nested: a heap of flat tuples pops a third faster).
- ``leases``: ``(lease_expires_at, id, version)`` of processing jobs.

A claim first moves the due part of ``delayed`` and the lapsed part of
``leases`` into ``ready``, then pops ``ready``.

A fourth heap, ``watched``, serves the sweep, so that moving 1,000 jobs out of
a queue of a million costs what moving them out of ten thousand does: ``(instant,
id)`` of every moment a job may become the sweep's business — its expiry
(filed at enqueue), the end of its dead-letter retention (filed when it dies),
the lease of its last attempt (filed when that claim or a heartbeat sets it).
A sweep pops the entries that are due and decides on those jobs alone, with the
same predicates a full scan would apply; an entry whose job has since moved on
is simply dropped, since whatever the job does next files its own entry. The heaps rely on time moving
forward; ``high_water`` remembers the latest ``now`` they were arranged for,
and the driver rebuilds them from ``jobs`` when a clock goes back (a
``ManualClock.set`` to an earlier instant, or two stores on one space with
different clocks) or when stale entries outnumber live jobs.
"""

from __future__ import annotations

import itertools
from datetime import datetime
from heapq import heappush
from typing import Any

from alkstore_contract.errors import InvalidArgument
from alkstore_mem.record import JobRecord, as_timedelta

OrderKey = tuple[int | datetime, ...]
ReadyEntry = tuple[Any, ...]
"""``order_key + (id, version)``: any comparable key items, then always the id and the version."""
TimedEntry = tuple[datetime, int, int]
WatchEntry = tuple[datetime, int]

COMPACTION_SLACK = 1024
"""Stale heap entries tolerated beyond twice the live jobs before a queue's heaps are rebuilt."""


class QueueIndex:
    """All jobs of one queue in one space, and the heaps a claim reads."""

    __slots__ = ("delayed", "high_water", "jobs", "leases", "name", "ready", "watched")

    def __init__(self, name: str) -> None:
        self.name = name
        self.jobs: dict[int, JobRecord] = {}
        self.delayed: list[TimedEntry] = []
        self.ready: list[ReadyEntry] = []
        self.leases: list[TimedEntry] = []
        self.watched: list[WatchEntry] = []
        self.high_water: datetime | None = None

    def current(self, job_id: int, version: int) -> JobRecord | None:
        """The job an index entry points at, or ``None`` when the entry is stale."""
        record = self.jobs.get(job_id)
        return record if record is not None and record.version == version else None

    def needs_rebuild(self, now: datetime) -> bool:
        """True when time went back since the heaps were arranged, or they are mostly stale entries."""
        if self.high_water is not None and now < self.high_water:
            return True
        limit = 2 * len(self.jobs) + COMPACTION_SLACK
        return len(self.delayed) + len(self.ready) + len(self.leases) > limit or len(self.watched) > limit

    def file_delayed(self, record: JobRecord) -> None:
        """Index a ready job by its ready time; a claim promotes it once due."""
        heappush(self.delayed, (record.run_at, record.id, record.version))

    def file_lease(self, record: JobRecord, lease_expires_at: datetime) -> None:
        """Index a processing job by its lease deadline; a claim reconsiders it once lapsed."""
        heappush(self.leases, (lease_expires_at, record.id, record.version))

    def file_ready(self, record: JobRecord, key: OrderKey) -> None:
        """Offer a job to the next claims, in the order ``key`` gives."""
        heappush(self.ready, (*key, record.id, record.version))

    def watch(self, instant: datetime, job_id: int) -> None:
        """Have the first sweep at or after ``instant`` look at the job (an expiry, a last attempt's lease)."""
        heappush(self.watched, (instant, job_id))

    def watch_death(self, record: JobRecord) -> None:
        """A job just died: have a sweep look at it when its dead-letter retention (if any) is over."""
        retention = record.dead_letter_retention_s
        if retention is not None and record.died_at is not None:
            heappush(self.watched, (record.died_at + as_timedelta(retention), record.id))


class MemSpace:
    """One location: its queues and its id counter.

    Ids are ints from one counter per space, so they are unique across the
    space's queues and increase in enqueue order (the last key of contract C2).
    """

    __slots__ = ("_ids", "name", "queues")

    def __init__(self, name: str) -> None:
        self.name = name
        self.queues: dict[str, QueueIndex] = {}
        self._ids = itertools.count(1)

    def index(self, queue: str) -> QueueIndex:
        """The index of ``queue``, created empty on first use."""
        index = self.queues.get(queue)
        if index is None:
            index = self.queues[queue] = QueueIndex(queue)
        return index

    def new_id(self) -> int:
        return next(self._ids)


SPACES: dict[str, MemSpace] = {}
"""Every live space of this process, by name: what a location string refers to."""


def space_named(name: str) -> MemSpace:
    """The space called ``name``, created empty if there is none yet."""
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"space={name!r}: a space name must be a non-empty str")
    space = SPACES.get(name)
    if space is None:
        space = SPACES[name] = MemSpace(name)
    return space


def drop_space(name: str) -> None:
    """Forget the space called ``name`` (stores still open on it keep their own reference)."""
    SPACES.pop(name, None)
