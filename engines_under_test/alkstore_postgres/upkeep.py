"""Vacuuming the jobs table from inside the store, so a long-lived queue keeps its claim cost flat.

Every job leaves dead row versions behind: a claim's update (it changes
``state``, so it cannot be HOT) and an ack's delete. Their entries stay in the
claim-path indexes, at the very front of the ordered scans a claim starts
with: ``jobs_ready_claim`` in C2 order, where claimed jobs leave their old
entries before every live one, and ``jobs_processing_lease``, where the old
leases of acked jobs pile up below ``now`` once they would have lapsed. A scan
marks them dead as it passes, but only ``VACUUM`` removes them and their
pages; until then every claim steps over them. Measured on Postgres 15 after
100,000 jobs went through a queue, one ``claim_one`` read 510 index pages
instead of 3; after 500,000, claims ran at 0.30x the rate of a fresh queue.

Autovacuum cannot be counted on to keep up: it wakes once a minute
(``autovacuum_naptime``), is throttled by cost delays, and may be off (it is
on CI's server). So the store counts the dead versions its own statements
leave and, each time the count passes a threshold, runs ``VACUUM`` on the
jobs table in a task of its own, on a pooled connection, while claims go on
(``VACUUM`` takes a lock that no ``SELECT``/``INSERT``/``UPDATE``/``DELETE``
waits for). ``SKIP_LOCKED`` makes a store whose table another store or
autovacuum is already vacuuming skip its turn instead of queueing behind it;
``INDEX_CLEANUP ON`` stops Postgres (14+) from skipping the index pass when
dead rows are few next to the live ones, which is exactly when a long backlog
is being consumed and the dead entries still lie in the claim's path.

The threshold grows with the table (``reltuples`` after each vacuum): a
vacuum reads every index page, so on a large backlog it runs less often.
Nothing here is a contract operation; a vacuum that fails (no ownership of the
table, a lost connection, a store closing) is logged and forgotten, and the
next threshold tries again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger(__name__)

BASE_THRESHOLD = 10_000
"""Dead row versions between two vacuums of a small table (about 5,000 jobs claimed and acked).

Between two vacuums a claim steps over at most this many dead entries (some 25
index pages per index); a vacuum of even a small table costs a few
milliseconds of server time, so vacuuming much more often slows a busy queue
down more than the dead entries do."""
VACUUM_TIMEOUT_S = 600.0
"""A vacuum's own statement timeout: the store's ``op_timeout_s`` (asyncpg's ``command_timeout``) bounds one
job statement, and a vacuum of a large table may rightly take longer."""
SCALE_FACTOR = 0.02
"""Extra dead row versions allowed per live row, so a vacuum's cost stays a small share of the work between."""


class Upkeep:
    """One store's vacuum of its jobs table: counted, triggered, at most one in flight."""

    def __init__(self, pool: Any, table: str) -> None:
        self._pool = pool
        self._vacuum_sql = f"VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) {table}"
        self._table = table
        self._dead = 0
        self._threshold = BASE_THRESHOLD
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.vacuums = 0
        """Vacuums that completed (for tests and benchmarks)."""

    def note(self, dead_versions: int) -> None:
        """Count row versions a statement just left dead; start a vacuum once enough have piled up."""
        if dead_versions <= 0 or self._closed:
            return
        self._dead += dead_versions
        if self._dead < self._threshold or (self._task is not None and not self._task.done()):
            return
        self._dead = 0
        self._task = asyncio.get_running_loop().create_task(self._vacuum())

    async def _vacuum(self) -> None:
        try:
            async with self._pool.acquire() as conn:
                await conn.execute(self._vacuum_sql, timeout=VACUUM_TIMEOUT_S)
                live = await conn.fetchval("SELECT reltuples FROM pg_class WHERE oid = $1::regclass", self._table)
        except Exception as exc:
            logger.warning("alkstore: VACUUM of %s failed, retried after more jobs: %r", self._table, exc)
            return
        self.vacuums += 1
        self._threshold = BASE_THRESHOLD + int(SCALE_FACTOR * max(float(live or 0), 0.0))

    async def idle(self) -> None:
        """Wait for the vacuum in flight, if any, to end."""
        task = self._task
        if task is not None:
            await asyncio.wait([task])

    async def close(self) -> None:
        """Stop starting vacuums and cancel the one in flight (a cancelled ``VACUUM`` leaves nothing half done)."""
        self._closed = True
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task])
