"""Mutant: the sweep never purges dead letters, whatever their retention — breaks X2.

The purge statement's condition can never hold, so dead jobs pile up forever
as if every job were stamped ``dead_letter_retention_s=None``. Moves to dead
and the count are untouched. ``sweep_and_retention`` reads a dead job with
retention 0, and one at ``died_at + retention``, after a sweep.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

PURGE_CONDITION = "died_at + dead_letter_retention_us <= :now"


adapter = sql_mutant(
    "mut-sqlite-retention-ignored", "SWEEP_PURGE_SQL", old=PURGE_CONDITION, new=f"{PURGE_CONDITION} AND 0"
)
MUTANT = Mutant(
    clause="X2",
    rows=("sweep_and_retention",),
    what="sweep_expired() never deletes dead jobs, ignoring their stamped dead_letter_retention_s",
)
