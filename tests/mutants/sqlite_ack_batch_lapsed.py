"""Mutant: ``ack_batch`` acks processing jobs whose lease has lapsed — breaks B1.

The batch ack lost its ``lease_expires_at > now`` condition, so a worker that
comes back after its lease ran out deletes a job that is due for a reclaim (or,
with no attempt left, for the dead letters). ``batch_ack_and_cancel`` lists a
lapsed job among held ones and checks the count and what is left.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

adapter = sql_mutant("mut-sqlite-ack-batch-lapsed", "ACK_BATCH_SQL", old=" AND +lease_expires_at > :now", new="")
MUTANT = Mutant(
    clause="B1",
    rows=("batch_ack_and_cancel",),
    what="ack_batch() deletes and counts processing jobs whose lease has lapsed",
)
