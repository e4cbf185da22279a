"""The resolution helpers of release 0.1, kept for one release as shims over the kit-era ones.

Part of the contract.

Adapters and engines written against 0.1 import ``NewJob``, ``resolve_new_job``,
``RetryOutcome`` and ``resolve_retry`` from ``alkstore_contract.resolution``.
Release 0.2 replaced them with ``NewJobs``, ``resolve_new_jobs``,
``RetryDecision`` and ``decide_retry``, which leave ``now`` to whoever stores
(a driver on a server's clock has none in hand). The old forms are the new ones
with the one ``now`` added, so each shim here computes through its replacement
and gives what the old function gave for the same arguments: one rule, written
once, and an author's old code keeps working while it moves.
``alkstore_contract._moved`` hands these out from
``alkstore_contract.resolution`` with a ``DeprecationWarning``; nothing in the
package imports them, and ``resolution`` never imports this module.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from alkstore_contract.resolution import EnqueueOptions, decide_retry, resolve_new_jobs
from alkstore_contract.types import QueueOpts


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


_STAMPS = ("priority", "max_attempts", "visibility_timeout_s", "backoff_base_s", "dead_letter_retention_s")
"""The fields a ``NewJob`` takes as ``NewJobs`` has them: the stamps that do not depend on ``now``."""


def resolve_new_job(payload_json: str, options: EnqueueOptions, opts: QueueOpts, now: datetime) -> NewJob:
    """contract E1–E7: stamps from ``opts``; delay wins over run_at; expires is relative to ``now``."""
    jobs = resolve_new_jobs([payload_json], options, opts)
    return NewJob(
        payload_json=payload_json,
        run_at=jobs.run_at_from(now),
        expires_at=jobs.expires_at_from(now),
        enqueued_at=now,
        **{name: getattr(jobs, name) for name in _STAMPS},
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
    decision = decide_retry(
        attempts=attempts,
        max_attempts=max_attempts,
        backoff_base_s=backoff_base_s,
        error=error,
        delay_s=delay_s,
        rng=rng,
    )
    run_at = None if decision.dead else now + timedelta(seconds=decision.delay_s)
    return RetryOutcome(dead=decision.dead, run_at=run_at, last_error=decision.last_error)
