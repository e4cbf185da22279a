"""Claimability decided in Python agrees with the contract's model (C1, X1, C7, D2).

The kit publishes ``claimable`` for drivers that decide in Python; the mem
driver decides on its flat records with its own ``_is_claimable``. Both are
checked here against ``alkstore_contract.suite.model.Model.claimable``, the
contract's executable reading, on every combination of state, ready time,
expiry, lease and attempts around one instant, boundaries included.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alkstore_mem import MemDriver
from alkstore_mem.record import (
    ATTEMPTS,
    EXPIRES_AT,
    LEASE_EXPIRES_AT,
    MAX_ATTEMPTS,
    RUN_AT,
    STATE,
    JobRecord,
)
from alkstore_mem.space import MemSpace
from hypothesis import given
from hypothesis import strategies as st

from alkstore_contract import JobState
from alkstore_contract.kit import claimable
from alkstore_contract.suite.model import Model, ModelJob

NOW = datetime(2030, 1, 1, tzinfo=UTC)
offsets = st.integers(min_value=-2, max_value=2).map(lambda us: NOW + timedelta(microseconds=us))


def mem_record(job: ModelJob) -> JobRecord:
    """``job`` as the mem engine stores it (only the fields a claim decides on matter here)."""
    fields: list[object] = [None] * 19
    fields[STATE] = job.state.value
    fields[RUN_AT] = job.run_at
    fields[EXPIRES_AT] = job.expires_at
    fields[LEASE_EXPIRES_AT] = job.lease_expires_at
    fields[ATTEMPTS] = job.attempts
    fields[MAX_ATTEMPTS] = job.max_attempts
    return tuple(fields)


@given(
    state=st.sampled_from(JobState),
    run_at=offsets,
    expires_at=st.none() | offsets,
    lease=offsets,
    attempts=st.integers(min_value=0, max_value=3),
    max_attempts=st.integers(min_value=1, max_value=3),
)
def test_the_kit_and_the_mem_driver_say_what_the_model_says(
    state: JobState, run_at: datetime, expires_at: datetime | None, lease: datetime, attempts: int, max_attempts: int
) -> None:
    job = ModelJob(
        id=1,
        queue="q",
        payload=None,
        priority=0,
        max_attempts=max_attempts,
        run_at=run_at,
        expires_at=expires_at,
        enqueued_at=NOW,
        visibility_timeout_s=30.0,
        backoff_base_s=1.0,
        dead_letter_retention_s=None,
        state=state,
        attempts=attempts,
        lease_expires_at=lease if state is JobState.PROCESSING else None,
    )
    expected = Model().claimable(job, NOW)
    assert claimable(job, NOW) is expected
    assert MemDriver(MemSpace("claimable"))._is_claimable(mem_record(job), NOW) is expected
