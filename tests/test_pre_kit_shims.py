"""The resolution helpers of release 0.1 still import, warn, and behave as they did (rule: API-2).

``NewJob``, ``resolve_new_job``, ``RetryOutcome`` and ``resolve_retry`` were
removed from ``alkstore_contract.resolution`` without a deprecation; adapters
written against 0.1 failed to load. They are back for one release as shims
over ``NewJobs``, ``resolve_new_jobs``, ``RetryDecision`` and ``decide_retry``.
These tests hold the shims to the 0.1 signatures (written out here as 0.1 had
them) and to what the 0.1 functions returned, with the expected values worked
out from the contract's text (E1–E7, R1–R4), never from the code under test.

If one of these fails, check ``alkstore_contract/_pre_kit.py`` (the shims) and
``alkstore_contract._moved.replaced_names``, which ``install`` sets as
``alkstore_contract.resolution``'s ``__getattr__``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import random
import warnings
from datetime import UTC, datetime, timedelta

import pytest

from alkstore_contract import _pre_kit, resolution
from alkstore_contract._moved import REPLACED
from alkstore_contract.backoff import backoff_range_s
from alkstore_contract.resolution import LAST_ERROR_MAX_ATTEMPTS, EnqueueOptions
from alkstore_contract.types import QueueOpts

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
OPTS = QueueOpts(visibility_timeout_s=30, max_attempts=5, backoff_base_s=2, dead_letter_retention_s=600)

OLD_SIGNATURES = {
    "resolve_new_job": "(payload_json: 'str', options: 'EnqueueOptions', opts: 'QueueOpts', now: 'datetime') "
    "-> 'NewJob'",
    "resolve_retry": "(*, attempts: 'int', max_attempts: 'int', backoff_base_s: 'float', error: 'str | None', "
    "delay_s: 'float | None', now: 'datetime', rng: 'random.Random') -> 'RetryOutcome'",
}
"""The 0.1 signatures, from ``git show b90069c^:alkstore_contract/resolution.py``."""
OLD_FIELDS = {
    "NewJob": [
        ("payload_json", "str"),
        ("priority", "int"),
        ("max_attempts", "int"),
        ("run_at", "datetime"),
        ("expires_at", "datetime | None"),
        ("enqueued_at", "datetime"),
        ("visibility_timeout_s", "float"),
        ("backoff_base_s", "float"),
        ("dead_letter_retention_s", "float | None"),
    ],
    "RetryOutcome": [("dead", "bool"), ("run_at", "datetime | None"), ("last_error", "str | None")],
}


def _options(**given: object) -> EnqueueOptions:
    values: dict[str, object] = {"delay": None, "run_at": None, "expires": None, "max_attempts": None, "priority": 0}
    return EnqueueOptions.validate(**(values | given))  # type: ignore[arg-type]


SHIMS = ["NewJob", "RetryOutcome", "resolve_new_job", "resolve_retry"]


@pytest.mark.parametrize("name", SHIMS)
def test_api2_an_old_helper_imports_with_a_warning_naming_its_replacement(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(vars(resolution), name, raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"from alkstore_contract.resolution import {name}", {})
    assert [w.category for w in caught] == [DeprecationWarning]
    message = str(caught[0].message)
    replacement = REPLACED[f"alkstore_contract.resolution.{name}"]
    assert f"alkstore_contract.resolution.{name} is deprecated: use {replacement}" in message
    assert hasattr(resolution, replacement.rpartition(".")[2])
    assert getattr(resolution, name) is getattr(_pre_kit, name)


def test_api2_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NewJobz'"):
        importlib.import_module("alkstore_contract.resolution").NewJobz  # noqa: B018


@pytest.mark.parametrize("name", sorted(OLD_SIGNATURES))
def test_api2_the_old_functions_keep_their_signatures(name: str) -> None:
    assert str(inspect.signature(getattr(_pre_kit, name))) == OLD_SIGNATURES[name]


@pytest.mark.parametrize("name", sorted(OLD_FIELDS))
def test_api2_the_old_classes_keep_their_fields(name: str) -> None:
    cls = getattr(_pre_kit, name)
    assert [(field.name, field.type) for field in dataclasses.fields(cls)] == OLD_FIELDS[name]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cls(*([None] * len(OLD_FIELDS[name]))), OLD_FIELDS[name][0][0], None)


def test_api2_resolve_new_job_stamps_from_the_queue_and_now() -> None:
    """E1 (stamps from opts), E2 (ready at now), E4 (no expiry), E5/E6 (defaults), with enqueued_at = now."""
    job = _pre_kit.resolve_new_job('{"a": 1}', _options(), OPTS, NOW)
    assert job == _pre_kit.NewJob(
        payload_json='{"a": 1}',
        priority=0,
        max_attempts=5,
        run_at=NOW,
        expires_at=None,
        enqueued_at=NOW,
        visibility_timeout_s=30.0,
        backoff_base_s=2.0,
        dead_letter_retention_s=600.0,
    )


def test_api2_resolve_new_job_delay_wins_over_run_at_and_expiry_is_relative_to_now() -> None:
    """E3 (delay wins over run_at), E4 (expires from now), E6/E7 (per-call max_attempts and priority)."""
    later = NOW + timedelta(days=3)
    job = _pre_kit.resolve_new_job(
        "1", _options(delay=timedelta(seconds=90), run_at=later, expires=7, max_attempts=2, priority=-3), OPTS, NOW
    )
    assert (job.run_at, job.expires_at, job.max_attempts, job.priority) == (
        NOW + timedelta(seconds=90),
        NOW + timedelta(seconds=7),
        2,
        -3,
    )
    assert _pre_kit.resolve_new_job("1", _options(run_at=later), OPTS, NOW).run_at == later


def test_api2_resolve_retry_on_the_last_attempt_is_dead_with_the_error() -> None:
    """R4: the last attempt dead-letters, with the given error or the contract's string; no ready time."""
    rng = random.Random(1)
    common = {"attempts": 5, "max_attempts": 5, "backoff_base_s": 2.0, "delay_s": None, "now": NOW, "rng": rng}
    assert _pre_kit.resolve_retry(error=None, **common) == _pre_kit.RetryOutcome(  # type: ignore[arg-type]
        dead=True, run_at=None, last_error=LAST_ERROR_MAX_ATTEMPTS
    )
    assert _pre_kit.resolve_retry(error="boom", **common).last_error == "boom"  # type: ignore[arg-type]
    assert rng.random() == random.Random(1).random(), "a dead retry drew from the rng"


def test_api2_resolve_retry_puts_the_job_back_after_the_delay_or_the_backoff() -> None:
    """R1 (explicit delay from now), R2 (equal-jitter backoff: uniform over [cap/2, cap], one draw)."""
    explicit = _pre_kit.resolve_retry(
        attempts=1, max_attempts=5, backoff_base_s=2.0, error="e", delay_s=12.5, now=NOW, rng=random.Random(0)
    )
    assert explicit == _pre_kit.RetryOutcome(dead=False, run_at=NOW + timedelta(seconds=12.5), last_error="e")
    rng = random.Random(7)
    backoff = _pre_kit.resolve_retry(
        attempts=3, max_attempts=5, backoff_base_s=2.0, error=None, delay_s=None, now=NOW, rng=rng
    )
    low, high = backoff_range_s(3, 2.0)
    assert (low, high) == (4.0, 8.0)  # cap = 2 · 2^(3−1)
    assert backoff.run_at is not None
    assert low <= (backoff.run_at - NOW).total_seconds() <= high
    assert backoff.run_at == NOW + timedelta(seconds=random.Random(7).uniform(4.0, 8.0))


def test_api2_type_checkers_see_the_old_helpers_as_they_were() -> None:
    """mypy checks this body: through ``resolution`` the shims keep their 0.1 types, not ``object``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        job: resolution.NewJob = resolution.resolve_new_job("1", _options(), OPTS, NOW)
        outcome: resolution.RetryOutcome = resolution.resolve_retry(
            attempts=1, max_attempts=1, backoff_base_s=1.0, error=None, delay_s=None, now=NOW, rng=random.Random(0)
        )
    assert (job.run_at, outcome.dead) == (NOW, True)
