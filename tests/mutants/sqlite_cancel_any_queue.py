"""Mutant: ``cancel`` deletes a job by id whatever queue it belongs to — breaks S4.

The cancel statement lost its ``queue = :queue`` condition: ids are unique in
the store, so it "works" for every caller that passes its own queue's ids, and
silently deletes another queue's job otherwise. ``batch_ack_and_cancel``'s S4
leg cancels queue B's ids through queue A.
"""

from __future__ import annotations

from tests.mutants.catalog import Mutant, sql_mutant

adapter = sql_mutant("mut-sqlite-cancel-any-queue", "CANCEL_SQL", old=" AND queue = :queue", new="")
MUTANT = Mutant(
    clause="S4", rows=("batch_ack_and_cancel",), what="cancel() deletes the job with that id in any queue of the store"
)
