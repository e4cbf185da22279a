"""The app the periodic-task tests run in real ``alkstore worker`` processes (``tests.periodic_app:app``).

One periodic task, ``beat``, every ``$ALKSTORE_PERIODIC_TEST_EVERY`` seconds (default 1) on queue ``ticks``, over
the store ``tests.worker_app`` reads from ``$ALKSTORE_WORKER_TEST_STORE``. Its handler appends one JSON line per
run to ``$ALKSTORE_WORKER_TEST_LOG`` — the tick it ran for, the process, the wall time — so a test counts runs per
tick from the handlers' own ledger, not from the worker's log.

``unsupported:app`` is the same task over a kit store whose driver was written for contract 2.0 (no
``insert_unique``): an engine that does not declare ``unique_keys``, which the worker must refuse at start.
"""

from __future__ import annotations

import json
import os
import time
from typing import cast

from alkstore_mem import MemDriver
from alkstore_mem.space import space_named

from alkstore_contract import SystemClock
from alkstore_contract.kit import KitStore, StorageDriver
from alkstore_contract.surface import Store
from alkstore_worker import App, StoreSource
from tests.test_kit_2_0_driver import Driver20
from tests.worker_app import LOG_ENV, STORE_ENV, source_from

EVERY_ENV = "ALKSTORE_PERIODIC_TEST_EVERY"
QUEUE = "ticks"


async def beat(payload: dict[str, str]) -> None:
    """Record this run's tick in the ledger."""
    _append({"tick": payload["tick"], "pid": os.getpid(), "wall": time.time()})


def _append(record: dict[str, object]) -> None:
    """One ``write`` of one line in append mode, so the lines of several processes never mix."""
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as ledger:
        ledger.write(json.dumps(record) + "\n")


async def _open_2_0() -> Store:
    return KitStore(cast(StorageDriver, Driver20(MemDriver(space_named("periodic-2-0")))), clock=SystemClock(), seed=1)


app = App(source_from(os.environ.get(STORE_ENV, "sqlite:periodic-test.sqlite3")))
app.periodic(every=float(os.environ.get(EVERY_ENV, "1")), queue=QUEUE)(beat)

unsupported = App(StoreSource(_open_2_0, "a contract 2.0 kit store"))
unsupported.periodic(every=1, queue=QUEUE)(beat)
