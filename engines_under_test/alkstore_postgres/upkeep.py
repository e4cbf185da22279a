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
leave and, when a vacuum is due (below), runs ``VACUUM`` on the
jobs table in a task of its own, on one of the store's connections, while claims go on
(``VACUUM`` takes a lock that no ``SELECT``/``INSERT``/``UPDATE``/``DELETE``
waits for). ``SKIP_LOCKED`` makes a store whose table another store or
autovacuum is already vacuuming skip its turn instead of queueing behind it;
``INDEX_CLEANUP ON`` stops Postgres (14+) from skipping the index pass when
dead rows are few next to the live ones, which is exactly when a long backlog
is being consumed and the dead entries still lie in the claim's path.
``TRUNCATE false`` keeps the empty pages at the table's end: giving them back
to the file system takes an ``ACCESS EXCLUSIVE`` lock, which every claim,
ack and enqueue then waits behind (Postgres gives the lock up only once it
notices a waiter, up to 20 ms later), and scans the table's tail backwards
first; a queue refills those pages with its next jobs. Measured here on a
drained table of 10,000 jobs, the vacuum took 3.2 ms of server CPU instead
of 4.3.

When to vacuum weighs two costs against each other, as a shop reorders stock
(the economic order quantity): a vacuum reads every page of every index, so
its cost grows with the backlog, not with the dead versions it removes; the
dead versions cost every claim statement a little until then, and that cost
grows with their number. So the store measures each vacuum's duration, adds up
what the claims since the last one have spent stepping over dead versions
(``STEP_S`` per dead version per claim statement), and vacuums again when that
sum reaches the last vacuum's duration. On a backlog of a million a vacuum took
0.07 s here (0.17 s the first time, which marks a freshly filled table's pages
all-visible), 7-16 ms on 10,000: after a 0.07 s vacuum, claims one at a time
wait for some 6,000 jobs, claims of 100 for some 60,000. A threshold of 2 %
of the table vacuumed every 15,000 jobs whatever the claim size, and held
claim_batch+ack_batch at 0.70-0.83x of its rate on a 10k backlog.
Until a store has timed a vacuum of its own, it takes one to cost
``FIRST_VACUUM_S``, a small table's.
Two bounds hold whatever the claims do: no vacuum before ``BASE_THRESHOLD``
dead versions, and one as soon as they pass ``CEILING_BASE`` plus
``CEILING_FACTOR`` of the live rows (``reltuples`` after each vacuum), so a
table that sees cancels and sweeps but no claims is vacuumed too.
Nothing here is a contract operation; a vacuum that fails (no ownership of the
table, a lost connection, a store closing) is logged and forgotten, and the
next threshold tries again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

logger = logging.getLogger(__name__)

BASE_THRESHOLD = 10_000
"""Dead row versions before any vacuum (about 5,000 jobs claimed and acked).

A vacuum of even a small table costs a few milliseconds of server time, so
vacuuming much more often slows a busy queue down more than the dead entries
do. Claims one at a time have spent ``FIRST_VACUUM_S`` well before this, so
their first vacuum comes here."""
FIRST_VACUUM_S = 0.004
"""What a store takes its first vacuum to cost, before it has timed one: a small table's.

Measured here: 3.6 ms of server CPU (3.8 ms of wall time) for the vacuum of a table that
10,000 jobs were stored in and 5,000 claimed and acked from, ``VACUUM``
alone on a quiet server. Taken as zero, the first vacuum would come at
``BASE_THRESHOLD`` whatever the claims: a store whose claims take 100 jobs
at a time has then spent some 0.5 ms stepping over dead versions, and its
vacuum, run while four workers claim, costs a 10,000-job burst 4-9 % of its
rate (``benchmarks/throughput.py``). A larger table's
first vacuum costs more (0.17 s on a million), so this errs towards vacuuming
early, which only costs time, never bloat."""
CEILING_BASE = 30_000
"""Dead row versions past which a vacuum runs whatever the claims have spent, on a table with no live rows.

Just above the point where claims of 100 first call for one (28,300, with
``FIRST_VACUUM_S``), so for them the claims' own cost decides the first
vacuum; past it, the ceiling bounds the bloat of claims that step over dead
versions too rarely to call for a vacuum (claims of hundreds on a small
table, whose later vacuums it brings) and of the dead versions no claim
steps over (cancels, sweeps). What it costs (``benchmarks/scale.py``): a
table of 10,000 jobs that a million went through, claimed 100 at a time,
took 10.6 MB with this ceiling, 5.7 MB with one of 10,000 and 17.3 MB with
one of 50,000; the claims on it ran as fast in all three."""
VACUUM_TIMEOUT_S = 600.0
"""The timeout of the vacuum's statements, given to asyncpg on each: the store's ``op_timeout_s`` bounds one job
statement (``alkstore_postgres.deadlines``), and a vacuum of a large table may rightly take longer."""
CEILING_FACTOR = 0.2
"""Dead row versions per live row past which a vacuum runs whatever the claims have spent: bounds the bloat."""
STEP_S = 2e-9
"""Seconds one claim statement spends per dead row version left since the last vacuum.

Measured on Postgres 15 here: claim_one+ack on a backlog of a million, with
the vacuum off, in blocks of 4,000 jobs, ran at 1,087 jobs/s in the first
block and at 955 and 986/s in the blocks that began with 48,000 and 56,000
dead versions behind them: 0.11 ms more per claim over some 56,000."""


class Connections(Protocol):
    """Where the vacuum gets its connection: the store's ``HeldConnections``."""

    def connection(self) -> AbstractAsyncContextManager[Any]: ...


class Upkeep:
    """One store's vacuum of its jobs table: counted, triggered, at most one in flight."""

    def __init__(self, connections: Connections, table: str) -> None:
        self._connections = connections
        self._vacuum_sql = f"VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON, TRUNCATE false) {table}"
        self._table = table
        self._dead = 0
        self._spent_s = 0.0
        self._last_vacuum_s = FIRST_VACUUM_S
        self._ceiling = CEILING_BASE
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.vacuums = 0
        """Vacuums that completed (for tests and benchmarks)."""

    def note(self, dead_versions: int) -> None:
        """Count row versions a statement just left dead; start a vacuum if one is due."""
        self._dead += max(dead_versions, 0)
        if self._closed or not self.due() or (self._task is not None and not self._task.done()):
            return
        self._dead = 0
        self._spent_s = 0.0
        self._task = asyncio.get_running_loop().create_task(self._vacuum())

    def claimed(self, taken: int) -> None:
        """A claim statement ran: it stepped over the dead versions so far, and left ``taken`` more."""
        self._spent_s += STEP_S * self._dead
        self.note(taken)

    def due(self) -> bool:
        """Past the floor, and the claims spent as long as the last vacuum took, or past the ceiling."""
        if self._dead < BASE_THRESHOLD:
            return False
        return self._spent_s >= self._last_vacuum_s or self._dead >= self._ceiling

    async def _vacuum(self) -> None:
        """Vacuum, then again at once while another is due.

        The versions left dead while a vacuum ran may already call for the
        next one; waiting for the next statement to notice would leave them in
        the claims' path for as long as the store stays quiet.
        """
        while True:
            try:
                async with self._connections.connection() as conn:
                    started = time.perf_counter()
                    await conn.execute(self._vacuum_sql, timeout=VACUUM_TIMEOUT_S)
                    took = time.perf_counter() - started
                    live = await conn.fetchval(
                        "SELECT reltuples FROM pg_class WHERE oid = $1::regclass", self._table, timeout=VACUUM_TIMEOUT_S
                    )
            except Exception as exc:
                logger.warning("alkstore: VACUUM of %s failed, retried after more jobs: %r", self._table, exc)
                return
            self.vacuumed(took, float(live or 0))
            if self._closed or not self.due():
                return
            self._dead = 0
            self._spent_s = 0.0

    def vacuumed(self, took_s: float, live_rows: float) -> None:
        """A vacuum took ``took_s`` and left ``live_rows`` (``reltuples``; -1 if never counted): the next trigger."""
        self.vacuums += 1
        self._last_vacuum_s = took_s
        self._ceiling = CEILING_BASE + int(CEILING_FACTOR * max(live_rows, 0.0))

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
