"""Mutant: the Postgres claim computes its lease by the client's clock — T3, on the system clock.

See ``pg_lease_from_client_clock``: the same driver, run with
``--alkstore-clock=system``, where every row's store has the engine's default
clock (the server's); the ``server_clock`` row must kill it on both clocks.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, postgres_mutant
from tests.mutants.pg_lease_from_client_clock import ClientClockClaims

adapter = postgres_mutant("mut-pg-lease-from-client-clock-system", driver=ClientClockClaims)
MUTANT = Mutant(
    clause="T3",
    rows=("server_clock",),
    what="a claim by a store without a clock takes now from the client's clock, not the server's (system clock)",
    clock="system",
)
