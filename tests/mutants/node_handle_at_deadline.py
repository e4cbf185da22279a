"""Mutant: the Node.js engine's ``ack`` and ``retry`` succeed at exactly ``lease_expires_at`` — breaks H1.

The engine is ``engines_under_test/alkstore_node`` with its fence's ``>`` made
``>=`` (``node_handle_at_deadline.js``), run on the system clock like the
SQLite mutant of that boundary; ``lease_validity`` catches it.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, node_mutant

adapter = node_mutant("node_handle_at_deadline")
MUTANT = Mutant(
    clause="H1",
    rows=("lease_validity",),
    what="the Node.js engine's ack/retry succeed at exactly lease_expires_at (>= in the fence)",
    clock="system",
)
