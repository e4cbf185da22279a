"""How options turn into stored values (contract E1–E7, R1–R4, D1), written once.

Part of the contract.

The kit's front (``alkstore_contract.kit``) calls these, so every engine on it
stores the same values; an engine implementing the surface itself calls them
too. What depends on ``now`` is left relative (``NewJobs``, ``RetryDecision``),
so a driver that keeps time itself (a server's clock) adds the one ``now`` it reads.

Written plainly, to be read: the kit builds the same values faster
(``alkstore_contract.kit.fast``). The 0.1 helpers' old names (``NewJob``,
``resolve_new_job``, …) are served here, with a warning, by
``alkstore_contract._moved``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from alkstore_contract.backoff import backoff_delay_s
from alkstore_contract.types import Duration, EnqueueCall, QueueOpts
from alkstore_contract.validation import (
    encode_payload,
    optional_duration_seconds,
    validate_instant,
    validate_max_attempts,
    validate_priority,
)

if TYPE_CHECKING:  # type checkers see the 0.1 helpers as they are; at run time alkstore_contract._moved warns
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
        """Check every option (contract E9) before anything is read or written."""
        return cls.validate_call(EnqueueCall(delay, run_at, expires, max_attempts, priority))

    @classmethod
    def validate_call(cls, call: EnqueueCall) -> EnqueueOptions:
        """``validate``, of the options of one call as ``NamedQueue`` packed them.

        A call that leaves every option at its default, as most do, gets the
        one shared ``_DEFAULT_OPTIONS``: there is nothing to check, and one
        shared value spares building a frozen dataclass per call.
        """
        delay, run_at, expires, max_attempts, priority = call
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


def fail_error(error: str | None) -> str:
    """contract D1: the stored ``last_error`` of ``fail()``."""
    return error if error is not None else LAST_ERROR_FAILED
