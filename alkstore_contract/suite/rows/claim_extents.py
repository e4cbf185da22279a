"""Row claim_extents (contract C5, C6): batch sizes at and below zero, and who may claim.

Part of the suite.

When it fails, check the entry of ``claim_batch``: ``n <= 0`` must return
``[]`` before any storage is touched (an SQL ``LIMIT -1`` means "no limit" and
claims the whole queue), and ``worker_id`` must be checked before anything else.
"""

from __future__ import annotations

from alkstore_contract.errors import InvalidName
from alkstore_contract.suite.checks import expect, expect_ids, expect_raises, expect_ready
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row

JOBS = 5


async def claim_extents(ctx: RowContext) -> None:
    """C5: n ≤ 0 claims nothing and touches no job; n > 0 returns up to n in C2 order. C6: worker ids."""
    store = await ctx.open_store()
    queue = store.queue("extents")
    ids = [await queue.enqueue({"n": i}) for i in range(JOBS)]

    for n in (0, -1, -(2**31)):
        got = await queue.claim_batch("w", n)
        expect_ids(got, [], "C5", f"the ids claim_batch('w', {n}) handed out")
    for job_id in ids:
        await expect_ready(
            queue, job_id, 0, "C5", after="claim_batch with n ≤ 0", demands="n ≤ 0 to claim nothing and touch no job"
        )

    for bad in ("", None, 7, b"w"):
        await expect_raises(queue.claim_one(bad), InvalidName, "C6", f"claim_one(worker_id={bad!r})")  # type: ignore[arg-type]
        await expect_raises(queue.claim_batch(bad, 2), InvalidName, "C6", f"claim_batch(worker_id={bad!r}, 2)")  # type: ignore[arg-type]

    first = await queue.claim_batch("w", 3)
    expect_ids(first, ids[:3], "C5", "the ids claim_batch('w', 3) returned, in order")
    rest = await queue.claim_batch("w", 10)
    expect_ids(rest, ids[3:], "C5", "the ids claim_batch('w', 10) returned from 2 left")
    drained = await queue.claim_batch("w", 10)
    expect_ids(drained, [], "C5", "the ids claim_batch handed out from a drained queue")
    expect(await queue.claim_one("w") is None, "C5", did="handed out a job from a drained queue", demands="None")


ROW = row("claim_extents", ("C5", "C6"))(claim_extents)
