"""The CPU time the Postgres server spends on a timed part, when the server runs on this machine.

With one worker a job's wall time is the client's CPU plus the wait on the
server; with four on two cores, the client, the backends and the server's
own processes (WAL writer, checkpointer, the store's vacuum) share the CPUs,
and the client's CPU alone no longer says which side holds a path back. So a
profile also reads the server's CPU per job: the on-CPU time
(``/proc/PID/schedstat``, in nanoseconds, so a 10,000-job run is not rounded
to the kernel's 10 ms ticks) of the postmaster and each of its children,
added up at the start and at the end of the timed part. A process that
started during the timed part counts from zero; one that exited during it
takes its time with it, which these benchmarks never do (their connections
open before the clock starts and close after it stops; a pool opens one for
the store's vacuum and keeps it).

The postmaster is found from a connection (the parent of the server's
checkpointer, which every server runs); a server on another machine, or one
whose processes this user cannot read, has no figure, and the profile says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import asyncpg

PROC = Path("/proc")


async def postmaster_of(dsn: str) -> int | None:
    """The postmaster's PID of the server at ``dsn``, if its processes run here and can be read; else ``None``."""
    conn = await asyncpg.connect(dsn)
    try:
        pid = await conn.fetchval("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")
    finally:
        await conn.close()
    if pid is None:
        return None
    try:
        status = (PROC / str(pid) / "status").read_text()
    except OSError:
        return None
    parent = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), None)
    return int(parent) if parent is not None and parent.isdigit() else None


def _children(postmaster: int) -> list[int]:
    children: list[int] = []
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # The fields after the command (which may hold spaces): state, then the parent's PID.
        if int(stat[stat.rindex(")") + 2 :].split(maxsplit=2)[1]) == postmaster:
            children.append(int(entry.name))
    return children


def cpu_ns(postmaster: int) -> dict[int, int]:
    """On-CPU nanoseconds of the postmaster and each of its children, by PID."""
    times: dict[int, int] = {}
    for pid in (postmaster, *_children(postmaster)):
        try:
            times[pid] = int((PROC / str(pid) / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return times


def spent_s(before: dict[int, int], after: dict[int, int]) -> float:
    """The server's CPU seconds between two readings; a process new in ``after`` counts from zero."""
    return sum(ns - before.get(pid, 0) for pid, ns in after.items()) / 1e9
