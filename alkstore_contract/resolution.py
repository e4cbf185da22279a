"""How options turn into stored values (contract E1–E7, R1–R4, D1), written once.

Engines call these with the ``now`` they read for the operation and store the
result verbatim; the arithmetic never depends on the engine.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from alkstore_contract.backoff import backoff_delay_s
from alkstore_contract.types import QueueOpts
from alkstore_contract.validation import (
    Duration,
    encode_payload,
    optional_duration_seconds,
    validate_instant,
    validate_max_attempts,
    validate_priority,
)

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
        """Check every option (contract E9) before anything is read or written."""
        return cls(
            delay_s=optional_duration_seconds("delay", delay),
            run_at=None if run_at is None else validate_instant("run_at", run_at),
            expires_s=optional_duration_seconds("expires", expires),
            max_attempts=None if max_attempts is None else validate_max_attempts("max_attempts", max_attempts),
            priority=validate_priority(priority),
        )


@dataclass(frozen=True, slots=True)
class NewJob:
    """Everything an engine stores for one enqueue, resolved from one ``now``."""

    payload_json: str
    priority: int
    max_attempts: int
    run_at: datetime
    expires_at: datetime | None
    enqueued_at: datetime
    visibility_timeout_s: float
    backoff_base_s: float
    dead_letter_retention_s: float | None


def resolve_new_jobs(payload_jsons: Sequence[str], options: EnqueueOptions, opts: QueueOpts) -> NewJobs:
    """contract E1–E7 for one call, ``now`` left to whoever stores: delay wins over run_at; stamps from ``opts``."""
    return NewJobs(
        payloads=payload_jsons,
        priority=options.priority,
        max_attempts=options.max_attempts if options.max_attempts is not None else opts.max_attempts,
        run_at=options.run_at if options.delay_s is None else None,
        delay_s=options.delay_s if options.delay_s is not None else 0.0,
        expires_s=options.expires_s,
        visibility_timeout_s=opts.visibility_timeout_s,
        backoff_base_s=opts.backoff_base_s,
        dead_letter_retention_s=opts.dead_letter_retention_s,
    )


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


def resolve_new_job(payload_json: str, options: EnqueueOptions, opts: QueueOpts, now: datetime) -> NewJob:
    """contract E1–E7: stamps from ``opts``; delay wins over run_at; expires is relative to ``now``."""
    if options.delay_s is not None:
        run_at = now + timedelta(seconds=options.delay_s)
    elif options.run_at is not None:
        run_at = options.run_at
    else:
        run_at = now
    return NewJob(
        payload_json=payload_json,
        priority=options.priority,
        max_attempts=options.max_attempts if options.max_attempts is not None else opts.max_attempts,
        run_at=run_at,
        expires_at=None if options.expires_s is None else now + timedelta(seconds=options.expires_s),
        enqueued_at=now,
        visibility_timeout_s=opts.visibility_timeout_s,
        backoff_base_s=opts.backoff_base_s,
        dead_letter_retention_s=opts.dead_letter_retention_s,
    )


@dataclass(frozen=True, slots=True)
class RetryOutcome:
    """What a valid ``retry()`` does: back to ready at ``run_at``, or dead (R1, R4)."""

    dead: bool
    run_at: datetime | None
    last_error: str | None


def resolve_retry(
    *,
    attempts: int,
    max_attempts: int,
    backoff_base_s: float,
    error: str | None,
    delay_s: float | None,
    now: datetime,
    rng: random.Random,
) -> RetryOutcome:
    """contract R1–R4. ``attempts`` is the count after the claim being retried."""
    if attempts >= max_attempts:
        return RetryOutcome(dead=True, run_at=None, last_error=error if error is not None else LAST_ERROR_MAX_ATTEMPTS)
    seconds = delay_s if delay_s is not None else backoff_delay_s(attempts, backoff_base_s, rng)
    return RetryOutcome(dead=False, run_at=now + timedelta(seconds=seconds), last_error=error)


def fail_error(error: str | None) -> str:
    """contract D1: the stored ``last_error`` of ``fail()``."""
    return error if error is not None else LAST_ERROR_FAILED


# Last, once every name above exists: importing the kit runs its front, which imports names from this
# module, so `import alkstore_contract.resolution` before the kit would otherwise be an import cycle.
from alkstore_contract.kit.driver import NewJobs  # noqa: E402
