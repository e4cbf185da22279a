"""Mutant: the Node.js engine stores a payload nested 501 levels, or holding an int of 4301 digits — breaks E8.

The engine is ``engines_under_test/alkstore_node`` with its payload check
replaced by one that accepts everything (``node_payload_unbounded.js``). The
suite sends such payloads to a wire engine as they are (JSON text carries
them), so the ``bounds_at_their_edge`` row catches it.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, node_mutant

adapter = node_mutant("node_payload_unbounded")
MUTANT = Mutant(
    clause="E8",
    rows=("bounds_at_their_edge",),
    what="the Node.js engine has no payload bound: 501 levels of nesting and 4301-digit ints are stored",
)
