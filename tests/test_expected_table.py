"""The shared code the engines run agrees with the contract's values as ``alkstore_contract.suite.expected`` has them.

The table is the spec: when these fail, ``backoff.py`` or ``resolution.py``
is wrong (or the table lost a row's arithmetic, which its comment shows), and
every engine built on that code would draw the same wrong values.
"""

from __future__ import annotations

import random

import pytest

from alkstore_contract import backoff, resolution
from alkstore_contract.suite.expected import (
    BACKOFF_CAP_S,
    LAST_ERROR_EXPIRED,
    LAST_ERROR_FAILED,
    LAST_ERROR_MAX_ATTEMPTS,
    R2_RANGE_S,
)

DRAWS = 400


def test_strings_and_cap() -> None:
    assert (resolution.LAST_ERROR_MAX_ATTEMPTS, resolution.LAST_ERROR_FAILED, resolution.LAST_ERROR_EXPIRED) == (
        LAST_ERROR_MAX_ATTEMPTS,
        LAST_ERROR_FAILED,
        LAST_ERROR_EXPIRED,
    )
    assert backoff.BACKOFF_CAP_S == BACKOFF_CAP_S


@pytest.mark.parametrize(("base_s", "attempts"), sorted(R2_RANGE_S))
def test_backoff_range_matches_table(base_s: float, attempts: int) -> None:
    assert backoff.backoff_range_s(attempts, base_s) == R2_RANGE_S[(base_s, attempts)]


@pytest.mark.parametrize(("base_s", "attempts"), sorted(R2_RANGE_S))
def test_draws_fill_both_halves_of_the_table_range(base_s: float, attempts: int) -> None:
    """R2, R5: every draw in ``[low, high]``, and a uniform draw puts about half in each half."""
    low, high = R2_RANGE_S[(base_s, attempts)]
    rng = random.Random(f"{base_s}/{attempts}")
    draws = [backoff.backoff_delay_s(attempts, base_s, rng) for _ in range(DRAWS)]
    assert all(low <= d <= high for d in draws)
    lower = sum(d < (low + high) / 2 for d in draws)
    assert DRAWS // 4 <= lower <= DRAWS - DRAWS // 4, f"{lower} of {DRAWS} draws in the lower half"


def test_decide_retry_uses_the_table() -> None:
    """R2 through ``decide_retry`` (what the kit calls), R4's default string, D1's default string."""
    rng = random.Random(13)
    for (base_s, attempts), (low, high) in R2_RANGE_S.items():
        decision = resolution.decide_retry(
            attempts=attempts, max_attempts=attempts + 1, backoff_base_s=base_s, error=None, delay_s=None, rng=rng
        )
        assert not decision.dead
        assert low <= decision.delay_s <= high
    dead = resolution.decide_retry(attempts=3, max_attempts=3, backoff_base_s=5, error=None, delay_s=None, rng=rng)
    assert (dead.dead, dead.last_error) == (True, LAST_ERROR_MAX_ATTEMPTS)
    assert resolution.fail_error(None) == LAST_ERROR_FAILED
