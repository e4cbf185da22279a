"""Our SQLite engine through its worker runtime (docs/worker.md), judged as any library is (docs/runtime-faults.md).

The worker is ``alkstore worker tasks:app`` with one job at a time and a sweep every second; the queue's visibility
timeout is 3 s, so a worker's heartbeat (a third of it) keeps a live lease and a dead worker's job is claimed again
3 s after its last heartbeat. Its app's ``on_settled`` hook (``alkstore_faults.ours``) writes the ledger's ``ack``
record, so a late completion is seen accepted or refused.
"""

from __future__ import annotations

import sys

from tasks import app, run_job

from alkstore_faults.ours import describe, serve

DESCRIPTION = describe(
    "sqlite",
    source_settings=[],
    faults=["kill9", "startup", "pause", "slow_handler"],
    recovery_window_s=10.0,
    caveats=[],
    schedule_faults=["kill9", "pause"],
)


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, app, run_job))
