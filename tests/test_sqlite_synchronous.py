"""``alkstore_sqlite.open_store(synchronous=...)``: the knob DEC-sqlite-synchronous (contract P3) points users to.

``PRAGMA synchronous`` is a setting of one connection, so it is read back
through the store's own connection (``store.driver.db``): a second connection
on the same file would show its own default, not what the store runs with.
SQLite reports NORMAL as 1 and FULL as 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from alkstore_sqlite import SqliteStore, open_store
from alkstore_sqlite.schema import Synchronous

from alkstore_contract import InvalidArgument

PRAGMA_VALUES: dict[Synchronous, int] = {"NORMAL": 1, "FULL": 2}
"""What ``PRAGMA synchronous`` reads for each mode (SQLite's documented numbering)."""


async def _synchronous_in_effect(store: SqliteStore) -> int:
    rows = await store.driver.db.fetch("PRAGMA synchronous", {})
    return int(rows[0][0])


@pytest.mark.asyncio
async def test_the_default_is_normal(tmp_path: Path) -> None:
    async with await open_store(tmp_path / "jobs.sqlite3") as store:
        assert await _synchronous_in_effect(store) == PRAGMA_VALUES["NORMAL"]


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["NORMAL", "FULL"])
async def test_the_mode_asked_for_is_in_effect_and_the_store_works(tmp_path: Path, mode: Synchronous) -> None:
    path = tmp_path / "jobs.sqlite3"
    async with await open_store(path, synchronous=mode) as store:
        assert await _synchronous_in_effect(store) == PRAGMA_VALUES[mode]
        job_id = await store.queue("q").enqueue({"n": 1})
    async with await open_store(path, synchronous=mode) as store:
        handle = await store.queue("q").claim_one("w")
        assert handle is not None
        assert handle.job.id == job_id
        assert await handle.ack()


@pytest.mark.asyncio
@pytest.mark.parametrize("value", ["OFF", "EXTRA", "full", "", 2, None], ids=repr)
async def test_any_other_value_is_refused_before_the_file_is_touched(tmp_path: Path, value: object) -> None:
    path = tmp_path / "jobs.sqlite3"
    with pytest.raises(InvalidArgument) as refused:
        await open_store(path, synchronous=value)  # type: ignore[arg-type]
    message = str(refused.value)
    assert message.startswith(f"synchronous={value!r}: ")
    assert "'NORMAL'" in message
    assert "'FULL'" in message
    assert not path.exists()
