"""Mutant: the Node.js engine answers each write inside a transaction a timer commits every 5 ms — breaks P3.

The engine is ``engines_under_test/alkstore_node`` with its storage wrapped in
one open transaction (``node_group_commit.js``), certified through the wire
protocol like the real one, declaring ``durable``. A kill at a random moment
seldom lands inside a 5 ms window; the ``durability`` row's kill -9 at the
acknowledgement leg kills the engine's process group right after an answer,
and the answered write is gone.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, node_mutant

adapter = node_mutant("node_group_commit")
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="the Node.js engine answers every write inside a transaction a timer commits every 5 ms (kill -9 loses it)",
)
