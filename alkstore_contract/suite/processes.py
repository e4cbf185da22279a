"""Starting worker processes from a row and reading what they report.

Part of the suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

from alkstore_contract.suite.harness import RowContext

T = TypeVar("T")


def _child_env() -> dict[str, str]:
    """The parent's environment plus its ``sys.path``, so ``module:attr`` engines import in the child."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


async def spawn_worker(
    ctx: RowContext, action: str, *, own_group: bool = False, **params: Any
) -> asyncio.subprocess.Process:
    """Start ``python -m alkstore_contract.suite.worker`` on the row's engine, location and clock.

    ``own_group``: the worker leads a process group of its own, which the engine processes it starts join, so
    one signal to the group ends them all (the ``burst`` action does so itself) and never reaches the suite.
    A ``barrier`` param gives the worker a stdin to be told to start on (``start_together``).
    """
    spec = {
        "engine": ctx.engine_spec,
        "location": params.pop("location", ctx.location),
        "clock": ctx.child_clock_arg(),
        "seed": ctx.seed,
        "action": action,
        **params,
    }
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "alkstore_contract.suite.worker",
        json.dumps(spec),
        stdin=asyncio.subprocess.PIPE if params.get("barrier") else None,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_child_env(),
        start_new_session=own_group,
    )


async def spawn_drainers(
    ctx: RowContext, location: object, queue: str, lease_s: float, processes: int, stores: int, **params: Any
) -> list[asyncio.subprocess.Process]:
    """``processes`` ``drain`` workers on ``queue`` at ``location``, ``stores`` stores each with one claiming task,
    named ``proc<i>``: the multi-process leg of the drain rows (C4's P2, G's processes). ``batch`` may be a callable
    of the process's index; the other ``params`` go to each worker as they are."""
    batch = params.pop("batch", 1)
    return [
        await spawn_worker(
            ctx,
            "drain",
            location=location,
            queue=queue,
            opts={"visibility_timeout_s": lease_s},
            stores=stores,
            tasks_per_store=1,
            batch=batch(p) if callable(batch) else batch,
            worker_prefix=f"proc{p}",
            **params,
        )
        for p in range(processes)
    ]


async def read_events(process: asyncio.subprocess.Process, *, until: str | None = None) -> list[dict[str, Any]]:
    """Events the child wrote, up to and including ``until`` (or to its exit)."""
    assert process.stdout is not None
    events: list[dict[str, Any]] = []
    while True:
        line = await process.stdout.readline()
        if not line:
            return events
        event = json.loads(line)
        events.append(event)
        if until is not None and event.get("event") == until:
            return events


async def start_together(processes: list[asyncio.subprocess.Process], timeout_s: float = 120.0) -> None:
    """Wait until every worker spawned with ``barrier`` said it is ready, then tell them all to start at once.

    Python children take a good part of a second to start, so without it the first one drains a short queue
    before the last has opened its store, and nothing races.
    """
    for process in processes:
        events = await asyncio.wait_for(read_events(process, until="ready"), timeout_s)
        if not events or events[-1].get("event") != "ready":
            raise RuntimeError(f"worker process ended before it was ready: {events[-3:]}")
    for process in processes:
        assert process.stdin is not None
        process.stdin.write(b"go\n")
        await process.stdin.drain()


async def unique_rounds(
    processes: list[asyncio.subprocess.Process], keys: list[str], timeout_s: float = 120.0
) -> dict[str, list[tuple[object, bool]]]:
    """Drive ``enqueue_unique`` workers round by round: each key started in every process at once.

    Returns, per key, every answer ``(id, created)`` the processes reported.
    """
    answers: dict[str, list[tuple[object, bool]]] = {key: [] for key in keys}
    for key in keys:
        for process in processes:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
        await asyncio.gather(*(process.stdin.drain() for process in processes if process.stdin is not None))
        for process in processes:
            for event in await asyncio.wait_for(read_events(process, until="round"), timeout_s):
                if event.get("event") == "enqueued":
                    answers[key].append((event["id"], bool(event["created"])))
    return answers


async def finish(process: asyncio.subprocess.Process, timeout_s: float = 120.0) -> list[dict[str, Any]]:
    """Every event of a child that runs to its end; a child that fails raises with its stderr."""
    events = await asyncio.wait_for(read_events(process), timeout_s)
    assert process.stderr is not None
    stderr = (await process.stderr.read()).decode(errors="replace")
    code = await process.wait()
    if code != 0 or not events or events[-1].get("event") != "done":
        raise RuntimeError(f"worker process exited with {code}; stderr:\n{stderr[-4000:]}")
    return events


async def side_by_side(rounds: Iterable[Awaitable[T]]) -> list[T]:
    """The results of rounds run at once (each its own worker process), in order; the first failure is raised.

    Every round runs to its end before a failure is raised, so none is left running (its worker alive, its
    location in use) behind the row.
    """
    outcomes = await asyncio.gather(*rounds, return_exceptions=True)
    results: list[T] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        results.append(outcome)
    return results
