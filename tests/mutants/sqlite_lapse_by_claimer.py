"""Mutant: a claim judges a lease lapsed by the claiming handle's visibility timeout, not the job's lease — breaks C4.

contract C1/C4: a lease is the job's own (``lease_expires_at = now + the job's
stamped timeout``, C3), and it lapses at that instant whichever handle claims
next. This engine stamps the lease right but decides that it lapsed by
``claimed_at + the claimer's visibility_timeout_s`` (claimed_at being
``lease_expires_at - visibility_timeout_us``), as a library that keeps one
timeout per consumer does: a job leased for 100 ticks is handed out again after
one tick through a handle opened with a one-tick timeout (two unexpired leases,
C4), and a job whose one-tick lease lapsed stays out of reach of a 100-tick
handle (C1). Only handles of one queue with different timeouts see it, so
``exactly_once``'s mixed-timeout legs catch it on the system clock too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitQueue
from alkstore_contract.kit.front import KitJobHandle
from tests.mutants.catalog import Mutant, mutated, sqlite_mutant


class ClaimerTimeoutDriver(SqliteDriver):
    claimer_timeout_us: int = 0
    """The visibility timeout of the handle whose claim is being run (set by the queue just before)."""
    CLAIM_SQL: ClassVar[str] = mutated(
        SqliteDriver.CLAIM_SQL,
        "AND state = 'processing' AND lease_expires_at <= :now",
        "AND state = 'processing' AND lease_expires_at - visibility_timeout_us + :claimer_timeout_us <= :now",
    )

    def _claim_params(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> dict[str, object]:
        return super()._claim_params(queue, worker_id, n, token, now) | {"claimer_timeout_us": self.claimer_timeout_us}


class ClaimerTimeoutQueue(KitQueue[Any]):
    async def _claim(self, op: str, worker_id: object, n: object) -> list[KitJobHandle[Any]]:
        self._driver.claimer_timeout_us = round(self._opts.visibility_timeout_s * 1_000_000)
        return await super()._claim(op, worker_id, n)


adapter = sqlite_mutant("mut-sqlite-lapse-by-claimer", driver=ClaimerTimeoutDriver, queue=ClaimerTimeoutQueue)
MUTANT = Mutant(
    clause="C4",
    rows=("exactly_once",),
    what="a claim judges a lease lapsed by claimed_at + the claiming handle's visibility timeout, not the job's lease",
    clock="system",
)
