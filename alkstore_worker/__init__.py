"""alkstore's worker runtime: tasks, ``defer``, and ``alkstore worker`` over any certified engine.

It uses only the public ``Store``/``Queue``/``JobHandle`` surface to run
jobs, so it runs on SQLite, Postgres, mem or a third party's engine; what is
engine-specific (a wake-up channel, a sweep lock, listing dead letters) is in
``alkstore_worker.sources``. It imports nothing of the conformance suite.
docs/worker.md is its guide.
"""

from alkstore_worker.app import App, JobContext, Task, TaskOptions
from alkstore_worker.events import Counters, Settlement
from alkstore_worker.runtime import Worker, WorkerOptions
from alkstore_worker.sources import DeadJob, MemSource, PostgresSource, SqliteSource, StoreSource

__all__ = [
    "App",
    "Counters",
    "DeadJob",
    "JobContext",
    "MemSource",
    "PostgresSource",
    "Settlement",
    "SqliteSource",
    "StoreSource",
    "Task",
    "TaskOptions",
    "Worker",
    "WorkerOptions",
]
