"""Instants and durations at microsecond precision.

Part of the contract.

Engines store instants as integer microseconds since the Unix epoch: the
conversion is exact both ways for every aware ``datetime`` (whose resolution is
one microsecond), so T1's "at least millisecond precision" holds with room to
spare and a stored value reads back equal to the one computed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)


def to_epoch_us(instant: datetime) -> int:
    """Microseconds since the epoch of an aware ``datetime`` (exact)."""
    return (instant - EPOCH) // _ONE_US


def from_epoch_us(micros: int) -> datetime:
    """The aware UTC ``datetime`` ``micros`` microseconds after the epoch (exact)."""
    return EPOCH + timedelta(microseconds=micros)
