"""How options turn into stored values (contract E1–E7, R1–R4, D1), written once.

Part of the contract.

The kit's front (``alkstore_contract.kit``) calls these, so every engine on it
stores the same values; an engine implementing the surface itself calls them
too. What depends on ``now`` is left relative (``NewJobs``, ``RetryDecision``),
so a driver that keeps time itself (a server's clock) adds the one ``now`` it reads.
"""

from __future__ import annotations

import importlib
import random
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from alkstore_contract._moved import REMOVED_IN, REPLACED
from alkstore_contract.backoff import backoff_delay_s
from alkstore_contract.types import Duration, QueueOpts
from alkstore_contract.validation import (
    encode_payload,
    optional_duration_seconds,
    validate_instant,
    validate_max_attempts,
    validate_priority,
)

if TYPE_CHECKING:  # type checkers see the 0.1 helpers as they are; at run time ``__getattr__`` warns
    from alkstore_contract._pre_kit import NewJob as NewJob
    from alkstore_contract._pre_kit import RetryOutcome as RetryOutcome
    from alkstore_contract._pre_kit import resolve_new_job as resolve_new_job
    from alkstore_contract._pre_kit import resolve_retry as resolve_retry

LAST_ERROR_FAILED = "failed"
LAST_ERROR_MAX_ATTEMPTS = "max attempts exceeded"
LAST_ERROR_EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class EnqueueOptions:
    """The per-call options of ``enqueue``/``enqueue_many``, validated but not yet resolved."""

    delay_s: float | None
    run_at: datetime | None
    expires_s: float | None
    max_attempts: int | None
    priority: int

    @classmethod
    def validate(
        cls,
        *,
        delay: Duration | None,
        run_at: datetime | None,
        expires: Duration | None,
        max_attempts: int | None,
        priority: int,
    ) -> EnqueueOptions:
        """Check every option (contract E9) before anything is read or written.

        A call that leaves every option at its default, as most do, gets the
        one shared ``_DEFAULT_OPTIONS`` without a check: building a frozen
        dataclass costs more than checking all five (counted with cachegrind,
        15,700 instructions a call against 2,600).
        """
        if (
            delay is None
            and run_at is None
            and expires is None
            and max_attempts is None
            and type(priority) is int
            and priority == 0
            and cls is EnqueueOptions
        ):
            return _DEFAULT_OPTIONS
        return cls(
            delay_s=optional_duration_seconds("delay", delay),
            run_at=None if run_at is None else validate_instant("run_at", run_at),
            expires_s=optional_duration_seconds("expires", expires),
            max_attempts=None if max_attempts is None else validate_max_attempts("max_attempts", max_attempts),
            priority=validate_priority(priority),
        )


_DEFAULT_OPTIONS = EnqueueOptions(delay_s=None, run_at=None, expires_s=None, max_attempts=None, priority=0)
"""Every option left at its default: what ``EnqueueOptions.validate`` returns for a call that sets none."""


@dataclass(frozen=True, slots=True)
class NewJobs:
    """The jobs of one ``enqueue``/``enqueue_many`` call, resolved but for ``now`` (E1–E7, E11).

    Every job of one call shares every stamp but its payload. ``run_at`` is the
    absolute instant the caller gave; when it is ``None`` the jobs are ready at
    ``now + delay_s`` (``delay_s`` is 0 without a delay). ``expires_s`` is
    relative to ``now``. A driver stores these verbatim; ``run_at_from`` and
    ``expires_at_from`` do the arithmetic for a driver that has ``now`` in hand.
    """

    payloads: Sequence[str]
    """The payloads' JSON texts, in input order."""
    priority: int
    max_attempts: int
    run_at: datetime | None
    delay_s: float
    expires_s: float | None
    visibility_timeout_s: float
    backoff_base_s: float
    dead_letter_retention_s: float | None

    def run_at_from(self, now: datetime) -> datetime:
        """E2/E3: the ready time of these jobs when enqueued at ``now``."""
        return self.run_at if self.run_at is not None else now + timedelta(seconds=self.delay_s)

    def expires_at_from(self, now: datetime) -> datetime | None:
        """E4: the expiry instant of these jobs when enqueued at ``now``, or ``None``."""
        return None if self.expires_s is None else now + timedelta(seconds=self.expires_s)


(
    _set_payloads,
    _set_priority,
    _set_max_attempts,
    _set_run_at,
    _set_delay_s,
    _set_expires_s,
    _set_visibility_timeout_s,
    _set_backoff_base_s,
    _set_dead_letter_retention_s,
) = (vars(NewJobs)[field.name].__set__ for field in fields(NewJobs))
"""The slots of ``NewJobs``, set straight: how ``resolve_new_jobs`` fills one (every enqueue builds one)."""


def resolve_new_jobs(payload_jsons: Sequence[str], options: EnqueueOptions, opts: QueueOpts) -> NewJobs:
    """contract E1–E7 for one call, ``now`` left to whoever stores: delay wins over run_at; stamps from ``opts``.

    The ``NewJobs`` is filled through its slots' descriptors rather than its
    frozen ``__init__``, which sets each field through ``object.__setattr__``:
    counted with cachegrind, 8,900 instructions a call against 19,900.
    ``test_resolution`` checks that it equals the one ``__init__`` builds.
    """
    jobs = object.__new__(NewJobs)
    _set_payloads(jobs, payload_jsons)
    _set_priority(jobs, options.priority)
    _set_max_attempts(jobs, options.max_attempts if options.max_attempts is not None else opts.max_attempts)
    _set_run_at(jobs, options.run_at if options.delay_s is None else None)
    _set_delay_s(jobs, options.delay_s if options.delay_s is not None else 0.0)
    _set_expires_s(jobs, options.expires_s)
    _set_visibility_timeout_s(jobs, opts.visibility_timeout_s)
    _set_backoff_base_s(jobs, opts.backoff_base_s)
    _set_dead_letter_retention_s(jobs, opts.dead_letter_retention_s)
    return jobs


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """What a valid ``retry()`` does, relative to the op's ``now``: ready again after ``delay_s``, or dead (R1, R4)."""

    dead: bool
    delay_s: float
    last_error: str | None


def decide_retry(
    *,
    attempts: int,
    max_attempts: int,
    backoff_base_s: float,
    error: str | None,
    delay_s: float | None,
    rng: random.Random,
) -> RetryDecision:
    """contract R1–R4. ``attempts`` is the count after the claim being retried; draws from ``rng`` at most once."""
    if attempts >= max_attempts:
        return RetryDecision(dead=True, delay_s=0.0, last_error=error if error is not None else LAST_ERROR_MAX_ATTEMPTS)
    seconds = delay_s if delay_s is not None else backoff_delay_s(attempts, backoff_base_s, rng)
    return RetryDecision(dead=False, delay_s=seconds, last_error=error)


def encode_payloads(payloads: Sequence[object]) -> list[str]:
    """Encode every payload first, so one bad payload stores nothing (contract E11)."""
    return [encode_payload(payload) for payload in payloads]


def fail_error(error: str | None) -> str:
    """contract D1: the stored ``last_error`` of ``fail()``."""
    return error if error is not None else LAST_ERROR_FAILED


def __getattr__(name: str) -> object:
    """The helpers of release 0.1 (``NewJob``, ``resolve_new_job``, ``RetryOutcome``, ``resolve_retry``), for one more.

    They are shims over their replacements (``alkstore_contract._pre_kit``), handed out with a
    ``DeprecationWarning`` naming the replacement, so an adapter written against 0.1 still loads.
    """
    shims = importlib.import_module("alkstore_contract._pre_kit")
    replacement = REPLACED.get(f"{__name__}.{name}")
    if replacement is None or not hasattr(shims, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"{__name__}.{name} is deprecated: use {replacement} "
        f"(the old name stops working in alkstore {REMOVED_IN}; see CHANGELOG.md)",
        DeprecationWarning,
        stacklevel=2,
    )
    value: object = getattr(shims, name)
    setattr(sys.modules[__name__], name, value)  # once: ``from … import`` looks a name up twice
    return value
