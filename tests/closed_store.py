"""The engines' own closed-store test: every op of a closed store raises ``StoreClosed`` (contract S3)."""

from __future__ import annotations

import pytest

from alkstore_contract import JobHandle, Queue, Store, StoreClosed
from alkstore_contract.types import JobId


async def close_holding_a_claim(store: Store, unclaimed: int = 0) -> tuple[Queue, JobHandle, JobId]:
    """Enqueue ``"x"`` on queue ``q`` (and ``unclaimed`` more behind it), claim it as ``w``, then close the store.

    It closes twice (a second close does nothing), checks that the store says it is closed and refuses a new
    queue, and returns the queue, the claim's handle and the claimed job's id: what ``assert_every_op_refused``
    tries next, and what the caller checks the store still holds.
    """
    queue = store.queue("q")
    job_id = await queue.enqueue("x")
    for _ in range(unclaimed):
        await queue.enqueue("y")
    handle = await queue.claim_one("w")
    assert handle is not None
    await store.close()
    await store.close()
    assert store.closed
    with pytest.raises(StoreClosed):
        store.queue("q")
    return queue, handle, job_id


async def assert_every_op_refused(queue: Queue, handle: JobHandle, job_id: JobId) -> None:
    """Every queue and handle op of ``queue``'s closed store raises ``StoreClosed``.

    One list for every engine's test, so an op added to the surface is added
    to all of them at once; what the store still holds the caller checks, in
    its engine's own terms.
    """
    refused = [
        queue.enqueue("z"),
        queue.enqueue_many(["z"]),
        queue.claim_one("w"),
        queue.claim_batch("w", 1),
        queue.ack_batch([]),
        queue.cancel(job_id),
        queue.get_job(job_id),
        queue.sweep_expired(),
        handle.ack(),
        handle.retry(),
        handle.fail(),
        handle.heartbeat(),
    ]
    for op in refused:
        with pytest.raises(StoreClosed):
            await op
