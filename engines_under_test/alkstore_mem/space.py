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
- ``ready``: jobs a claim may take, in claim order, each entry one int,
  ``order_key << 64 | version``, where the order key (``c2_key``) packs
  priority, ready time and id. One int rather than a tuple, because a pop
  compares two entries on each of the heap's levels (20 on a backlog of a
  million), and the lower levels are far out of the CPU's caches: comparing
  two ints reads two objects, comparing two tuples down to their ids reads six.
  On a 1M heap a pop took 4.3 us with tuples and 1.6 us with ints.
- ``leases``: ``(lease_expires_at, id, version)`` of processing jobs.

A claim first moves the due part of ``delayed`` and the lapsed part of
``leases`` into ``ready``, then pops ``ready``.

Nearly every lease ends before it lapses (an ack, a retry, a fail), which
leaves its entry stale in ``leases``. Found only when it lapses, each such
entry cost a lookup of a job that is gone in a dict of a million (a cache
miss), and all of them came due together in the first claim after the clock
passed them: in the scale benchmark, claim_one+ack at a 1M backlog ran at
0.74x of 10k with a sweep's clock jump between runs, 1.08x without that debt.
So an op that ends a lease says so (``lease_dropped``): the entry's
``(id, version)`` goes into ``stale_leases``, a small set a lapsing entry is
checked against first, and ``leases`` is compacted once stale entries make up
half of it.

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
from heapq import heapify, heappop, heappush

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.instants import to_epoch_us
from alkstore_mem.record import (
    DEAD_LETTER_RETENTION_S,
    DIED_AT,
    ID,
    LEASE_EXPIRES_AT,
    RUN_AT,
    VERSION,
    JobRecord,
    as_timedelta,
)

_LOW_64 = (1 << 64) - 1
_RANK_OFFSET = 1 << 63
_EPOCH_US_OFFSET = 1 << 62
"""Added to microseconds since the epoch: any ``datetime`` (years 1 to 9999) lands in 0 .. 2**63."""


def c2_key(rank: int, run_at: datetime, job_id: int) -> int:
    """One int that sorts as ``(rank, run_at, job_id)``: contract C2's order when ``rank`` is ``-priority``.

    ``rank`` is any int from -2**63 to 2**63 (it is the top field, so its width
    is free), ``run_at`` any aware datetime, ``job_id`` an id of this engine
    (0 < id < 2**63), kept in the low 64 bits so an entry names its job.
    """
    return (((rank + _RANK_OFFSET) << 64 | (to_epoch_us(run_at) + _EPOCH_US_OFFSET)) << 64) | job_id


TimedEntry = tuple[datetime, int, int]
WatchEntry = tuple[datetime, int]

COMPACTION_SLACK = 1024
"""Stale heap entries tolerated beyond twice the live jobs before a queue's heaps are rebuilt."""


class QueueIndex:
    """All jobs of one queue in one space, and the heaps a claim reads."""

    __slots__ = ("delayed", "high_water", "jobs", "leases", "name", "ready", "stale_leases", "watched")

    def __init__(self, name: str) -> None:
        self.name = name
        self.jobs: dict[int, JobRecord] = {}
        self.delayed: list[TimedEntry] = []
        self.ready: list[int] = []
        self.leases: list[TimedEntry] = []
        self.watched: list[WatchEntry] = []
        self.high_water: datetime | None = None
        self.stale_leases: set[int] = set()
        """``id << 64 | version`` of the entries of ``leases`` whose lease an op has ended."""

    def current(self, job_id: int, version: int) -> JobRecord | None:
        """The job an index entry points at, or ``None`` when the entry is stale."""
        record = self.jobs.get(job_id)
        return record if record is not None and record[VERSION] == version else None

    def needs_rebuild(self, now: datetime) -> bool:
        """True when time went back since the heaps were arranged, or they are mostly stale entries."""
        if self.high_water is not None and now < self.high_water:
            return True
        limit = 2 * len(self.jobs) + COMPACTION_SLACK
        return len(self.delayed) + len(self.ready) + len(self.leases) > limit or len(self.watched) > limit

    def file_delayed(self, record: JobRecord) -> None:
        """Index a ready job by its ready time; a claim promotes it once due."""
        heappush(self.delayed, (record[RUN_AT], record[ID], record[VERSION]))

    def file_lease(self, record: JobRecord, lease_expires_at: datetime) -> None:
        """Index a processing job by its lease deadline; a claim reconsiders it once lapsed."""
        heappush(self.leases, (lease_expires_at, record[ID], record[VERSION]))

    def lease_dropped(self, record: JobRecord) -> None:
        """The lease ``record`` holds is over before its deadline (ack, retry, fail, cancel, sweep, heartbeat)."""
        if record[LEASE_EXPIRES_AT] is None:
            return
        stale = self.stale_leases
        stale.add(record[ID] << 64 | record[VERSION])
        if len(stale) > COMPACTION_SLACK and 2 * len(stale) > len(self.leases):
            self.leases[:] = [entry for entry in self.leases if (entry[1] << 64 | entry[2]) not in stale]
            heapify(self.leases)
            stale.clear()

    def pop_lapsed(self) -> JobRecord | None:
        """Take the first entry of ``leases``: its job, or ``None`` when an op ended that lease or the job changed."""
        _, job_id, version = heappop(self.leases)
        key = job_id << 64 | version
        if key in self.stale_leases:
            self.stale_leases.discard(key)
            return None
        return self.current(job_id, version)

    def file_ready(self, record: JobRecord, key: int) -> None:
        """Offer a job to the next claims, in the order ``key`` (from ``c2_key``) gives."""
        heappush(self.ready, key << 64 | record[VERSION])

    def pop_ready(self) -> JobRecord | None:
        """Take the first entry of ``ready``: its job, or ``None`` when the entry is stale."""
        entry = heappop(self.ready)
        return self.current((entry >> 64) & _LOW_64, entry & _LOW_64)

    def watch(self, instant: datetime, job_id: int) -> None:
        """Have the first sweep at or after ``instant`` look at the job (an expiry, a last attempt's lease)."""
        heappush(self.watched, (instant, job_id))

    def watch_death(self, record: JobRecord) -> None:
        """A job just died: have a sweep look at it when its dead-letter retention (if any) is over."""
        retention, died_at = record[DEAD_LETTER_RETENTION_S], record[DIED_AT]
        if retention is not None and died_at is not None:
            heappush(self.watched, (died_at + as_timedelta(retention), record[ID]))


class MemSpace:
    """One location: its queues and its id counter.

    Ids are ints from one counter per space, so they are unique across the
    space's queues and increase in enqueue order (the last key of contract C2).
    """

    __slots__ = ("_ids", "keys", "name", "queues")

    def __init__(self, name: str) -> None:
        self.name = name
        self.queues: dict[str, QueueIndex] = {}
        self.keys: dict[tuple[str, str], int] = {}
        """(queue, unique key) → the id of the last job stored with it (K1): it holds the key while stored, not dead."""
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
