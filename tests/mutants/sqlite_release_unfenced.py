"""Mutant: ``release`` is fenced by the job's id and state, not by the claim or its lease — breaks L1.

contract L1: a release succeeds only for its own live claim, like ack. This
engine's release hands back any processing job with that id, so a worker whose
lease lapsed, and whose job another worker reclaimed, puts the job back to
ready under the new holder: the new holder's work then runs beside a third
claim. The ``release`` row's stale-handle leg catches it.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver
from alkstore_sqlite.driver import FENCE

from tests.mutants.catalog import Mutant, mutated, sqlite_mutant


class UnfencedReleaseDriver(SqliteDriver):
    RELEASE_SQL: ClassVar[str] = mutated(SqliteDriver.RELEASE_SQL, FENCE, "id = :id AND state = 'processing'")


adapter = sqlite_mutant("mut-sqlite-release-unfenced", driver=UnfencedReleaseDriver)
MUTANT = Mutant(
    clause="L1",
    rows=("release", "model_based"),
    what="release() hands back any processing job with that id, whoever holds it and whether or not its lease lapsed",
)
