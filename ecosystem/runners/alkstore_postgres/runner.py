"""Our Postgres engine through its worker runtime (docs/worker.md), judged as any library is (docs/runtime-faults.md).

The worker is ``alkstore worker tasks:app`` on a throwaway Postgres cluster, with one job at a time, a sweep every
second and LISTEN/NOTIFY wake-ups; the queue's visibility timeout is 3 s, so a worker's heartbeat (a third of it)
keeps a live lease and a dead worker's job is claimed again 3 s after its last heartbeat. Beside the SQLite runner's
faults it takes the server's crash and restart and a cut of every connection: the store's pool reconnects, a
heartbeat or ack that fails meanwhile is logged, and the lease decides who runs the job next. Its app's
``on_settled`` hook (``alkstore_faults.ours``) writes the ledger's ``ack`` records. Its fencing promise (``stale``)
covers the faults where an ack cannot be in doubt; under a server restart or a cut an ack may raise, and whether it
took effect is then unknown (contract N3), so a late completion there may stay unobserved.
"""

from __future__ import annotations

import sys
from importlib.metadata import version

from tasks import app, run_job

from alkstore_faults.ours import WORKER_DOC as WORKER
from alkstore_faults.ours import serve

LOST = "the unfinished jobs come back when their leases lapse, as after a crash"
DESCRIPTION = {
    "library": "alkstore worker + postgres",
    "version": version("alkstore"),
    "settings": [
        {"name": "QueueOpts(visibility_timeout_s=...)", "value": 3.0, "doc": WORKER + "#an-app-and-its-tasks"},
        {"name": "PostgresSource(notify=...)", "value": True, "doc": WORKER + "#waking-up-and-sweeping"},
        {"name": "alkstore worker --concurrency", "value": 1, "doc": WORKER + "#alkstore-worker"},
        {"name": "alkstore worker --sweep-interval", "value": 1, "doc": WORKER + "#alkstore-worker"},
    ],
    "lease_s": 3.0,
    "recovery_window_s": 15.0,
    "faults": ["kill9", "pause", "broker_restart", "net_cut", "slow_handler"],
    "promises": [
        {
            "outcome": "lost",
            "faults": ["kill9", "pause", "broker_restart", "net_cut", "slow_handler"],
            "max": 0,
            "quote": LOST,
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
    "caveats": [
        {
            "outcome": "twice",
            "faults": ["broker_restart", "net_cut"],
            "quote": "the job runs again once its lease lapses, so a handler must tolerate a second run",
            "doc": WORKER + "#how-a-job-runs",
        }
    ],
}


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, app, run_job))
