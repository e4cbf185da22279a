"""Ledgers built by hand for the tests of the suite's verdicts, certificates and profiles."""

from __future__ import annotations

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.clauses import binding
from alkstore_contract.suite.ledger import Ledger


def all_checked(capabilities: frozenset[Capability]) -> Ledger:
    """A ledger in which one check of every binding clause (but the untested ones) ran."""
    ledger = Ledger(row="everything")
    for known in binding(capabilities):
        if known.untested is None:
            ledger.check(known.id)
    return ledger
