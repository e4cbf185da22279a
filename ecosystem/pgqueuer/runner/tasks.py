"""pgqueuer's side of its runner: the factory ``pgq run tasks:create_pgqueuer`` calls, as pgqueuer's docs write it."""

from __future__ import annotations

import json
import os

import asyncpg
from pgqueuer import AsyncpgDriver, Job, PgQueuer

from alkstore_faults.handler import perform_async


async def create_pgqueuer() -> PgQueuer:
    connection = await asyncpg.connect(os.environ["ALKSTORE_FAULTS_BROKER"])
    pgq = PgQueuer(AsyncpgDriver(connection))

    @pgq.entrypoint("run_job")  # concurrency_limit 0 (unlimited): a limit holds across all workers
    async def run_job(job: Job) -> None:
        data = json.loads(job.payload or b"{}")
        await perform_async(data["id"], data["duration_s"], data["fail"])

    return pgq
