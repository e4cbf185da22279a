"""Leg "server crash and restart" of row durability (contract P3): a networked engine's server killed -9 loses nothing.

Part of the suite.

For an engine whose storage is a server, the writes that matter are the
server's: a kill -9 of the engine's own process (the kill leg) proves nothing
about what the server keeps. This leg runs only on an engine that declares
``networked``; its adapter must also be a ``CrashableServerAdapter``
(``alkstore_contract.adapter``), or the leg fails P3 saying so — a networked
engine's ``durable`` cannot be checked without crashing its server, and a
declaration the suite cannot check is not certified.

A churn worker process (the kill leg's: a seeded mix of enqueue, claim, ack,
retry, fail and cancel, each reported once it returned) writes to a location
on a server the adapter owns (``create_crashable_location``). Right after a
seeded number of reported ops the suite crashes the server
(``crash_server``: every server process SIGKILLed at once), kills the worker,
restarts the server (``restart_server``, within the adapter's
``restart_within_s`` and ``RESTART_SLACK_S``), reopens the location and checks
every reported job as the kill leg does: exactly as the engine's own
``get_job`` showed it right after its last reported op (gone if it was gone),
the op in flight at the crash either way, nothing else stored.

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
from alkstore_contract.suite.rows.durability.kill import (
    CLAUSE,
    churn_until,
    kill_worker,
    verify_round,
)

CRASH_AFTER_OPS = (10, 60)
"""The server is crashed right after the worker reported this many ops (a seeded draw)."""
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
    """One churn worker on a crashable location; its server crashes at a seeded moment, restarts, and is checked."""
    adapter = crashable(ctx)
    location = await adapter.create_crashable_location()
    ctx.adopt_location(location)
    crash_after = random.Random(ctx.seed).randint(*CRASH_AFTER_OPS)
    churn = await churn_until(ctx, location, WORKER, ctx.seed * 37 + 1, crash_after, "the server crash")
    await _bounded("crash_server()", adapter.crash_server(location), CRASH_TIMEOUT_S)
    await kill_worker(churn.process, churn.reader)
    replay = churn.replay()
    limit_s = adapter.restart_within_s + RESTART_SLACK_S
    loop = asyncio.get_running_loop()
    restarted_at = loop.time()
    await _bounded("restart_server()", adapter.restart_server(location), limit_s)
    took_s = loop.time() - restarted_at
    await verify_round(ctx, "server crash (kill -9 of the server) and restart", replay, location)
    ctx.note(
        f"server crash leg: the server was killed -9 after {replay.reported} reported ops and back in {took_s:.1f} s; "
        f"op in flight at the crash: {replay.in_flight['op'] if replay.in_flight else 'none'}"
    )
