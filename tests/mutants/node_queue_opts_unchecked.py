"""Mutant: the Node.js engine takes a queue's options as sent, bad ones included — breaks S2.

The engine is ``engines_under_test/alkstore_node`` with its queue-options check
replaced by one that accepts everything (``node_queue_opts_unchecked.js``).
A ``QueueOpts`` refuses bad options in Python, so for a wire engine the
``validation_and_closed_store`` row sends them past it, as they are, and
judges the engine's answer: it catches this.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, node_mutant

adapter = node_mutant("node_queue_opts_unchecked")
MUTANT = Mutant(
    clause="S2",
    rows=("validation_and_closed_store",),
    what="the Node.js engine keeps a queue's options unchecked: a visibility timeout of 0 or max_attempts 0 is kept",
)
