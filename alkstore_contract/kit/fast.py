"""Building the contract's frozen values without their generated ``__init__``: the kit's speed tricks, in one place.

Part of the kit.

``Job`` and ``NewJobs`` are frozen, slotted dataclasses (``alkstore_contract.types``,
``alkstore_contract.resolution``), written plainly. Every claimed job is one
``Job`` (a hundred per batch claim) and every enqueue one ``NewJobs``, and a
frozen dataclass's own ``__init__`` sets each field through
``object.__setattr__``, which is the slowest way to fill slots. The kit fills
them here instead, behind two plain functions:

- ``new_job(id, queue, …, died_at)`` takes ``Job``'s fields positionally, in
  ``JOB_FIELDS`` order, and returns the ``Job`` that ``Job(...)`` would build. It
  makes a bare object of ``_JobFields`` (the same slots, so the same layout,
  without the frozen ``__setattr__``), stores each field as a plain attribute
  and makes the object a ``Job`` by ``__class__`` assignment. CPython lays slots
  out by name, so the same names make the same layout, which ``__class__``
  assignment requires; the checks at the end of this module prove it at import.
- ``resolve_new_jobs(payload_jsons, options, opts)`` is
  ``alkstore_contract.resolution.resolve_new_jobs`` (the contract's rule, E1–E7)
  filling ``NewJobs`` through its slots' descriptors, which skips the frozen
  ``__init__``. ``tests/test_resolution.py`` holds the two equal.

Engines on the kit get both through ``KitStore`` and ``jobs_from_rows``; an
engine that builds snapshots itself calls ``new_job`` where it would call ``Job``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from alkstore_contract.resolution import EnqueueOptions, NewJobs
from alkstore_contract.types import JOB_FIELDS, Job, JobId, JobState, QueueOpts

__all__ = ["new_job", "resolve_new_jobs"]


class _JobFields:
    """``Job``'s slots without its frozen ``__setattr__``: what ``new_job`` stores the fields through."""

    __slots__ = JOB_FIELDS


def new_job(
    id: JobId,
    queue: str,
    payload: object,
    state: JobState,
    priority: int,
    attempts: int,
    max_attempts: int,
    run_at: datetime,
    expires_at: datetime | None,
    enqueued_at: datetime,
    lease_expires_at: datetime | None,
    claimed_by: str | None,
    visibility_timeout_s: float,
    backoff_base_s: float,
    dead_letter_retention_s: float | None,
    last_error: str | None,
    died_at: datetime | None,
) -> Job:
    """The ``Job`` that ``Job(...)`` builds from the same fields, built without its frozen ``__init__``."""
    job: Any = object.__new__(_JobFields)
    job.id = id
    job.queue = queue
    job.payload = payload
    job.state = state
    job.priority = priority
    job.attempts = attempts
    job.max_attempts = max_attempts
    job.run_at = run_at
    job.expires_at = expires_at
    job.enqueued_at = enqueued_at
    job.lease_expires_at = lease_expires_at
    job.claimed_by = claimed_by
    job.visibility_timeout_s = visibility_timeout_s
    job.backoff_base_s = backoff_base_s
    job.dead_letter_retention_s = dead_letter_retention_s
    job.last_error = last_error
    job.died_at = died_at
    object.__setattr__(job, "__class__", Job)
    built: Job = job
    return built


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
"""The slots of ``NewJobs``, set straight: how ``resolve_new_jobs`` fills one."""


def resolve_new_jobs(payload_jsons: Sequence[str], options: EnqueueOptions, opts: QueueOpts) -> NewJobs:
    """``alkstore_contract.resolution.resolve_new_jobs``, the same rule, filled through the slots' descriptors."""
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


if tuple(field.name for field in fields(Job)) != JOB_FIELDS:
    raise ImportError("alkstore_contract.types.JOB_FIELDS no longer matches the fields of Job, in order")
if new_job.__code__.co_varnames[: len(JOB_FIELDS)] != JOB_FIELDS:
    raise ImportError("alkstore_contract.kit.fast.new_job's parameters no longer match Job's fields, in order")
_probe = tuple(range(len(JOB_FIELDS)))
if tuple(getattr(new_job(*_probe), name) for name in JOB_FIELDS) != _probe:  # type: ignore[arg-type]
    raise ImportError("alkstore_contract.kit.fast._JobFields no longer lays Job's fields out as Job does")
if tuple(field.name for field in fields(NewJobs)) != (
    "payloads",
    "priority",
    "max_attempts",
    "run_at",
    "delay_s",
    "expires_s",
    "visibility_timeout_s",
    "backoff_base_s",
    "dead_letter_retention_s",
):
    raise ImportError("alkstore_contract.resolution.NewJobs's fields changed: fill the new ones in kit.fast")
