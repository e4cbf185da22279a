"""Verdict messages say what the engine did, in words that point at the fault (N3).

If this fails, check ``_expect_lost_claim_unavailable`` in alkstore_contract/suite/rows/network_faults.py: a
claim whose answer was cut after the server ran it can only return a value if it was sent again.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from alkstore_contract.errors import StoreUnavailable
from alkstore_contract.suite.checks import ContractViolation
from alkstore_contract.suite.network import Outcome, Wire
from alkstore_contract.suite.rows.network_faults import _expect_lost_claim_unavailable

WIRE = cast(Wire, SimpleNamespace(adapter=SimpleNamespace(op_timeout_s=2.0)))


def test_a_replayed_lost_claim_is_called_a_replay_not_a_slow_answer() -> None:
    """N3: ``claim_one()`` returning None after a cut means the claim was replayed."""
    outcome: Outcome[Any] = Outcome("claim_one()", value=None, elapsed_s=0.0)
    with pytest.raises(ContractViolation) as raised:
        _expect_lost_claim_unavailable(WIRE, outcome)
    message = str(raised.value)
    assert message.startswith("[N3] the engine claim_one() returned None after 0.00 s for a claim whose answer was cut")
    assert "took effect on the server" in message
    assert "sent again" in message
    assert "client library" in message


def test_a_lost_claim_that_raised_store_unavailable_passes() -> None:
    """N3: the outcome unknown is the one right answer."""
    outcome: Outcome[Any] = Outcome("claim_one()", error=StoreUnavailable("cut"), elapsed_s=0.1)
    _expect_lost_claim_unavailable(WIRE, outcome)
