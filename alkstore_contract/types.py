"""The values that cross the contract: ids, durations, queue options and job snapshots (the contract part).

``JobId`` and ``Duration`` live here, with the other types, so that code that only
names a type (a row, a report) needs nothing of the engines' validation rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import NamedTuple, TypeAlias, TypedDict

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


class EnqueueCall(NamedTuple):
    """The options of one ``enqueue``/``enqueue_many`` call as the caller gave them, checked by no one yet.

    ``alkstore_contract.handles.NamedQueue`` packs its keyword arguments into one,
    so the surface's enqueue signature is written once for the engines built on
    it: the kit checks the call (``resolution.EnqueueOptions.validate_call``), the
    wire sends it for the engine to judge, and the suite's model resolves it as the
    contract's text says. The defaults are the surface's (E4, E6, E7).
    """

    delay: Duration | None = None
    run_at: datetime | None = None
    expires: Duration | None = None
    max_attempts: int | None = None
    priority: int = 0


class EnqueueKeywords(TypedDict, total=False):
    """The keyword options of ``Queue.enqueue`` (E1–E10), for the 2.1 ops that take them as they are.

    The contract writes ``enqueue_unique(payload, unique_key, **the options of enqueue)`` and the same for
    ``enqueue_in``; this is that set, written once, so the ops cannot drift from ``enqueue``. A key left out takes
    ``enqueue``'s default (``EnqueueCall``'s).
    """

    delay: Duration | None
    run_at: datetime | None
    expires: Duration | None
    max_attempts: int | None
    priority: int


@dataclass(frozen=True, slots=True)
class Job:
    """A snapshot of one job as the store held it when read (contract clause B3).

    ``run_at`` is the job's ready time. Instants are aware UTC datetimes;
    ``lease_expires_at`` and ``claimed_by`` are set only while ``processing``;
    ``died_at`` only when ``dead``. The ``*_s`` fields are the stamps resolved
    at enqueue (E1).

    An engine that builds many snapshots (a hundred per batch claim) builds
    them with ``alkstore_contract.kit.new_job``, which takes the same fields in
    the same order and skips the frozen ``__init__``.
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


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What ``enqueue_unique`` answers (contract K1–K3): the id of the job holding the key, and who stored it.

    ``created`` is ``True`` when this call stored the job, ``False`` when a job
    with the key was already unfinished and nothing was stored: a caller that
    must know whether its payload is the one queued reads it here, not from
    the id alone.
    """

    id: JobId
    created: bool


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
these fields, in this order. Reordering ``Job`` is a breaking change: the
kit (``alkstore_contract.kit.fast``) refuses to import unless this tuple
changes with it.
"""
