"""Turning the contract's resolutions into SQL parameters that the statement's ``now`` completes.

With ``clock=None`` the Postgres engine reads time from the database server
(contract T3), inside the very statement that uses it, so Python never knows
``now``. The contract's helpers still make every decision (delay beats run_at,
the backoff draw, dead versus ready): they are evaluated at placeholder
instants, and what they return is re-expressed as either a fixed instant or
an exact offset from ``now``, which the SQL adds to the statement's ``now``
(``COALESCE($1, statement_timestamp())``). An injected clock's instant goes
through the same SQL, so both paths store what the contract computes, to the
microsecond.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from alkstore_contract.resolution import EnqueueOptions, resolve_new_job, resolve_retry
from alkstore_contract.types import QueueOpts

_ONE_US = timedelta(microseconds=1)
_PROBE_A = datetime(2001, 1, 1, tzinfo=UTC)
_PROBE_B = datetime(2002, 1, 1, tzinfo=UTC)
"""Two stand-ins for ``now``. Any instant the contract derives from ``now`` differs between them."""


def micros(delta: timedelta) -> int:
    """A ``timedelta`` as whole microseconds (exact: that is its resolution)."""
    return delta // _ONE_US


def seconds_micros(seconds: float) -> int:
    """``timedelta(seconds=seconds)`` in microseconds: the rounding the contract's helpers use."""
    return micros(timedelta(seconds=seconds))


@dataclass(frozen=True, slots=True)
class SqlInstant:
    """An instant for SQL: ``absolute`` as given, or ``now`` + ``offset_us`` microseconds. One is set."""

    absolute: datetime | None
    offset_us: int | None


def _split(at_a: datetime, at_b: datetime) -> SqlInstant:
    if at_a == at_b:
        return SqlInstant(absolute=at_a, offset_us=None)
    return SqlInstant(absolute=None, offset_us=micros(at_a - _PROBE_A))


@dataclass(frozen=True, slots=True)
class NewJobParams:
    """What one enqueue stores, except the payload and the statement's ``now``."""

    priority: int
    max_attempts: int
    run_at: SqlInstant
    expires_at: SqlInstant | None
    visibility_timeout_s: float
    backoff_base_s: float
    dead_letter_retention_s: float | None


def new_job_params(options: EnqueueOptions, opts: QueueOpts) -> NewJobParams:
    """``resolve_new_job`` (E1–E7) with ``now`` left for the statement to fill in."""
    at_a = resolve_new_job("", options, opts, _PROBE_A)
    at_b = resolve_new_job("", options, opts, _PROBE_B)
    expires_at = None
    if at_a.expires_at is not None and at_b.expires_at is not None:
        expires_at = _split(at_a.expires_at, at_b.expires_at)
    return NewJobParams(
        priority=at_a.priority,
        max_attempts=at_a.max_attempts,
        run_at=_split(at_a.run_at, at_b.run_at),
        expires_at=expires_at,
        visibility_timeout_s=at_a.visibility_timeout_s,
        backoff_base_s=at_a.backoff_base_s,
        dead_letter_retention_s=at_a.dead_letter_retention_s,
    )


@dataclass(frozen=True, slots=True)
class RetryParams:
    """A resolved ``retry()``: dead, or ready ``delay_us`` after the statement's ``now``."""

    dead: bool
    delay_us: int
    last_error: str | None


def retry_params(
    *,
    attempts: int,
    max_attempts: int,
    backoff_base_s: float,
    error: str | None,
    delay_s: float | None,
    rng: random.Random,
) -> RetryParams:
    """``resolve_retry`` (R1–R4), called once so the backoff draw consumes ``rng`` exactly once."""
    outcome = resolve_retry(
        attempts=attempts,
        max_attempts=max_attempts,
        backoff_base_s=backoff_base_s,
        error=error,
        delay_s=delay_s,
        now=_PROBE_A,
        rng=rng,
    )
    delay_us = 0 if outcome.run_at is None else micros(outcome.run_at - _PROBE_A)
    return RetryParams(dead=outcome.dead, delay_us=delay_us, last_error=outcome.last_error)
