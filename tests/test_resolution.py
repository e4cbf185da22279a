"""The kit's shortcuts build exactly what the plain code builds (contract E1–E9, B1).

``EnqueueOptions.validate`` hands out one shared object when no option is
set, the kit's ``resolve_new_jobs`` (``alkstore_contract.kit.fast``) fills
``NewJobs`` through its slots rather than its ``__init__``, and
``duration_us`` answers 0 without a ``timedelta``: each is there for speed
only, as is ``int_job_ids``'s for a batch of plain ints. If one of these
fails, check the shortcut in ``alkstore_contract.kit.fast`` or
``alkstore_contract.kit.driver`` against the plain code it stands in for
(``alkstore_contract.resolution``).
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alkstore_contract import InvalidArgument, JobId, QueueOpts
from alkstore_contract.kit.driver import duration_us, int_job_id, int_job_ids
from alkstore_contract.kit.fast import resolve_new_jobs
from alkstore_contract.resolution import _DEFAULT_OPTIONS, EnqueueOptions, NewJobs
from alkstore_contract.resolution import resolve_new_jobs as plain_resolve_new_jobs

durations = st.none() | st.floats(min_value=0, max_value=10**6, allow_nan=False)
instants = st.none() | st.datetimes(timezones=st.just(UTC))


def test_e9_no_option_set_is_the_shared_defaults_and_equals_a_checked_one() -> None:
    options = EnqueueOptions.validate(delay=None, run_at=None, expires=None, max_attempts=None, priority=0)
    assert options is _DEFAULT_OPTIONS
    assert options == EnqueueOptions(delay_s=None, run_at=None, expires_s=None, max_attempts=None, priority=0)


@pytest.mark.parametrize("priority", [False, 0.0])
def test_e9_a_priority_equal_to_0_but_not_an_int_is_still_refused(priority: object) -> None:
    """``False == 0`` and ``0.0 == 0``: the shortcut must not let either through (E7 wants an int, not a bool)."""
    with pytest.raises(InvalidArgument, match="priority="):
        EnqueueOptions.validate(delay=None, run_at=None, expires=None, max_attempts=None, priority=priority)  # type: ignore[arg-type]


@given(
    payloads=st.lists(st.text(), max_size=3).map(tuple),
    delay=durations,
    run_at=instants,
    expires=durations.filter(lambda value: value is None or value > 0),
    max_attempts=st.none() | st.integers(min_value=1, max_value=100),
    priority=st.integers(min_value=-5, max_value=5),
)
def test_e1_e7_resolve_new_jobs_equals_what_newjobs_init_builds(
    payloads: tuple[str, ...],
    delay: float | None,
    run_at: datetime | None,
    expires: float | None,
    max_attempts: int | None,
    priority: int,
) -> None:
    opts = QueueOpts(max_attempts=4, visibility_timeout_s=7.5, backoff_base_s=0.25, dead_letter_retention_s=60.0)
    options = EnqueueOptions.validate(
        delay=delay, run_at=run_at, expires=expires, max_attempts=max_attempts, priority=priority
    )
    jobs = resolve_new_jobs(payloads, options, opts)
    expected = NewJobs(
        payloads=payloads,
        priority=priority,
        max_attempts=opts.max_attempts if max_attempts is None else max_attempts,
        run_at=run_at if options.delay_s is None else None,
        delay_s=0.0 if options.delay_s is None else options.delay_s,
        expires_s=options.expires_s,
        visibility_timeout_s=opts.visibility_timeout_s,
        backoff_base_s=opts.backoff_base_s,
        dead_letter_retention_s=opts.dead_letter_retention_s,
    )
    assert type(jobs) is NewJobs
    assert jobs == expected
    assert plain_resolve_new_jobs(payloads, options, opts) == expected
    assert [getattr(jobs, field.name) for field in fields(NewJobs)] == [
        getattr(expected, field.name) for field in fields(NewJobs)
    ]
    assert hash(jobs) == hash(expected)


@given(st.floats(min_value=-(10**6), max_value=10**6, allow_nan=False))
def test_duration_us_rounds_as_datetime_arithmetic_does(seconds: float) -> None:
    assert duration_us(seconds) == timedelta(seconds=seconds) // timedelta(microseconds=1)


def test_duration_us_of_zero_and_negative_zero() -> None:
    assert duration_us(0) == duration_us(0.0) == duration_us(-0.0) == 0


class IntSubclass(int):
    """An id that is an int without being exactly one (the kit accepts any int but bool)."""


@given(
    st.lists(
        st.integers(min_value=-(2**70), max_value=2**70)
        | st.integers(min_value=-(2**70), max_value=2**70).map(IntSubclass)
        | st.text(max_size=3),
        max_size=8,
    )
)
def test_b1_int_job_ids_is_int_job_id_of_each_id_that_names_one_sorted(job_ids: list[JobId]) -> None:
    """The shortcut for ids exactly as an engine hands them out must agree with ``int_job_id`` on any batch."""
    assert int_job_ids(job_ids) == sorted(row_id for row_id in map(int_job_id, job_ids) if row_id is not None)
