"""Mutant: a ``run_at`` in the past is stored as the enqueue's now — breaks E3.

contract E3 (the boundary-total rule): ``run_at`` alone is stored verbatim, future
or past, with no error and no clamping. This engine clamps a past ``run_at`` up
to the enqueue instant: the job is still claimable at once, but its ready time
(and so its place in C2's order among other overdue jobs) is lost. The
``enqueue_opts_resolution`` row catches it reading the stored ``run_at`` back.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver

from tests.mutants.catalog import Mutant, mutated, sqlite_mutant

VERBATIM = ":run_at, :expires_at, :enqueued_at"
CLAMPED = "MAX(:run_at, :enqueued_at), :expires_at, :enqueued_at"


class ClampingDriver(SqliteDriver):
    ENQUEUE_SQL: ClassVar[str] = mutated(SqliteDriver.ENQUEUE_SQL, VERBATIM, CLAMPED)
    ENQUEUE_MANY_SQL: ClassVar[str] = mutated(SqliteDriver.ENQUEUE_MANY_SQL, VERBATIM, CLAMPED)


adapter = sqlite_mutant("mut-sqlite-past-run-at-clamped", driver=ClampingDriver)
MUTANT = Mutant(
    clause="E3",
    rows=("enqueue_opts_resolution",),
    what="a past run_at is clamped to the enqueue's now instead of being stored verbatim",
)
