"""``Job``, the snapshot of contract clause B3, is the frozen dataclass it declares, however it is built (rule: B3).

The kit builds snapshots for speed (a batch claim builds a hundred) without
``Job``'s frozen ``__init__`` (``alkstore_contract.kit.fast.new_job``): it
stores the fields through a twin class with the same slots and then makes the
object a ``Job``. Whatever that costs or saves, the object must be a ``Job`` in
every way the dataclass promises: equal to one built by ``Job(...)``, frozen,
shown, copied, pickled and replaced as it is; and a subclass of ``Job`` still
gets every field.

If one of these fails, check: ``kit.fast._JobFields.__slots__`` no longer names
``Job``'s fields (``JOB_FIELDS``), or ``new_job`` stores a field under the
wrong name.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from alkstore_contract.kit import job_from_row, jobs_from_rows, new_job
from alkstore_contract.types import JOB_FIELDS, Job, JobState

NOW = datetime(2030, 1, 1, tzinfo=UTC)
VALUES: dict[str, object] = {
    "id": 7,
    "queue": "emails",
    "payload": {"to": "a@example.com", "n": [1, 2]},
    "state": JobState.PROCESSING,
    "priority": -3,
    "attempts": 2,
    "max_attempts": 5,
    "run_at": NOW,
    "expires_at": NOW + timedelta(hours=1),
    "enqueued_at": NOW - timedelta(seconds=1),
    "lease_expires_at": NOW + timedelta(seconds=30),
    "claimed_by": "worker-1",
    "visibility_timeout_s": 30.0,
    "backoff_base_s": 2.5,
    "dead_letter_retention_s": 86_400.0,
    "last_error": "boom",
    "died_at": None,
}
"""A distinct value for every field, so a field stored under another's name shows."""


def built() -> Job:
    return Job(**VALUES)  # type: ignore[arg-type]


def fast() -> Job:
    return new_job(*VALUES.values())  # type: ignore[arg-type]


BUILDERS = pytest.mark.parametrize("build", [built, fast], ids=["Job", "new_job"])


@BUILDERS
def test_every_field_reads_back_what_was_given_b3(build: Callable[[], Job]) -> None:
    job = build()
    assert type(job) is Job
    assert {name: getattr(job, name) for name in JOB_FIELDS} == VALUES
    assert dataclasses.astuple(job) == tuple(VALUES.values())


@BUILDERS
def test_the_snapshot_is_frozen_b3(build: Callable[[], Job]) -> None:
    job = build()
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.priority = 1  # type: ignore[misc]
    assert job.priority == -3


@BUILDERS
def test_it_compares_shows_copies_pickles_and_replaces_as_the_dataclass_does_b3(build: Callable[[], Job]) -> None:
    job = build()
    assert job == built()
    assert job != dataclasses.replace(job, attempts=3)
    assert repr(job).startswith("Job(id=7, queue='emails', payload={'to': 'a@example.com', 'n': [1, 2]}, ")
    assert copy.copy(job) == job
    assert copy.deepcopy(job) == job
    assert pickle.loads(pickle.dumps(job)) == job
    replaced = dataclasses.replace(job, state=JobState.READY, lease_expires_at=None)
    assert type(replaced) is Job
    assert (replaced.state, replaced.lease_expires_at, replaced.id) == (JobState.READY, None, 7)


def test_a_subclass_gets_every_field_too_b3() -> None:
    class Tagged(Job):
        """A subclass with a ``__dict__``: its layout is not ``Job``'s."""

    job = Tagged(**VALUES)  # type: ignore[arg-type]
    assert type(job) is Tagged
    assert {name: getattr(job, name) for name in JOB_FIELDS} == VALUES


def test_the_kit_builds_a_batch_of_snapshots_as_job_would_b3() -> None:
    """``jobs_from_rows`` fills bare objects of ``Job``'s layout: each must be the ``Job`` that ``Job(...)`` builds.

    If this fails, check ``jobs_from_rows``'s unpacking (a field passed in another's place) and
    ``kit.fast.new_job``.
    """
    stored = {**VALUES, "payload": json.dumps(VALUES["payload"]), "state": "processing"}
    rows = [tuple({**stored, "id": n}.values()) for n in (1, 2, 3)]
    jobs = jobs_from_rows(rows)
    assert jobs == [dataclasses.replace(built(), id=n) for n in (1, 2, 3)]
    assert [type(job) for job in jobs] == [Job, Job, Job]
    assert jobs[0].payload is not jobs[1].payload, "each snapshot owns its decoded payload"
    with pytest.raises(dataclasses.FrozenInstanceError):
        jobs[0].priority = 1  # type: ignore[misc]
    assert job_from_row(rows[0]) == jobs[0]
    assert pickle.loads(pickle.dumps(jobs[2])) == jobs[2]
