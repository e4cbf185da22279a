"""alkstore's job-queue contract, its engine kit, its conformance suite, its report and its wire protocol.

The package has five parts, and the tree shows them:

- **the contract** — this package's own modules: ``types``, ``surface``, ``errors``,
  ``clock``, ``adapter``, ``validation``, ``resolution``, ``backoff``, ``handles``,
  ``instants``. What an engine and its adapter import; docs/api.md lists every public name.
- **the kit** — ``alkstore_contract.kit``: the public surface written once over a
  narrow storage driver.
- **the suite** — ``alkstore_contract.suite``: the pytest plugin, the rows and
  everything that runs them. It judges engines; no engine imports it.
- **the report** — ``alkstore_contract.report``: the JSON report, the matrix and
  the ``alkstore`` command. It reads the suite only through what the suite
  publishes (``alkstore_contract.report.model``; ``tests/test_boundaries.py``).
- **the wire** — ``alkstore_contract.wire``: the wire protocol, with which the
  suite certifies an engine written in any language as a process.
"""

from importlib.metadata import PackageNotFoundError, version

from alkstore_contract import _moved
from alkstore_contract.adapter import Capability, EngineAdapter
from alkstore_contract.clock import Clock, ManualClock, SystemClock
from alkstore_contract.errors import (
    AlkstoreError,
    HandleSpent,
    InvalidArgument,
    InvalidName,
    PayloadError,
    StoreClosed,
    StoreUnavailable,
)
from alkstore_contract.surface import (
    JobHandle,
    Queue,
    ReleasableJobHandle,
    Store,
    TransactionalQueue,
    UniqueQueue,
)
from alkstore_contract.types import Duration, Enqueued, EnqueueKeywords, Job, JobId, JobState, QueueOpts

try:
    __version__ = version("alkstore")
    """The package's version (semantic versioning; CHANGELOG.md), read from its installed metadata."""
except PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"

CONTRACT_VERSION = "2.1"
"""The contract's own version (docs/contract.md): its major grows when a clause is removed or changed
incompatibly, its minor when one is added (docs/api.md, "Versions")."""

_moved.install()

__all__ = [
    "CONTRACT_VERSION",
    "AlkstoreError",
    "Capability",
    "Clock",
    "Duration",
    "EngineAdapter",
    "EnqueueKeywords",
    "Enqueued",
    "HandleSpent",
    "InvalidArgument",
    "InvalidName",
    "Job",
    "JobHandle",
    "JobId",
    "JobState",
    "ManualClock",
    "PayloadError",
    "Queue",
    "QueueOpts",
    "ReleasableJobHandle",
    "Store",
    "StoreClosed",
    "StoreUnavailable",
    "SystemClock",
    "TransactionalQueue",
    "UniqueQueue",
    "__version__",
]
