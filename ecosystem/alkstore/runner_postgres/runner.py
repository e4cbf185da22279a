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

from alkstore_ecosystem_kit.runner_description import every_fault
from tasks import app, run_job

from alkstore_faults.ours import WORKER_DOC, describe, serve

DESCRIPTION = describe(
    "postgres",
    source_settings=[
        {"name": "PostgresSource(notify=...)", "value": True, "doc": WORKER_DOC + "#waking-up-and-sweeping"},
    ],
    faults=every_fault("postgres"),
    recovery_window_s=15.0,
    caveats=[
        {
            "outcome": "twice",
            "faults": ["broker_restart", "net_cut"],
            "quote": "the job runs again once its lease lapses, so a handler must tolerate a second run",
            "doc": WORKER_DOC + "#how-a-job-runs",
        }
    ],
    schedule_faults=["kill9", "pause", "broker_restart", "net_cut"],
)


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, app, run_job))
