"""Contract T3's instrument: the Postgres adapter's skewed server really runs its clock ahead of this host's.

The suite's ``server_clock`` row measures the server's offset through the engine
and judges the engine by it; this test confirms the hook outside the engine, with
a bare asyncpg connection to the server (``SELECT clock_timestamp()``), so a
verdict never rests on faketime having worked unseen. It also checks that the
adapter starts one cluster per offset (``initdb`` costs seconds) and that
``drop_location`` removes a skewed location's schema, not its cluster.

Needs initdb (Debian's postgresql package) and libfaketime (``ci/faketime.sh``);
without them the tests skip, naming what is missing, except under ``CI`` or
``ALKSTORE_REQUIRE=1`` where they fail.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import pytest_asyncio
from alkstore_postgres.adapter import PgAdapter
from alkstore_postgres.location import Location

from tests.postgres_once import fetch_value

OFFSET_S = 7200.0
SLACK_S = 5.0
"""How far the bare connection's reading may lie from the offset (faketime's offset is exact; this is latency)."""
pytestmark = pytest.mark.xdist_group("postgres-skewed-server")


@pytest_asyncio.fixture
async def adapter() -> AsyncIterator[PgAdapter]:
    """A Postgres adapter whose skewed cluster can start here; the test skips (or fails under CI) when it cannot."""
    found = PgAdapter()
    reason = await found.skewed_server_unavailable_reason()
    if reason is not None:
        if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
            pytest.fail(f"the skewed Postgres server is required here (CI or ALKSTORE_REQUIRE=1): {reason}")
        pytest.skip(reason)
    yield found
    for cluster in found._skewed.values():
        await cluster.destroy()


async def _server_offset_s(dsn: str) -> float:
    server_now: datetime = await fetch_value(dsn, "SELECT clock_timestamp()")
    return (server_now - datetime.now(UTC)).total_seconds()


@pytest.mark.asyncio
async def test_t3_the_skewed_server_runs_ahead_by_the_offset_asked_for(adapter: PgAdapter) -> None:
    location = await adapter.create_skewed_server_location(OFFSET_S)
    offset_s = await _server_offset_s(Location.decode(location).dsn)
    assert abs(offset_s - OFFSET_S) < SLACK_S, f"[T3] faketime did not move the server's clock: {offset_s:.1f} s ahead"
    await adapter.drop_location(location)


@pytest.mark.asyncio
async def test_t3_one_skewed_cluster_serves_every_location_and_a_drop_removes_only_the_schema(
    adapter: PgAdapter,
) -> None:
    first = Location.decode(await adapter.create_skewed_server_location(OFFSET_S))
    second = Location.decode(await adapter.create_skewed_server_location(OFFSET_S))
    assert first.dsn == second.dsn, "[T3] one cluster serves every skewed location with one offset"
    assert first.schema != second.schema, "[T3] a schema per location"
    assert len(adapter._skewed) == 1
    await adapter.drop_location(first.encode())
    assert await adapter.count_stored_jobs(second.encode()) == 0, "[T3] the other location survives the drop"
    left = await fetch_value(first.dsn, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", first.schema)
    assert left == 0, "[T3] drop_location removes the skewed location's schema"
    await adapter.drop_location(second.encode())
