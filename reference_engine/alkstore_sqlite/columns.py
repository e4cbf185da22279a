"""Between ``jobs`` columns and the contract's values: a row → ``Job``, instants and durations as integers.

Rows arrive as plain tuples in ``JOB_COLUMNS`` order (the connection has no
row factory: a tuple costs less to make and to index than a ``sqlite3.Row``),
and a claim of a hundred jobs decodes a hundred rows, so ``decode_job`` is
written for speed: a dict for the state, remembered instants, and ``Job``
built from positional arguments. Instants are stored as integer microseconds
since the epoch (``alkstore_contract.instants``); the two durations SQL adds
to an instant are stored in microseconds too, rounded by the kit's
``duration_us`` exactly as ``datetime + timedelta`` rounds.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from alkstore_contract.instants import from_epoch_us
from alkstore_contract.kit import duration_us, new_job
from alkstore_contract.types import JOB_FIELDS, Job, JobState
from alkstore_contract.validation import decode_payload

Row = tuple[Any, ...]
"""One result row, its values in the order of the statement's column list."""

JOB_COLUMNS = JOB_FIELDS
"""The columns a ``Job`` is read from, in ``SELECT``/``RETURNING`` order: the table names them after its fields."""

JOB_COLUMN_LIST = ", ".join(JOB_COLUMNS)

_STATES = {state.value: state for state in JobState}


def optional_duration_us(seconds: float | None) -> int | None:
    """``duration_us`` of a duration the caller may leave unset (the dead-letter retention)."""
    return None if seconds is None else duration_us(seconds)


@lru_cache(maxsize=1024)
def _instant(micros: int) -> datetime:
    """``from_epoch_us``, remembered: the jobs of one batch share their enqueue and run instants and their lease."""
    return from_epoch_us(micros)


def decode_job(row: Row) -> Job:
    """A fresh ``Job`` snapshot (payload decoded anew, so callers may mutate it freely)."""
    (
        job_id,
        queue,
        payload,
        state,
        priority,
        attempts,
        max_attempts,
        run_at,
        expires_at,
        enqueued_at,
        lease_expires_at,
        claimed_by,
        visibility_timeout_s,
        backoff_base_s,
        dead_letter_retention_s,
        last_error,
        died_at,
    ) = row
    return new_job(
        job_id,
        queue,
        decode_payload(payload),
        _STATES[state],
        priority,
        attempts,
        max_attempts,
        _instant(run_at),
        None if expires_at is None else _instant(expires_at),
        _instant(enqueued_at),
        None if lease_expires_at is None else _instant(lease_expires_at),
        claimed_by,
        # float(): SQLite may hand back an integral REAL as an int (it does so in RETURNING rows).
        float(visibility_timeout_s),
        float(backoff_base_s),
        None if dead_letter_retention_s is None else float(dead_letter_retention_s),
        last_error,
        None if died_at is None else _instant(died_at),
    )
