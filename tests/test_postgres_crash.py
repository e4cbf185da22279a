"""P3: the Postgres adapter's server-crash hook crashes a throwaway cluster of its own, and only that.

The durability row's server-crash leg trusts the hook to kill a real server
and start it again on what it kept; these tests pin what the leg cannot see:
a crash really stops the server (connections refused), the restart keeps the
committed rows, the configured server is never a target, and dropping the
location leaves no process and no directory behind. If one fails, check
``engines_under_test/alkstore_postgres/provision.py`` and the adapter's crash members.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from pathlib import Path

import asyncpg
import pytest
from alkstore_postgres import PgAdapter
from alkstore_postgres.location import Location
from alkstore_postgres.provision import kill_group, live_members

from alkstore_contract.adapter import CrashableServerAdapter
from alkstore_contract.errors import InvalidArgument
from tests.test_postgres_engine import server_dsn


@pytest.mark.asyncio
async def test_a_crash_stops_the_throwaway_server_and_a_restart_keeps_what_it_committed() -> None:
    adapter = PgAdapter()
    assert isinstance(adapter, CrashableServerAdapter)
    location = await adapter.create_crashable_location()
    cluster_dir: Path | None = None
    try:
        assert Location.decode(location).dsn != adapter.dsn, "a crashable location is never on the configured server"
        cluster_dir = adapter._cluster(location).base
        store = await adapter.open_store(location)
        job_id = await store.queue("crash").enqueue({"kept": True})
        await store.close()
        await adapter.crash_server(location)
        with pytest.raises((OSError, asyncpg.PostgresError)):
            await asyncpg.connect(Location.decode(location).dsn, timeout=2)
        await asyncio.wait_for(adapter.restart_server(location), adapter.restart_within_s)
        store = await adapter.open_store(location)
        job = await store.queue("crash").get_job(job_id)
        await store.close()
        assert job is not None, "P3: a committed enqueue survives a kill -9 of the server"
        assert job.payload == {"kept": True}
    finally:
        await adapter.drop_location(location)
    assert cluster_dir is not None
    assert not cluster_dir.exists(), "dropping a crashable location deletes its cluster"


def test_the_configured_server_is_never_crashed() -> None:
    server_dsn()

    async def body() -> None:
        adapter = PgAdapter()
        location = await adapter.create_location()
        try:
            with pytest.raises(InvalidArgument, match="not a crashable location of this adapter"):
                await adapter.crash_server(location)
            assert await adapter.count_stored_jobs(location) == 0, "the configured server still answers"
        finally:
            await adapter.drop_location(location)

    asyncio.run(body())


def test_a_crash_leaves_no_process_of_the_server_alive() -> None:
    """A process of the server's group that the first signal missed is killed before a restart.

    A backend the postmaster was forking as ``killpg`` came can miss it and live
    on, attached to the server's shared memory, until it notices its postmaster
    gone; a restart meanwhile refused to start ("pre-existing shared memory
    block ... is still in use"). Here, without a server: a group leader with a
    child in its group, the leader alone killed and reaped, as the first signal
    may leave a server. If this fails, check ``kill_group`` and ``live_members``
    in alkstore_postgres/provision.py, which ``ThrowawayCluster.kill`` calls.
    """
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo started; wait"], start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    try:
        assert leader.stdout is not None
        assert leader.stdout.readline() == "started\n"
        assert len(live_members(leader.pid)) == 2, "the leader and its child, in the leader's group"
        os.kill(leader.pid, signal.SIGKILL)
        leader.wait()
        assert len(live_members(leader.pid)) == 1, "the child outlives its leader, as a missed backend would"
        asyncio.run(kill_group(leader.pid))
        assert live_members(leader.pid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)
        leader.wait()
