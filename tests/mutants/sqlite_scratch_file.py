"""Mutant: the file is treated as scratch space, deleted when its last store closes — breaks P3.

While any store has the file open nothing looks wrong, and a killed process
leaves the file behind. But the driver that closes the file last (SQLite then
folds the WAL back and removes it) also deletes the database file, so a clean
close followed by a reopen finds an empty queue: every committed job is lost.
The ``durability`` row's close-and-reopen leg catches it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from alkstore_sqlite import SqliteDriver

from tests.mutants.catalog import Mutant, sqlite_mutant


class ScratchFileDriver(SqliteDriver):
    """A driver whose close deletes the file when no other connection still has it open."""

    async def close(self) -> None:
        await super().close()
        await asyncio.to_thread(_delete_if_last, Path(self.location))


def _delete_if_last(path: Path) -> None:
    """SQLite removes the WAL when the last connection closes; then the file goes too."""
    if not Path(f"{path}-wal").exists():
        for leftover in (path, Path(f"{path}-shm")):
            leftover.unlink(missing_ok=True)


adapter = sqlite_mutant("mut-sqlite-scratch-file", driver=ScratchFileDriver)
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="the last store to close the file deletes it, so a close and reopen loses every committed job",
)
