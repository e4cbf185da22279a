"""Mutant: a claim only takes ready jobs, so a lapsed lease is never reclaimed — breaks C1.

The claim's ``lapsed`` arm (processing, ``lease_expires_at <= now``, attempts
to spare) is gone: a job whose worker crashed holding it stays processing for
ever, claimable by nobody. The ``crash_recovery`` row catches it when the
killed worker's leases lapse and nothing comes back.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver
from alkstore_sqlite.columns import JOB_COLUMN_LIST
from alkstore_sqlite.driver import NOT_EXPIRED

from tests.mutants.catalog import Mutant, sqlite_mutant


class ReadyOnlyDriver(SqliteDriver):
    CLAIM_SQL: ClassVar[str] = f"""
UPDATE jobs
SET state = 'processing', attempts = attempts + 1, claimed_by = :worker_id, token = :token,
    lease_expires_at = :now + visibility_timeout_us
WHERE id IN (
    SELECT id FROM jobs
    WHERE queue = :queue AND state = 'ready' AND run_at <= :now AND {NOT_EXPIRED}
    ORDER BY priority DESC, run_at, id
    LIMIT :n
)
RETURNING {JOB_COLUMN_LIST}
"""


adapter = sqlite_mutant("mut-sqlite-forget-lapsed", driver=ReadyOnlyDriver)
MUTANT = Mutant(
    clause="C1",
    rows=("crash_recovery",),
    what="the claim selects only ready jobs: a processing job whose lease lapsed is never claimable again",
)
