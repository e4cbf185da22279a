"""The command line every Python runner serves: ``describe``, ``enqueue JOBS_FILE``, ``worker``, ``inspect JOBS_FILE``.

The runner protocol (docs/runtime-faults.md) is the same for every library; what differs is the description,
how the library's client enqueues a job and how the library's worker starts. A runner
(``ecosystem/<library>/runner/runner.py``) declares those three and hands them to ``serve``, which reads the
subcommand and the jobs file and refuses anything else the same way for every library, so a fix to the protocol's
side of a runner reaches all of them at once. A runner imports its library's task module inside its ``enqueue``
and ``worker`` only: ``describe`` runs with no broker, and a task module may need one to import.

A runner that needs a package this interpreter lacks fails in one line naming it (``missing_package``), not in
a traceback: importing this module installs that as the hook for an uncaught ``PackageNotFoundError`` (a runner's
``importlib.metadata.version`` lookup, which most describe with) or ``ModuleNotFoundError``, so the harness
refuses the runner at ``describe`` with the package to install instead of failing every fault later.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from importlib.metadata import PackageNotFoundError
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn, TypeVar

from alkstore_faults.handler import read_jobs

Job = dict[str, Any]
"""One job of an ``enqueue`` call: ``id``, ``duration_s`` and ``fail`` (``alkstore_faults.handler.read_jobs``)."""
Enqueue = Callable[[list[Job]], Coroutine[Any, Any, None] | None]
"""Enqueues every job with the library's ordinary client call; a coroutine function for an asyncio client."""
State = dict[str, Any]
"""What ``inspect`` says of one job: ``job``, ``state``, ``library_state``, ``reason``, ``until``, ``held_by``,
``attempts`` (docs/runtime-faults.md, "inspect")."""
NO_STATE: State = dict.fromkeys(("library_state", "reason", "until", "held_by", "attempts"))
"""A state's fields but ``state`` and ``job``, all null: what a runner's ``inspect`` fills in for each job."""
Inspect = Callable[[list[Job]], Coroutine[Any, Any, list[State]] | list[State]]
"""Asks the library what it holds for each job, through its documented API; a coroutine function for asyncio."""
Held = TypeVar("Held")
"""A library's own record of one job, as its client returns it."""
USAGE = "describe, enqueue JOBS_FILE, worker, inspect JOBS_FILE or schedule"


def states_of(jobs: list[Job], found: Mapping[str, Held], state_of: Callable[[Held], State]) -> list[State]:
    """What ``inspect`` prints for each of ``jobs``: ``state_of`` the library's record of it in ``found`` (keyed by
    the harness's job id), or ``absent`` where the library holds none, so a runner writes only the mapping from
    its library's record to a state."""
    states: list[State] = []
    for job in jobs:
        held = found.get(job["id"])
        if held is None:
            states.append({"job": job["id"], **NO_STATE, "state": "absent"})
        else:
            states.append({"job": job["id"], **state_of(held)})
    return states


def serve(
    description: Mapping[str, Any],
    enqueue: Enqueue,
    worker: Callable[[], None],
    argv: Sequence[str] | None = None,
    inspect: Inspect | None = None,
    schedule: Callable[[], None] | None = None,
) -> int:
    """Run the subcommand in ``argv`` (default: this process's arguments); the exit status.

    ``describe`` prints ``description`` as one line of JSON; ``enqueue JOBS_FILE`` hands the file's jobs to
    ``enqueue`` (running it to its end when it is a coroutine function); ``worker`` calls ``worker``, which starts
    one worker in the foreground, most often by replacing this process (``exec_console_script``); ``inspect
    JOBS_FILE`` (protocol 2) hands the jobs to ``inspect`` and prints each state it returns as one line of JSON;
    ``schedule`` (the schedule workload) calls ``schedule``, which starts one worker running the library's
    scheduler in the foreground. Anything else, and ``inspect`` or ``schedule`` of a runner that gave none, is
    refused with status 2 and the usage on stderr.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments else ""
    if command == "describe" and len(arguments) == 1:
        sys.stdout.write(json.dumps(description) + "\n")
    elif command == "enqueue" and len(arguments) == 2:
        pending = enqueue(read_jobs(arguments[1]))
        if pending is not None:
            asyncio.run(pending)
    elif command == "worker" and len(arguments) == 1:
        worker()
    elif command == "inspect" and len(arguments) == 2 and inspect is not None:
        states = inspect(read_jobs(arguments[1]))
        if not isinstance(states, list):
            states = asyncio.run(states)
        sys.stdout.write("".join(json.dumps(state) + "\n" for state in states))
    elif command == "schedule" and len(arguments) == 1 and schedule is not None:
        schedule()
    else:
        missing = {
            "inspect": " (this runner has no inspect: protocol 1)",
            "schedule": " (this runner declares no schedule workload)",
        }.get(command, "")
        sys.stderr.write(f"unknown command {' '.join(arguments)!r}{missing}: {USAGE}\n")
        return 2
    return 0


def missing_package(exc: BaseException) -> str | None:
    """The one line for a package this interpreter lacks, or ``None`` when ``exc`` is no such failure."""
    if isinstance(exc, PackageNotFoundError):
        name = str(exc.args[0] if exc.args else exc)
    elif isinstance(exc, ModuleNotFoundError) and exc.name:
        name = exc.name.split(".")[0]
    else:
        return None
    return f"runner needs the Python package {name!r}, which {sys.executable} lacks: install it (pip install {name})"


def _one_line_hook(kind: type[BaseException], exc: BaseException, trace: TracebackType | None) -> None:
    line = missing_package(exc)
    if line is None:
        _previous_hook(kind, exc, trace)
    else:
        sys.stderr.write(line + "\n")


_previous_hook = sys.excepthook
sys.excepthook = _one_line_hook


def exec_console_script(name: str, *arguments: str, env: Mapping[str, str] | None = None) -> NoReturn:
    """Become the console script ``name`` of this interpreter's venv (a library's own worker command, as its docs
    start it): the harness's signals and faults then reach the library's worker itself, not a parent of it."""
    script = Path(sys.executable).parent / name
    argv = [str(script), *arguments]
    if env is None:
        os.execv(script, argv)
    os.execve(script, argv, env)
