"""Mutant: the engine reads the host's clock, not the clock it was opened with — breaks T2.

An engine that declares ``injectable_clock`` promises that every instant it
stamps comes from the injected clock (T2): that is what lets the suite move
time by hours without sleeping, and what lets an application's tests run a
queue on a ``ManualClock``. This driver drops the ``now`` the kit read from the
injected clock and reads ``datetime.now(UTC)`` instead.
``enqueue_opts_resolution``'s "injected clock" leg sets the injected clock to
1999 and sees the stamps land in the host's present.
"""

from __future__ import annotations

from datetime import UTC, datetime

from alkstore_sqlite import SqliteDriver

from tests.mutants.catalog import Mutant, sqlite_mutant


class HostClockDriver(SqliteDriver):
    def _now(self, now: datetime | None) -> datetime:
        return datetime.now(UTC)


adapter = sqlite_mutant("mut-sqlite-reads-host-clock", driver=HostClockDriver)
MUTANT = Mutant(
    clause="T2",
    rows=("enqueue_opts_resolution",),
    what="every op reads datetime.now(UTC) instead of the injected clock",
)
