"""alkstore's worker runtime: tasks, ``defer``, and ``alkstore worker`` over any certified engine.

It uses only the public ``Store``/``Queue``/``JobHandle`` surface to run
jobs, so it runs on SQLite, Postgres, mem or a third party's engine; what is
engine-specific (a wake-up channel, a sweep lock, listing dead letters) each
engine package keeps in its worker source (``alkstore_sqlite.SqliteSource``,
``alkstore_postgres.PostgresSource``, ``alkstore_mem.MemSource``), whose shape
``alkstore_worker.sources`` states. It imports no engine and nothing of the
conformance suite. docs/worker.md is its guide.
"""

import importlib
import warnings

from alkstore_worker.app import App, DeferKeywords, JobContext, Task, TaskKeywords, TaskOptions
from alkstore_worker.events import Counters, Settlement
from alkstore_worker.periodic import PeriodicUnsupported, tick_of
from alkstore_worker.runtime import Worker, WorkerOptions
from alkstore_worker.schedules import Cron, Every, Schedule
from alkstore_worker.sources import DeadJob, StoreSource, WorkerSource

__all__ = [
    "App",
    "Counters",
    "Cron",
    "DeadJob",
    "DeferKeywords",
    "Every",
    "JobContext",
    "PeriodicUnsupported",
    "Schedule",
    "Settlement",
    "StoreSource",
    "Task",
    "TaskKeywords",
    "TaskOptions",
    "Worker",
    "WorkerOptions",
    "WorkerSource",
    "tick_of",
]

_MOVED_TO_ENGINES = {
    "SqliteSource": "alkstore_sqlite",
    "PostgresSource": "alkstore_postgres",
    "MemSource": "alkstore_mem",
}
"""The engines' sources, which this package exported until 0.2: each lives in its engine now (the worker imports
no engine); the old name still imports, with a warning, until 0.3. The engine is imported only when asked for."""


def __getattr__(name: str) -> object:
    engine = _MOVED_TO_ENGINES.get(name)
    if engine is None:
        raise AttributeError(f"module 'alkstore_worker' has no attribute {name!r}")
    warnings.warn(
        f"alkstore_worker.{name} moved to {engine}.{name}: import it from there "
        "(the old path stops working in alkstore 0.3; see CHANGELOG.md)",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(engine), name)
