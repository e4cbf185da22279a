"""Mutant: enqueue stores its instants in whole seconds — breaks T1.

contract T1: instants and durations keep at least millisecond precision. This
engine truncates ``run_at``, ``expires_at`` and ``enqueued_at`` to the second
when it stores a job (as an engine keeping ``unixepoch()`` integers would), so
a delay of 1.234 s reads back as 1 s or 2 s. The ``enqueue_opts_resolution``
row catches it by ``run_at - enqueued_at`` of ``enqueue(delay=1.234)``.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

EXACT = ":run_at, :expires_at, :enqueued_at"
WHOLE_SECONDS = "(:run_at / 1000000) * 1000000, (:expires_at / 1000000) * 1000000, (:enqueued_at / 1000000) * 1000000"


adapter = sql_mutant(
    "mut-sqlite-whole-second-instants", "ENQUEUE_SQL", "ENQUEUE_MANY_SQL", old=EXACT, new=WHOLE_SECONDS
)
MUTANT = Mutant(
    clause="T1",
    rows=("enqueue_opts_resolution",),
    what="enqueue truncates run_at, expires_at and enqueued_at to whole seconds",
)
