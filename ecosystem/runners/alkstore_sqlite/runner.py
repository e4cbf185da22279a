"""Our SQLite engine through its worker runtime (docs/worker.md), judged as any library is (docs/runtime-faults.md).

The worker is ``alkstore worker tasks:app`` with one job at a time and a sweep every second; the queue's visibility
timeout is 3 s, so a worker's heartbeat (a third of it) keeps a live lease and a dead worker's job is claimed again
3 s after its last heartbeat. Its app's ``on_settled`` hook (``alkstore_faults.ours``) writes the ledger's ``ack``
record, so a late completion is seen accepted or refused.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

from tasks import app, run_job

from alkstore_faults.ours import WORKER_DOC as WORKER
from alkstore_faults.ours import serve

DESCRIPTION = {
    "library": "alkstore worker + sqlite",
    "version": version("alkstore"),
    "settings": [
        {"name": "QueueOpts(visibility_timeout_s=...)", "value": 3.0, "doc": WORKER + "#an-app-and-its-tasks"},
        {"name": "alkstore worker --concurrency", "value": 1, "doc": WORKER + "#alkstore-worker"},
        {"name": "alkstore worker --sweep-interval", "value": 1, "doc": WORKER + "#alkstore-worker"},
    ],
    "lease_s": 3.0,
    "recovery_window_s": 10.0,
    "faults": ["kill9", "pause", "slow_handler"],
    "promises": [
        {
            "outcome": "lost",
            "faults": ["kill9", "pause", "slow_handler"],
            "max": 0,
            "quote": "the unfinished jobs come back when their leases lapse, as after a crash",
            "doc": WORKER + "#stopping-sigterm-and-sigint",
        },
        {
            "outcome": "concurrent",
            "faults": ["slow_handler"],
            "max": 0,
            "quote": "keeps its lease: a heartbeat every third of the job's visibility timeout (H3).",
            "doc": WORKER + "#how-a-job-runs",
        },
        {
            "outcome": "stale",
            "faults": ["kill9", "pause", "slow_handler"],
            "max": 0,
            "quote": "After a lapse and a reclaim, the old handle's ops return `False` and the new holder's succeed.",
            "doc": "docs/contract.md#h--handle-operations",
        },
    ],
    "caveats": [],
}


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, app, run_job))
