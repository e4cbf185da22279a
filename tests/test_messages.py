"""Verdict messages say what the engine did, in words that point at the fault (N3).

If this fails, check ``_claim_outcome`` in alkstore_contract/suite/rows/network_faults.py: a claim whose
answer was cut after the server ran it can only return a value if it was replayed (or made up).
"""

from __future__ import annotations

from typing import Any

from alkstore_contract.errors import StoreUnavailable
from alkstore_contract.suite.network import Outcome
from alkstore_contract.suite.rows.network_faults import _claim_outcome


def test_a_replayed_lost_claim_is_called_a_replay_not_a_slow_answer() -> None:
    """N3: ``claim_one()`` returning None after a cut means the claim was replayed."""
    outcome: Outcome[Any] = Outcome("claim_one()", value=None, elapsed_s=0.0)
    said = _claim_outcome(outcome)
    assert said.startswith("returned None from claim_one() after 0.00 s")
    assert "replayed the claim" in said


def test_a_lost_claim_that_raised_is_described_as_it_ended() -> None:
    """N3: an error is reported as raised, with no talk of a replay."""
    outcome: Outcome[Any] = Outcome("claim_one()", error=StoreUnavailable("cut"), elapsed_s=0.1)
    assert "replayed" not in _claim_outcome(outcome)
