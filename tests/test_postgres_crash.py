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
from alkstore_postgres.provision import children_of, crash

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


def _running(pid: int) -> bool:
    """Whether ``pid`` has not exited: a zombie has (it waits for init, its parent gone, to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_a_crash_kills_every_process_the_server_started() -> None:
    """Every child of the postmaster is killed with it, and gone before a restart.

    Each child of a postmaster (backends, checkpointer) calls ``setsid()`` as
    it starts, so a signal to the postmaster's process group reached none of
    them: they lived on until they noticed their postmaster gone, attached to
    the server's shared memory, and a restart meanwhile refused to start
    ("pre-existing shared memory block ... is still in use"). Here, without a
    server: a parent whose child leads a session of its own, as a backend does,
    and never notices its parent gone. If this fails, check ``crash`` and
    ``children_of`` in alkstore_postgres/provision.py (``ThrowawayCluster.kill``).
    """
    parent = subprocess.Popen(["sh", "-c", "setsid sleep 60 & echo started; wait"], stdout=subprocess.PIPE)
    child: list[int] = []
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline() == b"started\n"
        child = children_of(parent.pid)
        assert len(child) == 1, "the child, in a session of its own"
        asyncio.run(crash(parent))
        assert parent.returncode == -signal.SIGKILL
        assert not _running(child[0]), "the child outlived the crash"
    finally:
        for pid in (parent.pid, *child):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        parent.wait()
