"""Mutant: the mem engine's handle ops ignore the claim token — breaks H5 (clause family H).

The lease check still looks at state and deadline, so a handle whose own lease
lapsed fails as it should; but after a reclaim, the old handle acts on the new
holder's live lease.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_mem import MemDriver
from alkstore_mem.record import LEASE_EXPIRES_AT, PROCESSING, STATE, JobRecord

from tests.mutants.catalog import Mutant, mem_mutant


class TokenlessDriver(MemDriver):
    def _holds_lease(self, record: JobRecord, token: str, now: datetime) -> bool:
        lease = record[LEASE_EXPIRES_AT]
        return record[STATE] == PROCESSING and lease is not None and now < lease


adapter = mem_mutant("mut-mem-ack-unfenced", driver=TokenlessDriver)
MUTANT = Mutant(clause="H5", rows=("lease_validity",), what="mem handle ops fence by state and lease only, not token")
