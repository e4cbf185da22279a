"""Mutant: a heartbeat adds ``extend`` to the old deadline — breaks H3.

contract H3: ``lease_expires_at = now + extend``, an absolute reset from now,
never an addition. This engine extends the old deadline instead, so every
heartbeat pushes the lease further out (a worker heartbeating every few
seconds holds a job for ever after it hangs) and a short ``extend`` can never
shorten it. The ``lease_validity`` row catches it in the deadline a heartbeat sets.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver
from alkstore_sqlite.driver import FENCE

from tests.mutants.catalog import Mutant, sqlite_mutant


class AddingHeartbeatDriver(SqliteDriver):
    # :lease_expires_at is now + extend, so (:lease_expires_at - :now) is extend in microseconds.
    HEARTBEAT_SQL: ClassVar[str] = (
        f"UPDATE jobs SET lease_expires_at = lease_expires_at + (:lease_expires_at - :now) WHERE {FENCE}"
    )


adapter = sqlite_mutant("mut-sqlite-heartbeat-adds", driver=AddingHeartbeatDriver)
MUTANT = Mutant(
    clause="H3",
    rows=("lease_validity",),
    what="heartbeat() sets lease_expires_at = old deadline + extend instead of now + extend",
)
