"""Mutant: the Node.js engine stores a run_at whose UTC instant lies before year 1 or after 9999 — breaks E9.

The engine is ``engines_under_test/alkstore_node`` with its instant check
replaced by one that accepts any integer (``node_run_at_unbounded.js``). The
suite sends such an instant to a wire engine as epoch microseconds, though
Python cannot convert it to UTC, so the ``bounds_at_their_edge`` row catches it.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, node_mutant

adapter = node_mutant("node_run_at_unbounded")
MUTANT = Mutant(
    clause="E9",
    rows=("bounds_at_their_edge",),
    what="the Node.js engine stores a run_at outside years 1 to 9999 UTC, one microsecond past either end",
)
