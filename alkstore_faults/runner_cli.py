"""The command line every Python runner serves: ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The runner protocol (docs/runtime-faults.md) is the same for every library; what differs is the description,
how the library's client enqueues a job and how the library's worker starts. A runner
(``ecosystem/runners/<library>/runner.py``) declares those three and hands them to ``serve``, which reads the
subcommand and the jobs file and refuses anything else the same way for every library, so a fix to the protocol's
side of a runner reaches all of them at once. A runner imports its library's task module inside its ``enqueue``
and ``worker`` only: ``describe`` runs with no broker, and a task module may need one to import.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from alkstore_faults.handler import read_jobs

Job = dict[str, Any]
"""One job of an ``enqueue`` call: ``id``, ``duration_s`` and ``fail`` (``alkstore_faults.handler.read_jobs``)."""
Enqueue = Callable[[list[Job]], Coroutine[Any, Any, None] | None]
"""Enqueues every job with the library's ordinary client call; a coroutine function for an asyncio client."""
USAGE = "describe, enqueue JOBS_FILE or worker"


def serve(
    description: Mapping[str, Any], enqueue: Enqueue, worker: Callable[[], None], argv: Sequence[str] | None = None
) -> int:
    """Run the subcommand in ``argv`` (default: this process's arguments); the exit status.

    ``describe`` prints ``description`` as one line of JSON; ``enqueue JOBS_FILE`` hands the file's jobs to
    ``enqueue`` (running it to its end when it is a coroutine function); ``worker`` calls ``worker``, which starts
    one worker in the foreground, most often by replacing this process (``exec_console_script``). Anything else
    is refused with status 2 and the usage on stderr.
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
    else:
        sys.stderr.write(f"unknown command {' '.join(arguments)!r}: {USAGE}\n")
        return 2
    return 0


def exec_console_script(name: str, *arguments: str, env: Mapping[str, str] | None = None) -> NoReturn:
    """Become the console script ``name`` of this interpreter's venv (a library's own worker command, as its docs
    start it): the harness's signals and faults then reach the library's worker itself, not a parent of it."""
    script = Path(sys.executable).parent / name
    argv = [str(script), *arguments]
    if env is None:
        os.execv(script, argv)
    os.execve(script, argv, env)
