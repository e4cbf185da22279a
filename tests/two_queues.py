"""The engines' own batch-ack, cancel and isolation tests start alike: two queues, one holding a claimed batch.

Contract B1, B2 and S4 are about which queue's jobs an op may touch, so each
test needs a queue with jobs held and ready beside another queue's job.
"""

from __future__ import annotations

from typing import NamedTuple

from alkstore_contract import JobHandle, Queue, QueueOpts, Store
from alkstore_contract.types import JobId


class TwoQueues(NamedTuple):
    queue: Queue
    """Queue ``a`` (a 10 s visibility timeout): four jobs, the first three claimed by ``w``."""
    other: Queue
    """Queue ``b``: one job, ``foreign``, not claimed."""
    ids: list[JobId]
    foreign: JobId
    handles: list[JobHandle]


async def three_of_four_claimed(store: Store) -> TwoQueues:
    """Enqueue four jobs on ``a`` and one on ``b``, then claim a batch of three on ``a`` as worker ``w``."""
    queue = store.queue("a", QueueOpts(visibility_timeout_s=10))
    other = store.queue("b")
    ids = await queue.enqueue_many(["p1", "p2", "p3", "ready"])
    foreign = await other.enqueue("foreign")
    handles = await queue.claim_batch("w", 3)
    return TwoQueues(queue, other, ids, foreign, handles)
