"""alkstore_contract/wire/literals.json holds the contract's literal values, the same as expected.py and the bounds.

Rule: R2's rows, the three ``last_error`` strings (R4, D1, X2), the one-hour
cap and the bounds of DEC-bounds, S1, E8 are the contract's text; engines in
other languages read them from this JSON file, the suite from
``alkstore_contract.suite.expected`` and ``validation``. Neither is derived from the
other, so this test is what keeps them one set of values. If this fails,
check which of the two was edited, against docs/contract.md.
"""

from __future__ import annotations

import json
from typing import Any

from alkstore_contract import validation
from alkstore_contract.suite import expected
from alkstore_contract.types import DEFAULT_BACKOFF_BASE_S, DEFAULT_MAX_ATTEMPTS, DEFAULT_VISIBILITY_TIMEOUT_S
from alkstore_contract.wire import LITERALS_PATH


def _literals() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(LITERALS_PATH.read_text(encoding="utf-8"))
    return loaded


def test_r2_rows_and_the_cap_are_expected_pys() -> None:
    """R2: every (base, attempts) → (low, high) row, the same rows, and the 3600 s cap."""
    literals = _literals()
    assert literals["r2_range_columns"] == ["backoff_base_s", "attempts", "low_s", "high_s"]
    rows = {(base, attempts): (low, high) for base, attempts, low, high in literals["r2_range_s"]}
    assert rows == expected.R2_RANGE_S
    assert len(rows) == len(literals["r2_range_s"]), "no row twice"
    assert literals["backoff_cap_s"] == expected.BACKOFF_CAP_S


def test_the_three_strings_are_expected_pys() -> None:
    """R4, D1, X2: the last_error strings."""
    assert _literals()["last_error"] == {
        "max_attempts_exceeded": expected.LAST_ERROR_MAX_ATTEMPTS,
        "failed": expected.LAST_ERROR_FAILED,
        "expired": expected.LAST_ERROR_EXPIRED,
    }


def test_the_bounds_and_defaults_are_the_contracts() -> None:
    """DEC-bounds, S1, E8 and the QueueOpts defaults."""
    literals = _literals()
    assert literals["bounds"] == {
        "max_queue_name_length": validation.MAX_QUEUE_NAME_LENGTH,
        "reserved_prefix": validation.RESERVED_PREFIX,
        "max_duration_s": validation.MAX_DURATION_S,
        "min_positive_duration_s": validation.MIN_POSITIVE_DURATION_S,
        "priority_min": str(validation.INT64_MIN),
        "priority_max": str(validation.INT64_MAX),
        "max_attempts_min": 1,
        "max_attempts_max": validation.INT32_MAX,
        "max_payload_depth": validation.MAX_PAYLOAD_DEPTH,
        "max_payload_int_digits": validation.MAX_PAYLOAD_INT_DIGITS,
    }
    assert literals["defaults"] == {
        "visibility_timeout_s": DEFAULT_VISIBILITY_TIMEOUT_S,
        "max_attempts": DEFAULT_MAX_ATTEMPTS,
        "backoff_base_s": DEFAULT_BACKOFF_BASE_S,
        "dead_letter_retention_s": None,
    }
