"""Where engines read ``now`` (contract T1, T2).

Part of the contract.

Every engine operation reads its clock once. The suite hands engines a
``ManualClock`` and moves it, so leases lapse, backoffs elapse and retention
runs out without sleeping; production uses ``SystemClock`` (or, on Postgres,
the database server's clock).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.types import Duration
from alkstore_contract.validation import duration_seconds


@runtime_checkable
class Clock(Protocol):
    """A source of aware UTC instants."""

    def now(self) -> datetime:
        """The current instant, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The host's wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


DEFAULT_MANUAL_START = datetime(2030, 1, 1, tzinfo=UTC)


class ManualClock:
    """A clock that stands still until told to move; shared by every store a test opens."""

    def __init__(self, start: datetime = DEFAULT_MANUAL_START) -> None:
        if start.tzinfo is None:
            raise InvalidArgument(f"start={start!r}: a ManualClock needs a timezone-aware datetime")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, by: Duration) -> datetime:
        """Move forward by ``by`` (seconds or ``timedelta``, ≥ 0) and return the new now."""
        self._now += timedelta(seconds=duration_seconds("by", by))
        return self._now

    def set(self, instant: datetime) -> None:
        """Jump to ``instant`` (aware; may be earlier, to model a skewed host)."""
        if instant.tzinfo is None:
            raise InvalidArgument(f"instant={instant!r}: ManualClock.set needs a timezone-aware datetime")
        self._now = instant.astimezone(UTC)
