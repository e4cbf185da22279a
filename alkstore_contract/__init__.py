"""alkstore's job-queue contract: the surface, the rules every engine shares, and the suite."""

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
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import Job, JobState, QueueOpts
from alkstore_contract.validation import Duration, JobId

CONTRACT_VERSION = "1.0"

__all__ = [
    "CONTRACT_VERSION",
    "AlkstoreError",
    "Capability",
    "Clock",
    "Duration",
    "EngineAdapter",
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
    "Store",
    "StoreClosed",
    "StoreUnavailable",
    "SystemClock",
]
