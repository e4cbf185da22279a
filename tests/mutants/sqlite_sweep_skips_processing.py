"""Mutant: the sweep expires only ready jobs; expired jobs under a live lease stay processing — breaks X2.

The expiry statement matches ``state = 'ready'`` instead of ``state IN
('ready', 'processing')``, so a job that expires while a worker holds it is
stranded: never moved to dead, its worker still heartbeating it. Exhausted
lapsed leases still die (as ``"max attempts exceeded"``, even when expired).
``sweep_and_retention``'s X2 leg counts and inspects what one sweep moved.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

adapter = sql_mutant(
    "mut-sqlite-sweep-skips-processing",
    "SWEEP_EXPIRE_SQL",
    old="state IN ('ready', 'processing')",
    new="state = 'ready'",
)
MUTANT = Mutant(
    clause="X2",
    rows=("sweep_and_retention",),
    what="sweep_expired() moves expired ready jobs only, leaving expired processing jobs as they are",
)
