"""Mutant: a ``run_at`` in the past is stored as the enqueue's now — breaks E3.

contract E3 (the boundary-total rule): ``run_at`` alone is stored verbatim, future
or past, with no error and no clamping. This engine clamps a past ``run_at`` up
to the enqueue instant: the job is still claimable at once, but its ready time
(and so its place in C2's order among other overdue jobs) is lost. The
``enqueue_opts_resolution`` row catches it reading the stored ``run_at`` back.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

VERBATIM = ":run_at, :expires_at, :enqueued_at"
CLAMPED = "MAX(:run_at, :enqueued_at), :expires_at, :enqueued_at"


adapter = sql_mutant("mut-sqlite-past-run-at-clamped", "ENQUEUE_SQL", "ENQUEUE_MANY_SQL", old=VERBATIM, new=CLAMPED)
MUTANT = Mutant(
    clause="E3",
    rows=("enqueue_opts_resolution",),
    what="a past run_at is clamped to the enqueue's now instead of being stored verbatim",
)
