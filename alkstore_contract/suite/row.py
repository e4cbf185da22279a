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
    "progress",
    "dead_letter",
    "claim_extents",
    "claim_order",
    "lease_validity",
    "release",
    "unique_keys",
    "transactional_enqueue",
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


WHEN_IT_FAILS = "When it fails, check"
FOR_A_WIRE_ENGINE = "For a wire engine, check"
"""A row's module docstring may end with a paragraph starting so: the hint a wire engine gets instead."""


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
        them), so whoever prints it adds no heading of its own. A "For a wire engine, check …" paragraph
        after it is left out: it is ``hint_for(wire=True)``'s.
        """
        text = self._module_doc()
        marker = text.find(WHEN_IT_FAILS)
        if marker < 0:
            return f"{WHEN_IT_FAILS}: {self.doc}"
        wire = text.find(FOR_A_WIRE_ENGINE, marker)
        return (text[marker:wire] if wire >= 0 else text[marker:]).strip()

    def hint_for(self, *, wire: bool) -> str:
        """The hint for the engine's kind: a wire engine gets the row's "For a wire engine, check …" paragraph.

        The Python paragraph names helpers of ``alkstore_contract`` (``resolve_new_jobs``, the kit's
        drivers) that an engine in another language cannot call; where a row has no paragraph of its own
        for wire engines, the Python one is given with a line saying how to read it.
        """
        if not wire:
            return self.hint
        text = self._module_doc()
        marker = text.find(FOR_A_WIRE_ENGINE)
        if marker >= 0:
            return text[marker:].strip()
        return (
            f"{self.hint}\n\n(A wire engine: the helpers of alkstore_contract named here are the Python engines'; "
            'keep the same rules in your own code — docs/wire-protocol.md, "Argument checks" — and read the '
            "engine's stderr above.)"
        )

    def _module_doc(self) -> str:
        module = sys.modules.get(self.body.__module__)
        return (module.__doc__ if module is not None else None) or ""

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
