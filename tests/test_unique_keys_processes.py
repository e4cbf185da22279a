"""Contract K3 at scale: 16 OS processes enqueueing one key at once make exactly one job, round after round.

The ``unique_keys`` row races 4 processes for 5 rounds on every engine that
declares ``multi_process``; this runs the issue's bar on the two shipped
engines that do, SQLite and Postgres: 16 worker processes, 100 rounds, each
round's key started in every process at the same moment (a line on each
worker's stdin), and every answer naming the one job with exactly one
``created``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from alkstore_contract.suite.processes import _child_env, finish, unique_rounds
from alkstore_contract.suite.registry import load_adapter

PROCESSES = 16
ROUNDS = 100


async def _race(engine: str) -> None:
    adapter = load_adapter(engine)
    location = await adapter.create_location()
    store = await adapter.open_store(location)  # laid out before the racers open theirs
    keys = [f"round-{round_}" for round_ in range(ROUNDS)]
    spec = {"engine": engine, "location": location, "clock": "system", "seed": 0, "action": "enqueue_unique"}
    spec |= {"queue": "sixteen", "stores": 1, "keys": keys}
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "alkstore_contract.suite.worker",
            json.dumps(spec),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_child_env(),
        )
        for _ in range(PROCESSES)
    ]
    try:
        answers = await unique_rounds(processes, keys)
        for process in processes:
            await finish(process)
        for key in keys:
            ids = {job_id for job_id, _ in answers[key]}
            created = sum(made for _, made in answers[key])
            assert (len(answers[key]), len(ids), created) == (PROCESSES, 1, 1), (key, answers[key])
        assert await adapter.count_stored_jobs(location) == ROUNDS
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
        await store.close()
        await adapter.drop_location(location)


@pytest.mark.asyncio
async def test_sixteen_sqlite_processes_make_one_job_per_key_in_every_round() -> None:
    await _race("sqlite")


@pytest.mark.asyncio
async def test_sixteen_postgres_processes_make_one_job_per_key_in_every_round() -> None:
    reason = await load_adapter("postgres").unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail(f"a Postgres server is required here (CI or ALKSTORE_REQUIRE=1): {reason}")
        pytest.skip(reason)
    await _race("postgres")
