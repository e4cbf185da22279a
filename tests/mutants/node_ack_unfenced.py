"""Mutant: the Node.js engine's ``ack`` is fenced by job id, state and lease, not by the claim — breaks H5.

The engine is ``engines_under_test/alkstore_node`` with one statement replaced
(``node_ack_unfenced.js``), certified through the wire protocol like the real
one. The ``lease_validity`` row catches it.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, node_mutant

adapter = node_mutant("node_ack_unfenced")
MUTANT = Mutant(
    clause="H5",
    rows=("lease_validity",),
    what="the Node.js engine's ack() deletes by id (processing, live lease) without checking the claim token",
)
