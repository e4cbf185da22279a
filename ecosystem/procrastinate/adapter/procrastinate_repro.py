"""What procrastinate's standalone reproductions do alike, written once for the three of them.

They are ``alkstore_procrastinate/reproduce_pause.py``, ``alkstore_procrastinate/reproduce_queueing_lock.py`` and
``../runner/reproduce_periodic.py``; each puts this folder on its path and imports this file. Like them it needs
procrastinate only (nothing of alkstore): a maintainer runs each from a checkout with the library alone. It holds
what was the same in each: an ``App`` whose tables live in a schema of their own (the connector's ``search_path``, as
procrastinate's docs set a schema), made with ``apply_schema_async`` and dropped at the end; worker processes that
are the reproduction's own script run with ``--worker``, each killed on the way out whatever happened; and the run
around the scenarios, with the ``REPRODUCED`` / ``NOT REPRODUCED`` lines and the exit status ci/ecosystem.sh reads.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

Scenarios = Callable[[str, str, Path], Coroutine[Any, Any, list[tuple[str, bool]]]]
"""A reproduction's scenarios on a server (DSN), a fresh schema's name and the log its workers append to: each
scenario's name and whether it showed what the docs say."""


def say(line: str) -> None:
    """One line of what the run saw, on stdout at once (ci/ecosystem.sh reads it)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def app_on(dsn: str, schema: str) -> Any:
    """A procrastinate ``App`` whose connections use ``schema`` (their ``search_path``)."""
    from procrastinate import App, PsycopgConnector

    return App(connector=PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}))


@asynccontextmanager
async def opened(dsn: str, schema: str) -> AsyncIterator[Any]:
    """An open ``App`` on the new ``schema``, which holds procrastinate's tables until the block ends."""
    app = app_on(dsn, schema)
    async with app.open_async():
        await app.connector.execute_query_async(f"CREATE SCHEMA {schema}")
        try:
            await app.schema_manager.apply_schema_async()
            yield app
        finally:
            await app.connector.execute_query_async(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


class Workers:
    """The worker processes of one run: ``script --worker DSN SCHEMA LOG``, each in a process group of its own."""

    def __init__(self, script: str, dsn: str, schema: str, log: Path) -> None:
        self.argv = [sys.executable, script, "--worker", dsn, schema, str(log)]
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(proc)
        return proc


@asynccontextmanager
async def running(script: str, dsn: str, schema: str, log: Path) -> AsyncIterator[tuple[Any, Workers]]:
    """``opened``, and the run's ``Workers``: when the block ends, whatever happened, every worker still there is
    killed (a stopped one too: SIGCONT first, so that it dies now), before the schema is dropped."""
    workers = Workers(script, dsn, schema, log)
    async with opened(dsn, schema) as app:
        try:
            yield app, workers
        finally:
            for proc in workers.procs:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGCONT)
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def main(
    argv: list[str], name: str, scenarios: Scenarios, worker: Callable[[str, str, str], None] | None = None
) -> int:
    """A reproduction's command line: with ``--worker DSN SCHEMA LOG``, one of its worker processes; else its
    scenarios on the server ``argv[0]`` (else ``$ALKSTORE_PG_DSN``, else the local default) in a schema named after
    ``name``, one line per scenario, and 0 when every scenario showed what it shows."""
    if argv[:1] == ["--worker"] and worker is not None:
        worker(argv[1], argv[2], argv[3])
        return 0
    dsn = argv[0] if argv else os.environ.get("ALKSTORE_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    log = Path(f"/tmp/{name}-{os.getpid()}.log")
    try:
        results = asyncio.run(scenarios(dsn, f"{name}_{uuid.uuid4().hex[:8]}", log))
    finally:
        log.unlink(missing_ok=True)
    for scenario, shown in results:
        say(f"{'REPRODUCED' if shown else 'NOT REPRODUCED'}: {scenario}")
    return 0 if results and all(shown for _, shown in results) else 1
