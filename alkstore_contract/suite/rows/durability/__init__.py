"""Row durability (contract P3): committed writes survive a close and reopen, and a kill -9 and reopen.

Part of the suite.

Unrelated legs, each on its own fresh location and in its own module:
``reopen`` (a store closes politely; a reopened store must read back every job
exactly as the engine showed it before the close), ``kill`` (worker processes
doing a seeded churn of ops are SIGKILLed at seeded moments; every job they
reported must read back as the engine showed it right after its last reported
op, the op in flight either way), ``at_ack`` (workers kill themselves and their
engine processes right after the acknowledgement of a write, with no read
before it; what the suite was told must read back) and, for a ``networked`` engine
only, ``server_crash`` (the same churn while the engine's *server* is killed -9
and restarted right after the acknowledgement of a write, through the adapter's
server-crash hook; an engine whose
storage lives in its own process is crashed by the kill leg already). Each
module's docstring says what its leg does. The expectation is the engine's
own read before the close or the kill, or, where the kill follows an
acknowledgement, what the op returned; never what an op should have done:
whether a retry, fail or cancel did what R1, D1 or B2 demand is checked by
the rows of those clauses, so P3 fails only on a write the engine showed and
then lost (or a removal it showed and then undid).

When it fails (the message names each field that differs from the engine's own
earlier read, and the op after which it showed it), check that every op has committed before it returns (no write
left in an open or implicit transaction — Python's sqlite3 opens one before DML
unless autocommit — no group commit acknowledged early, no write buffered in
memory or in a background task); that ``close`` neither discards nor deletes
anything; that the reopen reads the same location (not a fresh or private
copy); and that ids are never reused after a delete. A process crash cannot
lose a transaction whose COMMIT returned on SQLite or Postgres whatever the
``synchronous`` setting (that only matters for power loss), so a loss here is
an op that returned before it committed.
"""

from __future__ import annotations

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.suite.rows.durability.at_ack import leg_kill_at_ack
from alkstore_contract.suite.rows.durability.kill import leg_kill
from alkstore_contract.suite.rows.durability.reopen import leg_close_and_reopen
from alkstore_contract.suite.rows.durability.server_crash import leg_server_crash

CLAUSE = "P3"


async def durability(ctx: RowContext) -> None:
    """P3: every committed enqueue, ack, retry, fail and cancel survives a close, a kill -9, a server crash."""
    await ctx.leg("close and reopen", (CLAUSE,), leg_close_and_reopen)
    await ctx.leg("kill -9 and reopen", (CLAUSE,), leg_kill)
    await ctx.leg("kill -9 at the acknowledgement", (CLAUSE,), leg_kill_at_ack)
    if ctx.has(Capability.NETWORKED):
        await ctx.leg("server crash and restart", (CLAUSE,), leg_server_crash)


ROW = row("durability", (CLAUSE,), requires=(Capability.DURABLE,))(durability)
