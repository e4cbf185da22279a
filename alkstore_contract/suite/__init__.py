"""The suite part: the pytest plugin, the rows and everything that runs them and judges what they saw.

It judges engines, so no engine imports it (``tests/test_engine_imports.py``).
Its modules: ``plugin`` (the pytest entry point), ``run`` (a session:
collection, execution, summary), ``row`` (rows as data), ``rows/`` (the
contract's rows), ``harness`` (what a row works with), ``checks``, ``ledger``
and ``verdicts`` (from checks to clause verdicts and a certificate),
``clauses`` (the clause registry), ``expected`` (the contract's literal values,
written a second time), ``model`` (the reference model), ``history`` (the
concurrent rows' checker), ``processes`` and ``worker`` (rows in other OS
processes), ``fault_proxy`` and ``network`` (the network-fault rows' nemesis),
``settings``, ``engine_options``, ``registry``, ``tick`` and ``xfail``; ``publish``
turns its verdicts into the report's model (``alkstore_contract.report.model``).

What it publishes to the other parts is this package's own names: finding an
engine's adapter (``load_adapter``, ``UnknownEngine``), which ``alkstore certify``
does before it starts pytest. The report part imports nothing else of the suite
(``tests/test_boundaries.py``).
"""

from alkstore_contract._moved import moved_names
from alkstore_contract.suite.registry import UnknownEngine, load_adapter

__all__ = ["UnknownEngine", "load_adapter"]

__getattr__ = moved_names(__name__, "alkstore_contract.suite.row", ("SUITE_VERSION", "ROW_MODULES", "Row", "all_rows"))
