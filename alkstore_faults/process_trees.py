"""Process trees: find every descendant of a process through /proc, and signal all of them.

A worker or a broker may put children in process groups or sessions of their own (RQ's work horse, Erlang's
``erl_child_setup``), so a signal to the leader's group alone misses them; the tree is read before the leader
is signalled, since a dead leader's children are reparented and no longer found under it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def tree(pid: int) -> set[int]:
    """Every descendant of ``pid`` now, read from /proc (empty where /proc cannot be read)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def signal_tree(pid: int, sig: signal.Signals, members: set[int] | None = None) -> None:
    """Signal the group ``pid`` leads, and each process of its tree (``members``, read now if not given)."""
    members = tree(pid) if members is None else members  # before the leader dies: its children are then reparented
    signal_group(pid, sig)
    for member in members:
        signal_group(member, sig)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(member, sig)


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
