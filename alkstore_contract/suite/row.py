"""Rows as data: a name, the contract clauses it defines (docs/contract.md), what it needs, and its body.

Part of the suite.

The same metadata feeds test ids, skip reasons, ``pytest -v`` output, the JSON
report and the HTML matrix. A row with no ``requires`` is *required*: it runs
on every engine. ``clauses`` are the clauses the row's legs may define (a leg
declaring any other is a suite defect); the certificate is given per clause,
by the rule of docs/capabilities.md ("What a certificate covers").
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from alkstore_contract import __version__
from alkstore_contract.adapter import Capability
from alkstore_contract.suite.clauses import clause
from alkstore_contract.suite.harness import RowContext

SUITE_VERSION = __version__
"""The suite ships in the package, so its version is the package's (the report's ``suite_version``)."""

RowBody = Callable[[RowContext], Awaitable[None]]

ROW_MODULES = (
    "enqueue_opts_resolution",
    "backoff_curve_equivalence",
    "exactly_once",
    "dead_letter",
    "claim_extents",
    "claim_order",
    "lease_validity",
    "sweep_and_retention",
    "batch_ack_and_cancel",
    "validation_and_closed_store",
    "bounds_at_their_edge",
    "durability",
    "enqueue_many_atomic",
    "crash_recovery",
    "model_based",
    "network_faults",
    "network_history",
    "server_clock",
)
"""The order of the rows table in docs/capabilities.md; each module in ``suite.rows`` has a ``ROW``."""


@dataclass(frozen=True, slots=True)
class Row:
    """One contract row."""

    name: str
    clauses: tuple[str, ...]
    body: RowBody
    requires: tuple[Capability, ...] = ()
    """Capabilities the engine must declare, else the row skips naming them."""
    manual_clock_only: bool = False
    """The row moves time by hours: on a system-clock run it runs on a manual-clock twin where the engine
    declares injectable_clock, and is recorded as not exercised where it does not."""

    def __post_init__(self) -> None:
        for clause_id in self.clauses:
            clause(clause_id)

    @property
    def clock(self) -> Literal["manual"] | None:
        return "manual" if self.manual_clock_only else None

    @property
    def hint(self) -> str:
        """The "When it fails, check …" paragraph of the row's module docstring, printed under a failure.

        It always starts with those words (a row without the paragraph gives its one-line doc after
        them), so whoever prints it adds no heading of its own.
        """
        module = sys.modules.get(self.body.__module__)
        text = (module.__doc__ if module is not None else None) or ""
        marker = text.find("When it fails, check")
        return text[marker:].strip() if marker >= 0 else f"When it fails, check: {self.doc}"

    @property
    def required(self) -> bool:
        """A required row runs on every engine; a capability row only where declared."""
        return not self.requires

    @property
    def test_name(self) -> str:
        return f"test_{self.name}"

    @property
    def doc(self) -> str:
        """The body's docstring: what the row checks and what to look at when it fails."""
        return (self.body.__doc__ or "").strip()


def row(
    name: str,
    clauses: tuple[str, ...],
    *,
    requires: tuple[Capability, ...] = (),
    manual_clock_only: bool = False,
) -> Callable[[RowBody], Row]:
    """Decorate a row body: ``ROW = row("claim_order", ("C1", "C2", "X1"))(body)``."""

    def wrap(body: RowBody) -> Row:
        return Row(name=name, clauses=clauses, body=body, requires=requires, manual_clock_only=manual_clock_only)

    return wrap


def all_rows() -> list[Row]:
    """Every row, in the order of the rows table in docs/capabilities.md."""
    rows: list[Row] = []
    for module_name in ROW_MODULES:
        module = importlib.import_module(f"alkstore_contract.suite.rows.{module_name}")
        found = module.ROW
        if not isinstance(found, Row):
            raise TypeError(f"alkstore_contract.suite.rows.{module_name}.ROW is not a Row")
        rows.append(found)
    return rows
