"""Mutant: the Postgres sweep moves a job both expired and exhausted as exhausted: X2 (DEC-sweep-order), manual clock.

See ``pg_sweep_order``: the exhaustion step's exclusion of expired jobs is gone and its count is read
first, so the job dies as "max attempts exceeded" instead of "expired". ``sweep_and_retention``'s
sweep leg holds such a job (a lease of one unit, one attempt, expiring at two units) and sweeps once
both have passed; this module runs it on the manual clock.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, postgres_mutant
from tests.mutants.pg_sweep_order import ExhaustedFirstDriver

adapter = postgres_mutant("mut-pg-sweep-exhausted-first", driver=ExhaustedFirstDriver)
MUTANT = Mutant(
    clause="X2",
    rows=("sweep_and_retention",),
    what="the Postgres sweep lets its exhaustion step take a job that also expired, so it dies as exhausted",
)
