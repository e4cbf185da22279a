"""A kit engine written for contract 2.0 keeps working, and refuses the 2.1 ops it never declared.

Deprecate, never break: ``StorageDriver`` gained nothing; ``release``,
``insert_unique`` and ``insert_in`` live on protocols of their own
(``ReleasingDriver``, ``UniqueDriver``, ``TransactionalDriver``). On a driver
without them the kit's ``release``, ``enqueue_unique`` and ``enqueue_in`` raise
``NotImplementedError`` naming the capability, after the argument checks, and
a refused ``release`` does not spend the handle.
"""

from __future__ import annotations

from typing import cast

import pytest
from alkstore_mem import MemDriver
from alkstore_mem.space import space_named

from alkstore_contract import InvalidArgument, ManualClock
from alkstore_contract.kit import KitStore, StorageDriver

NEW_IN_2_1 = frozenset({"release", "insert_unique", "insert_in", "transaction_problem"})


class Driver20:
    """A driver with exactly the 2.0 ``StorageDriver`` methods (the mem engine's, the 2.1 ones hidden)."""

    def __init__(self, inner: MemDriver) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        if name in NEW_IN_2_1:
            raise AttributeError(name)
        return getattr(self._inner, name)


@pytest.mark.asyncio
async def test_a_2_0_driver_serves_2_0_and_refuses_the_2_1_ops_naming_the_capability() -> None:
    driver = cast(StorageDriver, Driver20(MemDriver(space_named("kit-2-0"))))
    store = KitStore(driver, clock=ManualClock(), seed=1)
    queue = store.queue("old")
    job_id = await queue.enqueue({"n": 1})
    handle = await queue.claim_one("w")
    assert handle is not None
    with pytest.raises(NotImplementedError, match="'release' capability"):
        await handle.release()
    assert await handle.ack() is True, "a refused release does not spend the handle"
    assert await queue.get_job(job_id) is None
    with pytest.raises(InvalidArgument, match="unique_key"):
        await queue.enqueue_unique({"n": 2}, "")
    with pytest.raises(NotImplementedError, match="'unique_keys' capability"):
        await queue.enqueue_unique({"n": 2}, "key")
    with pytest.raises(NotImplementedError, match="'transactional_enqueue' capability"):
        await queue.enqueue_in(object(), {"n": 3})
    await store.close()
