"""The real clock's tick, measured on the host when the session starts.

Part of the suite.

On the system clock a row's leases, backoffs and retentions are a few ticks
long, and the row must finish its checks inside them. A fixed tick that suits
a quiet machine makes a loaded one look like a broken engine; so the session
measures how slow the host is now — how late an asyncio timer fires and how
long a Python child process takes to start (the multi-process rows start
several) — and chooses a tick long enough for both. ``--alkstore-tick``
overrides the measurement; either way the header and the report show it.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time

from alkstore_contract.suite.harness import SYSTEM_UNIT_S

LONGEST_TICK_S = 5.0
"""A host slower than this is reported by legs as inconclusive rather than waited on for minutes."""
TIMER_SAMPLES = 20
CHILD_SAMPLES = 3


async def _timer_lateness() -> float:
    """How late a 5 ms asyncio sleep wakes up, at the 90th percentile of ``TIMER_SAMPLES``."""
    late: list[float] = []
    for _ in range(TIMER_SAMPLES):
        started = time.monotonic()
        await asyncio.sleep(0.005)
        late.append(time.monotonic() - started - 0.005)
    return statistics.quantiles(late, n=10)[-1]


def _child_start() -> float:
    """The median time a Python child process takes to start, import the contract and exit."""
    took: list[float] = []
    for _ in range(CHILD_SAMPLES):
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", "import alkstore_contract.suite.worker"], check=False, capture_output=True
        )
        took.append(time.monotonic() - started)
    return statistics.median(took)


def measure_tick() -> tuple[float, str]:
    """The tick for this host, and how it was found (for the header and the report)."""
    lateness = asyncio.run(_timer_lateness())
    child = _child_start()
    tick = min(LONGEST_TICK_S, max(SYSTEM_UNIT_S, 2.0 * child, 40.0 * lateness))
    return round(tick, 2), f"measured: timer lateness p90 {lateness * 1000:.1f} ms, child start {child:.2f} s"
