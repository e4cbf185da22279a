"""Mutant: an enqueue given both ``delay`` and ``run_at`` takes ``run_at`` — breaks E2.

contract E2: ``delay`` wins over ``run_at`` (ready time = now + delay). This engine
drops the delay whenever a ``run_at`` is given, so a job meant to run in 90 s
waits for a ``run_at`` a month away (or runs at once on a past one). The
``enqueue_opts_resolution`` row catches it by ``run_at - enqueued_at != delay``.

The kit resolves the two options before the driver is called and hands it the
delay alone (``NewJobs.run_at`` is ``None`` when a delay is given), so no
driver can prefer the ``run_at``: the fault is in the queue the engine's store
returns.
"""

from __future__ import annotations

from typing import Any

from alkstore_sqlite import SqliteDriver

from alkstore_contract.kit import KitQueue
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, sqlite_mutant


class RunAtWinsQueue(KitQueue[SqliteDriver]):
    async def enqueue(self, payload: object, **opts: Any) -> JobId:
        if opts.get("run_at") is not None:
            opts["delay"] = None
        return await super().enqueue(payload, **opts)


adapter = sqlite_mutant("mut-sqlite-run-at-wins", queue=RunAtWinsQueue)
MUTANT = Mutant(
    clause="E2",
    rows=("enqueue_opts_resolution",),
    what="enqueue with both delay and run_at stores run_at and ignores the delay",
)
