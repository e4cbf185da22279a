"""A ``CHECKPOINT`` before every pass of a Postgres benchmark, so every timed part starts from the same state.

Postgres checkpoints once ``max_wal_size`` of WAL (1 GB by default) has been
written since the last one, or ``checkpoint_timeout`` (5 min) has passed, and
spreads the checkpoint's writes over most of the interval. A throughput run
writes that much WAL every two minutes or so: the server's log of
2026-12-03 (``log_checkpoints``) shows one starting every 2 to 2.5 minutes
during ``throughput.py`` and lasting 50 to 95 s, so most timed parts ran
during one. After a checkpoint starts, the first change to a page writes the
whole page to WAL; a consume pass whose backlog was stored before the start
pays that for every page it touches, one whose backlog came after does not,
and which of two adjacent rows (alkstore and its baseline) met which was
chance. So each pass begins with a ``CHECKPOINT`` (untimed), before its
backlog is stored: no pass pays full page images for its own backlog (as a
queue whose jobs are taken soon after they come does not), and none has a
checkpoint inside it (a backlog and its pass write tens of megabytes of WAL).

It needs a superuser or the ``pg_checkpoint`` role (PostgreSQL 15); without
either, the timed parts run as they did before and stderr says so once.
"""

from __future__ import annotations

import sys

import asyncpg

_refused: list[str] = []
"""The DSNs whose server refused a CHECKPOINT (said once each on stderr)."""


async def checkpoint(dsn: str) -> None:
    """Run ``CHECKPOINT`` on the server at ``dsn``; a server that refuses it is told about once, then skipped."""
    if dsn in _refused:
        return
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CHECKPOINT")
    except asyncpg.exceptions.InsufficientPrivilegeError as exc:
        _refused.append(dsn)
        sys.stderr.write(f"no CHECKPOINT before the timed parts ({exc}): checkpoints may fall inside them\n")
    finally:
        await conn.close()
