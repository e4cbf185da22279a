"""Contract T3 with a server whose clock is two hours ahead of the client's.

T3: the Postgres engine's default clock is the database server's, so worker
hosts with skewed clocks agree. On one machine the client's and the server's
clocks agree, so a driver that computed a lease (or anything else) from the
client's clock would pass ``test_postgres_engine``'s server-clock test. Here a
throwaway cluster runs under libfaketime (``FAKETIME=+7200``, Debian's
``faketime`` package; ``ci/faketime.sh`` installs it), its clock measured to
be two hours ahead before anything is judged, and every instant an op stamps
must be the server's. The same check is run on a driver that claims by the
client's clock, and must fail: the check can tell the two apart.

Needs initdb (Debian's postgresql package) and libfaketime; without them the
tests skip, naming what is missing, except under ``CI`` or
``ALKSTORE_REQUIRE=1`` where they fail.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from alkstore_postgres.driver import PgDriver
from alkstore_postgres.location import new_schema_name
from alkstore_postgres.store import PgStore, store_on

from alkstore_contract import JobState, QueueOpts
from alkstore_contract.types import JobId

SKEW_S = 7200
"""How far ahead of the client the server's clock runs."""
SKEW_SLACK_S = 60.0
"""How far the measured skew may lie from ``SKEW_S`` (the cluster takes seconds to start)."""
VISIBILITY_S = 120
pytestmark = pytest.mark.xdist_group("postgres-skewed-server")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
        pytest.fail(f"the skewed Postgres server is required here (CI or ALKSTORE_REQUIRE=1): {reason}")
    pytest.skip(reason)


def _faketime_lib() -> str | None:
    named = os.environ.get("ALKSTORE_FAKETIME_LIB")
    if named:
        return named if Path(named).is_file() else None
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1")) + sorted(
        glob.glob("/usr/lib/faketime/libfaketime.so.1")
    )
    return found[0] if found else None


def _pg_bindir() -> str | None:
    if shutil.which("pg_config"):
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False).stdout.strip()
        if Path(bindir, "initdb").is_file():
            return bindir
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return str(Path(found[-1]).parent) if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_owner(command: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: as root, run them as the user ``postgres``."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="module")
def skewed_dsn() -> Iterator[str]:
    """The DSN of a throwaway cluster whose clock is ``SKEW_S`` ahead; stopped and deleted afterwards."""
    lib, bindir = _faketime_lib(), _pg_bindir()
    if lib is None:
        _unavailable("libfaketime not found (Debian's faketime package; ci/faketime.sh installs it)")
    if bindir is None:
        _unavailable("initdb not found (Debian's postgresql package; ci/postgres.sh installs it)")
    assert lib is not None
    assert bindir is not None
    base = Path(tempfile.mkdtemp(prefix="alkstore-pg-skewed."))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    data, port = base / "data", _free_port()
    faked = ["env", f"LD_PRELOAD={lib}", f"FAKETIME=+{SKEW_S}", "DONT_FAKE_MONOTONIC=1"]
    server = f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off"
    try:
        subprocess.run(
            _as_owner([f"{bindir}/initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
            check=True,
            capture_output=True,
        )
        subprocess.run(
            _as_owner(
                [*faked, f"{bindir}/pg_ctl", "-D", str(data), "-l", str(base / "log"), "-w", "-o", server, "start"]
            ),
            check=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_owner([f"{bindir}/pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"]), capture_output=True
            )
        shutil.rmtree(base, ignore_errors=True)


@pytest_asyncio.fixture
async def bare(skewed_dsn: str) -> AsyncIterator[Any]:
    """A bare asyncpg connection to the skewed server; the test fails unless its clock is measured to be ahead."""
    conn = await asyncpg.connect(skewed_dsn)
    server_now: datetime = await conn.fetchval("SELECT clock_timestamp()")
    skew_s = (server_now - datetime.now(UTC)).total_seconds()
    assert abs(skew_s - SKEW_S) < SKEW_SLACK_S, f"faketime did not move the server's clock: {skew_s:.1f} s ahead"
    yield conn
    await conn.close()


class ClientClockClaims(PgDriver):
    """A broken driver: claims by the client's clock while every other step keeps the server's (T3)."""

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Any]:
        return await super().claim(queue, worker_id, n, token, now if now is not None else datetime.now(UTC))


async def _store(dsn: str, driver: type[PgDriver]) -> PgStore:
    opened = await driver.open(dsn, schema=new_schema_name(), op_timeout_s=10.0, connect_timeout_s=5.0)
    return await store_on(opened, clock=None, seed=3)


async def _server_now(bare: Any) -> datetime:
    now: datetime = await bare.fetchval("SELECT clock_timestamp()")
    return now


def _within(actual: datetime | None, low: datetime, high: datetime, offset_s: float, what: str) -> None:
    shift = timedelta(seconds=offset_s)
    assert actual is not None, f"[T3] {what} is None"
    assert low + shift <= actual <= high + shift, (
        f"[T3] {what} = {actual!r}: T3 demands the server's now + {offset_s} s, in [{low + shift}, {high + shift}] "
        f"(the server's clock runs {SKEW_S} s ahead of this host's)"
    )


async def server_clock_violation(store: PgStore, bare: Any) -> None:
    """Every instant enqueue, claim, heartbeat, retry and fail stamp is the server's; raises AssertionError if not."""
    queue = store.queue("skewed", QueueOpts(visibility_timeout_s=VISIBILITY_S, max_attempts=3))
    before = await _server_now(bare)
    job_id: JobId = await queue.enqueue({"t3": "the server's clock"}, expires=600)
    handle = await queue.claim_one("w")
    assert handle is not None, "[T3] a job ready at the server's now was not handed out at the server's now"
    middle = await _server_now(bare)
    job = await queue.get_job(job_id)
    assert job is not None
    _within(job.enqueued_at, before, middle, 0, "enqueued_at")
    _within(job.expires_at, before, middle, 600, "expires_at of enqueue(expires=600)")
    _within(handle.job.lease_expires_at, before, middle, VISIBILITY_S, "lease_expires_at of a claim")
    assert await handle.heartbeat(extend=60), "[T3] heartbeat() under a lease live on the server's clock"
    assert await handle.retry(delay=30), "[T3] retry() under a lease live on the server's clock"
    after = await _server_now(bare)
    job = await queue.get_job(job_id)
    assert job is not None
    assert job.state == JobState.READY
    _within(job.run_at, before, after, 30, "run_at of retry(delay=30)")
    await queue.cancel(job_id)
    dying = await queue.enqueue({"t3": "fail by the server's clock"})
    held = await queue.claim_one("w")
    assert held is not None, "[T3] the second job was not handed out at the server's now"
    assert held.job.id == dying
    assert await held.fail("done")
    end = await _server_now(bare)
    died = await queue.get_job(dying)
    assert died is not None
    _within(died.died_at, before, end, 0, "died_at of fail()")


@pytest.mark.asyncio
async def test_every_instant_is_the_skewed_servers(skewed_dsn: str, bare: Any) -> None:
    store = await _store(skewed_dsn, PgDriver)
    try:
        await server_clock_violation(store, bare)
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_the_check_catches_a_claim_by_the_clients_clock(skewed_dsn: str, bare: Any) -> None:
    store = await _store(skewed_dsn, ClientClockClaims)
    try:
        with pytest.raises(AssertionError, match=r"\[T3\]"):
            await server_clock_violation(store, bare)
    finally:
        await store.close()
