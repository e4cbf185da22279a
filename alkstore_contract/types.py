"""The values that cross the contract: ids, durations, queue options and job snapshots (the contract part).

``JobId`` and ``Duration`` live here, with the other types, so that code that only
names a type (a row, a report) needs nothing of the engines' validation rules.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeAlias

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.validation import (
    describe_value,
    duration_seconds,
    optional_duration_seconds,
    validate_max_attempts,
)

Duration: TypeAlias = int | float | timedelta
"""A length of time: seconds as an ``int`` or ``float``, or a ``timedelta``."""
JobId: TypeAlias = int | str
"""A job's id: whatever the engine minted, an ``int`` or a ``str``."""


class JobState(StrEnum):
    """A job is ready to claim, held under a lease, or dead (docs/contract.md, "Public surface")."""

    READY = "ready"
    PROCESSING = "processing"
    DEAD = "dead"


DEFAULT_VISIBILITY_TIMEOUT_S = 300.0
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_BASE_S = 5.0


@dataclass(frozen=True, slots=True)
class QueueOpts:
    """Options a queue handle stamps on every job it enqueues (contract clauses E1, S2).

    Validation happens at construction, so an invalid ``QueueOpts`` never exists.
    Durations are normalised to float seconds.
    """

    visibility_timeout_s: float = DEFAULT_VISIBILITY_TIMEOUT_S
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_base_s: float = DEFAULT_BACKOFF_BASE_S
    dead_letter_retention_s: float | None = None

    def __init__(
        self,
        visibility_timeout_s: Duration = DEFAULT_VISIBILITY_TIMEOUT_S,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base_s: Duration = DEFAULT_BACKOFF_BASE_S,
        dead_letter_retention_s: Duration | None = None,
    ) -> None:
        object.__setattr__(
            self, "visibility_timeout_s", duration_seconds("visibility_timeout_s", visibility_timeout_s, positive=True)
        )
        object.__setattr__(self, "max_attempts", validate_max_attempts("max_attempts", max_attempts))
        object.__setattr__(self, "backoff_base_s", duration_seconds("backoff_base_s", backoff_base_s))
        object.__setattr__(
            self,
            "dead_letter_retention_s",
            optional_duration_seconds("dead_letter_retention_s", dead_letter_retention_s),
        )


def validate_queue_opts(opts: object) -> QueueOpts:
    """S1/S2: the ``opts`` of ``store.queue(name, opts)``: a ``QueueOpts``, or ``None`` for the defaults.

    Anything else (a dict of options included) is ``InvalidArgument`` naming
    ``opts``; the value is shown with ``describe_value``, so a dict holding an
    int too long to print is still reported, not a crash.
    """
    if opts is None:
        return QueueOpts()
    if not isinstance(opts, QueueOpts):
        raise InvalidArgument(f"opts={describe_value(opts)}: must be a QueueOpts or None")
    return opts


@dataclass(frozen=True, slots=True)
class Job:
    """A snapshot of one job as the store held it when read (contract clause B3).

    ``run_at`` is the job's ready time. Instants are aware UTC datetimes;
    ``lease_expires_at`` and ``claimed_by`` are set only while ``processing``;
    ``died_at`` only when ``dead``. The ``*_s`` fields are the stamps resolved
    at enqueue (E1).

    Every claimed job is one ``Job`` (a hundred per batch claim), so
    ``__init__`` is written out rather than generated: a frozen dataclass's
    own ``__init__`` sets each field through ``object.__setattr__`` (1.7 µs
    for the seventeen), and calling the slots' descriptors costs 0.8 µs. This
    one makes the new object a ``_JobFields`` for the moment (the same slots,
    so the same layout, without the frozen ``__setattr__``), stores each field
    as a plain attribute and makes it a ``Job`` again (0.45 µs). Frozen,
    slotted, compared and shown exactly as the dataclass would be. Called on
    a bare ``_JobFields`` instead (``alkstore_contract.kit.jobs_from_rows``
    does, a row at a time), it fills that object and makes it the ``Job``.
    """

    id: JobId
    queue: str
    payload: object
    state: JobState
    priority: int
    attempts: int
    max_attempts: int
    run_at: datetime
    expires_at: datetime | None
    enqueued_at: datetime
    lease_expires_at: datetime | None
    claimed_by: str | None
    visibility_timeout_s: float
    backoff_base_s: float
    dead_letter_retention_s: float | None
    last_error: str | None
    died_at: datetime | None

    def __init__(
        self,
        id: JobId,
        queue: str,
        payload: object,
        state: JobState,
        priority: int,
        attempts: int,
        max_attempts: int,
        run_at: datetime,
        expires_at: datetime | None,
        enqueued_at: datetime,
        lease_expires_at: datetime | None,
        claimed_by: str | None,
        visibility_timeout_s: float,
        backoff_base_s: float,
        dead_letter_retention_s: float | None,
        last_error: str | None,
        died_at: datetime | None,
    ) -> None:
        kind: type = type(self)  # a bare _JobFields when the kit fills one (jobs_from_rows)
        if kind is Job:
            object.__setattr__(self, "__class__", _JobFields)
        elif kind is not _JobFields:  # a subclass may add slots or a __dict__: through the descriptors
            given = locals()
            for name in JOB_FIELDS:
                object.__setattr__(self, name, given[name])
            return
        job: Any = self
        job.id = id
        job.queue = queue
        job.payload = payload
        job.state = state
        job.priority = priority
        job.attempts = attempts
        job.max_attempts = max_attempts
        job.run_at = run_at
        job.expires_at = expires_at
        job.enqueued_at = enqueued_at
        job.lease_expires_at = lease_expires_at
        job.claimed_by = claimed_by
        job.visibility_timeout_s = visibility_timeout_s
        job.backoff_base_s = backoff_base_s
        job.dead_letter_retention_s = dead_letter_retention_s
        job.last_error = last_error
        job.died_at = died_at
        object.__setattr__(self, "__class__", Job)


JOB_FIELDS: tuple[str, ...] = (
    "id",
    "queue",
    "payload",
    "state",
    "priority",
    "attempts",
    "max_attempts",
    "run_at",
    "expires_at",
    "enqueued_at",
    "lease_expires_at",
    "claimed_by",
    "visibility_timeout_s",
    "backoff_base_s",
    "dead_letter_retention_s",
    "last_error",
    "died_at",
)
"""``Job``'s fields in order, which is the order ``Job(...)`` takes them positionally.

Part of the contract: engines build a snapshot from a row positionally (a
hundred per batch claim) and name their columns and ``SELECT`` lists after
these fields, in this order. Reordering ``Job`` is a breaking change, so it
fails here, at import, unless this tuple changes with it.
"""
if tuple(field.name for field in fields(Job)) != JOB_FIELDS:
    raise ImportError("alkstore_contract.types.JOB_FIELDS no longer matches the fields of Job, in order")
if Job.__init__.__code__.co_varnames[1 : len(JOB_FIELDS) + 1] != JOB_FIELDS:
    raise ImportError("Job.__init__'s parameters no longer match Job's fields, in order")


class _JobFields:
    """``Job``'s slots without its frozen ``__setattr__``: what ``Job.__init__`` stores the fields through.

    ``object.__new__(_JobFields)`` passed to ``Job.__init__`` comes out a
    ``Job``: how the kit builds a batch's snapshots without ``type.__call__``.

    CPython lays slots out by name, so the same names make the same layout,
    which ``__class__`` assignment requires; the check below proves at import
    that each field stored this way reads back through ``Job``'s descriptors.
    """

    __slots__ = JOB_FIELDS


_probe = tuple(range(len(JOB_FIELDS)))
if tuple(getattr(Job(*_probe), name) for name in JOB_FIELDS) != _probe:  # type: ignore[arg-type]
    raise ImportError("alkstore_contract.types._JobFields no longer lays Job's fields out as Job does")
