"""Mutant: the sweep hides dead letters past their retention instead of deleting them — breaks X2.

The purge step of ``sweep_expired()`` moves each dead job whose retention ran
out to a queue no handle can name (S1 refuses names starting with ``__``), so
``get_job`` on its own queue shows ``None`` as if it were gone, and the counts
of the sweep are right; but the row is still stored, and a store that says it
forgets dead letters keeps them forever. Only a count of the rows stored
shows it: ``sweep_and_retention`` reads the adapter's oracle count before
and after a purge, and ``model_based`` compares it with its model after every
sweep.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

adapter = sql_mutant(
    "mut-sqlite-retention-hides", "SWEEP_PURGE_SQL", old="DELETE FROM jobs", new="UPDATE jobs SET queue = '__purged'"
)
MUTANT = Mutant(
    clause="X2",
    rows=("sweep_and_retention", "model_based"),
    what="sweep_expired() moves dead jobs past retention to a hidden queue instead of deleting them: still stored",
)
