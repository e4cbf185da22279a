"""Mutant: ``ack`` is fenced by the job id, state and lease but not by the claim — breaks H5.

contract H5 (ack loses to reclaim): after a lapse and a reclaim, the old holder's
ops return False. This engine's ack checks that the job is processing under a
live lease, as the peers without claim tokens do, but not WHICH claim holds it:
a worker that overran its lease and wakes up after a reclaim deletes the job
out from under the new holder. The ``lease_validity`` row catches it.
"""

from __future__ import annotations

from typing import ClassVar

from alkstore_sqlite import SqliteDriver

from tests.mutants.catalog import Mutant, sqlite_mutant


class UnfencedAckDriver(SqliteDriver):
    ACK_SQL: ClassVar[str] = "DELETE FROM jobs WHERE id = :id AND state = 'processing' AND lease_expires_at > :now"


adapter = sqlite_mutant("mut-sqlite-ack-unfenced", driver=UnfencedAckDriver)
MUTANT = Mutant(
    clause="H5",
    rows=("lease_validity",),
    what="ack() deletes by id (processing, live lease) without checking the claim token",
)
