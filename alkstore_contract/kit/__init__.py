"""The engine kit: the public surface written once over a narrow storage driver (docs/certify-your-engine.md).

Part of the kit.

An engine implements ``StorageDriver`` (insert, claim, the fenced handle
updates, batch ack, cancel, get, sweep, close) and opens ``KitStore(driver,
clock=..., seed=...)``; the kit does the rest the contract asks of every
engine in the same way.
"""

from alkstore_contract.kit.driver import (
    AcksClaims,
    HeartbeatsClaims,
    ReleasingDriver,
    StorageDriver,
    StoredState,
    TransactionalDriver,
    UniqueDriver,
    c2_order_key,
    claimable,
    duration_us,
    int_job_id,
    int_job_ids,
    job_from_row,
    jobs_from_rows,
)
from alkstore_contract.kit.fast import new_job
from alkstore_contract.kit.front import KitJobHandle, KitQueue, KitStore
from alkstore_contract.resolution import NewJobs

__all__ = [
    "AcksClaims",
    "HeartbeatsClaims",
    "KitJobHandle",
    "KitQueue",
    "KitStore",
    "NewJobs",
    "ReleasingDriver",
    "StorageDriver",
    "StoredState",
    "TransactionalDriver",
    "UniqueDriver",
    "c2_order_key",
    "claimable",
    "duration_us",
    "int_job_id",
    "int_job_ids",
    "job_from_row",
    "jobs_from_rows",
    "new_job",
]
