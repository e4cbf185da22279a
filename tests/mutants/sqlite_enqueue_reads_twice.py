"""Mutant: ``enqueue`` reads the clock twice, ``run_at`` from one read, ``enqueued_at`` from the next: breaks T1, E4.

contract T1: one clock read per operation; E4: an enqueue with neither
``delay`` nor ``run_at`` is ready now, ``run_at == enqueued_at``. Here the
queue resolves ``run_at`` from a read of its own before the driver stamps
``enqueued_at`` from a second. A ``ManualClock`` stands still between the two
reads, so every stamp agrees and the fault certifies on the manual clock; the
``SteppingClock`` of ``enqueue_opts_resolution``'s one-read leg returns a new
instant on each read, and sees both the second read and ``run_at`` one step
before ``enqueued_at``.
"""

from __future__ import annotations

import dataclasses

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitQueue
from alkstore_contract.resolution import EnqueueOptions, resolve_new_jobs
from alkstore_contract.types import EnqueueCall, JobId
from alkstore_contract.validation import encode_payload
from tests.mutants.catalog import Mutant, sqlite_mutant


class TwoReadQueue(KitQueue[SqliteDriver]):
    async def _enqueue(self, payload: object, call: EnqueueCall) -> JobId:
        store = self._store
        store.check_open("enqueue")
        jobs = resolve_new_jobs((encode_payload(payload),), EnqueueOptions.validate_call(call), self._opts)
        first = store.now()
        if first is not None:
            jobs = dataclasses.replace(jobs, run_at=jobs.run_at_from(first), delay_s=0.0)
        return (await self._driver.insert(self._name, jobs, store.now()))[0]


adapter = sqlite_mutant("mut-sqlite-enqueue-reads-twice", queue=TwoReadQueue)
MUTANT = Mutant(
    clause="T1",
    rows=("enqueue_opts_resolution",),
    what="enqueue() reads the clock twice: run_at from the first read, enqueued_at from the second",
)
