"""One statement on a bare asyncpg connection of its own, opened and closed around it.

For tests that look at a Postgres server from outside the engine (its clock,
its catalogue), so that what they see does not pass through the code under test.
"""

from __future__ import annotations

from typing import Any

import asyncpg


async def fetch_value(dsn: str, sql: str, *args: object) -> Any:
    """The first column of the first row ``sql`` returns on the server at ``dsn``."""
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.close()
