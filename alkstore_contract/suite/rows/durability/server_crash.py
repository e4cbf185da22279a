"""Leg "server crash and restart" of row durability (contract P3): a networked engine's server killed -9 loses nothing.

Part of the suite.

For an engine whose storage is a server, the writes that matter are the
server's: a kill -9 of the engine's own process (the kill leg) proves nothing
about what the server keeps. This leg runs only on an engine that declares
``networked``; its adapter must also be a ``CrashableServerAdapter``
(``alkstore_contract.adapter``), or the leg fails P3 saying so — a networked
engine's ``durable`` cannot be checked without crashing its server, and a
declaration the suite cannot check is not certified.

A burst worker process (the ``at_ack`` leg's: a seeded mix of writes, each
reported by what it returned, no read in between) writes to a location on a
server the adapter owns (``create_crashable_location``). Right after the
acknowledgement of its last write (of a kind the seed picks) the worker
stops its own process group (SIGSTOP: the engine's processes with it), so
nothing of the engine runs until the suite has crashed the server
(``crash_server``: every server process SIGKILLed at once); then the worker
is killed, the server restarted (``restart_server``, within the adapter's
``restart_within_s`` and ``RESTART_SLACK_S``) and the location reopened: every
job must read back as the suite was told (``at_ack.told_problem``), nothing
else stored. A commit the server acknowledged but did not keep, or a write the
engine answered before its commit reached the server, shows as a job lost or
undone.

When it fails, check that the server keeps what it committed (no unlogged or
in-memory tables, no persistence switched off: a Redis without AOF or RDB
snapshots keeps nothing across a crash), and that an op returns only once the
server committed it.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from alkstore_contract.adapter import CrashableServerAdapter
from alkstore_contract.suite.checks import expect
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.rows.durability.at_ack import (
    CLAUSE,
    OPS_BEFORE,
    WRITE_KINDS,
    a_write,
    judge_told,
    run_burst,
)

RESTART_SLACK_S = 10.0
"""Allowance over the adapter's ``restart_within_s`` for a busy machine (a bound, not a benchmark)."""
CRASH_TIMEOUT_S = 30.0
"""How long ``crash_server`` may take to report the server down."""
WORKER = "crash0"


def crashable(ctx: RowContext) -> CrashableServerAdapter:
    """The row's adapter as a ``CrashableServerAdapter``; a networked ``durable`` engine without the hook fails P3."""
    adapter = ctx.adapter
    expect(
        isinstance(adapter, CrashableServerAdapter),
        CLAUSE,
        did="declares 'durable' and 'networked', but its adapter lacks the server-crash hook "
        "(create_crashable_location, crash_server, restart_server, restart_within_s), so nothing can check that "
        "its server keeps committed writes across a crash",
        demands="a networked engine's durability checked by crashing its server (kill -9) and restarting it; "
        "declare 'durable' only with the hook (docs/capabilities.md)",
    )
    assert isinstance(adapter, CrashableServerAdapter)
    return adapter


async def _bounded(what: str, operation: Any, limit_s: float) -> None:
    """Await one of the adapter's crash hooks for at most ``limit_s``; one that does not return fails P3."""
    try:
        await asyncio.wait_for(operation, limit_s)
    except TimeoutError:
        expect(
            False,
            CLAUSE,
            did=f"did not return from {what} within {limit_s:.0f} s",
            demands="the adapter's crash hooks to return in bounded time (restart_server within restart_within_s)",
        )


async def leg_server_crash(ctx: RowContext) -> None:
    """One burst worker on a crashable location, stopped at an acknowledgement; its server crashes, restarts."""
    adapter = crashable(ctx)
    location = await adapter.create_crashable_location()
    ctx.adopt_location(location)
    rng = random.Random(ctx.seed * 37)
    last = WRITE_KINDS[rng.randrange(len(WRITE_KINDS))]
    stopped = await run_burst(
        ctx, location, worker=WORKER, churn_seed=ctx.seed * 37 + 1, ops=rng.randint(*OPS_BEFORE), last=last, then="stop"
    )
    try:
        await _bounded("crash_server()", adapter.crash_server(location), CRASH_TIMEOUT_S)
    finally:
        await stopped.kill()
    limit_s = adapter.restart_within_s + RESTART_SLACK_S
    loop = asyncio.get_running_loop()
    restarted_at = loop.time()
    await _bounded("restart_server()", adapter.restart_server(location), limit_s)
    took_s = loop.time() - restarted_at
    await judge_told(ctx, "server crash (kill -9 of the server) and restart", stopped.burst, location)
    ctx.note(
        f"server crash leg: the server was killed -9 right after the engine acknowledged {a_write(last)} "
        f"({stopped.burst.ops} told ops) and back in {took_s:.1f} s"
    )
