"""Bookkeeping every engine's ``JobHandle``, ``Queue`` and ``Store`` need, written once (contract H4, S3, E1).

Part of the contract.
"""

from __future__ import annotations

from alkstore_contract.errors import HandleSpent, StoreClosed
from alkstore_contract.types import JobId, QueueOpts


class NamedQueue:
    """A queue's name and the options it stamps on what it enqueues (E1), as every engine's ``Queue`` answers them.

    The kit's queue and the wire's both start from it; they keep ``_name`` and
    ``_opts`` for their own ops to read.
    """

    __slots__ = ("_name", "_opts")

    def __init__(self, name: str, opts: QueueOpts) -> None:
        self._name = name
        self._opts = opts

    @property
    def name(self) -> str:
        return self._name

    @property
    def opts(self) -> QueueOpts:
        return self._opts


class OneShot:
    """Tracks whether ``ack``/``retry``/``fail`` already returned on a handle (H4).

    ``spend`` is called before the storage op is awaited, so a second op racing
    the first on the same handle is refused too; the handle is spent whatever
    the op returned, as H4 says "once one has returned".
    """

    __slots__ = ("_job_id", "_spent_by")

    def __init__(self, job_id: JobId) -> None:
        self._job_id = job_id
        self._spent_by: str | None = None

    @property
    def spent(self) -> bool:
        return self._spent_by is not None

    def check(self, op: str) -> None:
        """Raise ``HandleSpent`` when the handle is spent; touches nothing."""
        if self._spent_by is not None:
            raise HandleSpent(
                f"{op}() on job {self._job_id!r}: this handle's {self._spent_by}() already returned; "
                "ack, retry and fail are one-shot and any later op on the handle is refused (H4)"
            )

    def spend(self, op: str) -> None:
        """``check``, then mark the handle spent by ``op``."""
        self.check(op)
        self._spent_by = op


def raise_if_closed(closed: bool, op: str) -> None:
    """contract S3: every op on a closed store raises ``StoreClosed`` before any I/O."""
    if closed:
        raise StoreClosed(f"{op}: the store is closed; open a new one to go on (S3)")
