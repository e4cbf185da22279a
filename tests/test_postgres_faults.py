"""Postgres faults under load: backends killed by the server, and a whole cluster restarted.

Both tests drive one store with several worker tasks, the way a real worker
process would: an operation that raises has an *unknown outcome* (the server
may have committed it just before the connection went), so the worker notes
it and carries on. At the end the history checker (contract C4) reads the
handouts, the confirmed acks and the jobs still in the table (read through a
bare connection, not the engine): no job may be handed out twice under
overlapping leases, and every enqueued job is acked or still present. The
visibility timeout is long, so no lease lapses and any second handout would
be a duplicate. The one gap an unknown outcome leaves is an ack that
committed but never reported it: such a job is gone without a confirmed ack,
and it may only be one whose ack raised. Likewise an enqueue that raised may
have stored its job: every payload carries a tag, and a job whose tag belongs
to an enqueue in doubt counts as enqueued when it shows up.

- ``test_killed_backends_under_load``: a side task keeps calling
  ``pg_terminate_backend`` on the store's connections (found by their
  ``application_name``) while workers drain the queue and a producer feeds it.
- ``test_cluster_restart_with_an_open_store``: ``ci/postgres.sh`` starts a
  throwaway cluster, which is restarted with ``pg_ctl restart`` while the store
  is in use. Operations during the outage raise ``ServerConnectionError``;
  afterwards the SAME store works again on its own (the pool reconnects).

Server for the first test: ``$ALKSTORE_PG_DSN`` or the default DSN; it skips
when none answers, except under ``CI`` or ``ALKSTORE_REQUIRE=1`` where it
fails. The second needs root (``pg_ctl`` runs as the ``postgres`` user) and
Debian's Postgres binaries; it skips without them unless ``CI`` is set.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import random
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from alkstore_postgres import PgAdapter, ServerConnectionError, adapter
from alkstore_postgres.adapter import DSN_OPTION
from alkstore_postgres.connection import application_name
from alkstore_postgres.location import Location, quote_ident

from alkstore_contract.suite.history import ClientHistory, Release, Verdict
from alkstore_contract.surface import Queue
from alkstore_contract.types import JobId, QueueOpts

REPO = Path(__file__).resolve().parent.parent
POSTGRES_SH = REPO / "ci" / "postgres.sh"

OPTS = QueueOpts(visibility_timeout_s=600, max_attempts=50)
"""A lease far longer than the test: a second handout of a job would be a duplicate, never a reclaim."""
QUEUE = "faults"
WORKERS = 4
BATCH = 3
KILL_FOR_S = 3.0
"""How long the side task keeps killing backends."""
KILL_PAUSE_S = (0.02, 0.15)
PRELOADED = 300
SCRIPT_TIMEOUT_S = 300
"""ci/postgres.sh may install Debian's postgresql package on a bare CI machine."""
RESTART_TIMEOUT_S = 120
RECOVERY_TIMEOUT_S = 30.0


def _required() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("ALKSTORE_REQUIRE") == "1"


async def _require_server(pg: PgAdapter) -> None:
    reason = await pg.unavailable_reason()
    if reason is not None:
        if _required():
            pytest.fail(f"a Postgres server is required here (CI or ALKSTORE_REQUIRE=1): {reason}")
        pytest.skip(reason)


@dataclass
class Ledger(ClientHistory):
    """What the workers and the producer saw, and every ``ServerConnectionError`` they met."""

    errors: Counter[str] = field(default_factory=Counter)
    """``ServerConnectionError`` per op; anything else raised is not caught and fails the test."""
    error_messages: set[str] = field(default_factory=set)
    ops_ok: int = 0
    progress: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by every op that succeeds; cleared by whoever waits for the next one."""
    last_tag: str | None = None
    """The tag of the producer's last enqueue, so an undrained queue's message can name it."""

    def succeeded(self) -> None:
        self.ops_ok += 1
        self.progress.set()

    def failed(self, op: str, error: ServerConnectionError) -> None:
        self.errors[op] += 1
        self.error_messages.add(str(error).split(" (", 1)[0])


async def _worker(queue: Queue, name: str, ledger: Ledger, produced: asyncio.Event, pace_s: float) -> None:
    """Claim and ack until a claim started after ``produced`` was set comes back empty; an error is an unknown outcome.

    ``produced`` is set once the producer's last enqueue has returned, so a
    claim sent after it sees every job the producer stored (and finds them
    due: their ``run_at`` is older than the claim's ``now``). A claim already
    in flight when the producer stopped may have started before that last
    enqueue committed: its empty answer does not mean the queue is drained.
    """
    while True:
        last_round = produced.is_set()
        try:
            handles = await queue.claim_batch(name, BATCH)
        except ServerConnectionError as error:
            ledger.failed("claim_batch", error)
            await asyncio.sleep(0.01)
            continue
        ledger.succeeded()
        if not handles:
            if last_round:
                return
            await asyncio.sleep(0.01)
            continue
        for handle in handles:
            job = handle.job
            assert job.lease_expires_at is not None
            assert isinstance(job.payload, dict)
            claim = ledger.handed_out(job, name)
            await asyncio.sleep(pace_s)
            try:
                acked = await handle.ack()
            except ServerConnectionError as error:
                ledger.failed("ack", error)
                ledger.acks_in_doubt.add(job.id)
                continue
            ledger.succeeded()
            ledger.releases.append(Release(job.id, claim, "ack", acked))


async def _producer(queue: Queue, ledger: Ledger, stop: asyncio.Event, produced: asyncio.Event, pace_s: float) -> None:
    """Enqueue tagged jobs until ``stop`` is set, then set ``produced``; an enqueue that raised leaves its tag in doubt.

    ``stop`` may come while an enqueue is in flight, which on a loaded machine
    commits well after it: ``produced`` tells the workers when no enqueue of
    the producer's is left running, so they drain what it stored last.
    """
    number = 0
    while not stop.is_set():
        number += 1
        tag = ledger.last_tag = f"p{number}"
        try:
            ledger.enqueued.add(await queue.enqueue({"tag": tag}))
            ledger.succeeded()
        except ServerConnectionError as error:
            ledger.failed("enqueue", error)
            ledger.tags_in_doubt.add(tag)
        await asyncio.sleep(pace_s)
    produced.set()


async def _preload(queue: Queue, ledger: Ledger, count: int) -> None:
    ledger.enqueued.update(await queue.enqueue_many([{"tag": f"i{n}"} for n in range(count)]))


async def _table(dsn: str, schema: str) -> list[Any]:
    """Every row left in the store's table, read over a bare connection (not the engine)."""
    conn = await asyncpg.connect(dsn)
    try:
        rows: list[Any] = await conn.fetch(
            f"SELECT id, payload, state, attempts, run_at, enqueued_at, statement_timestamp() AS read_at "
            f"FROM {quote_ident(schema)}.jobs ORDER BY id"
        )
    finally:
        await conn.close()
    return rows


async def _check(location: str, ledger: Ledger) -> Verdict:
    """The history check over the handouts, the confirmed acks and the rows still present.

    Asserts no duplicate, nothing unexpected, nothing lost except jobs whose
    ack raised (committed without a reply), and that the queue was drained:
    every row left is one a claim or an ack in doubt left processing.
    """
    parsed = Location.decode(location)
    rows = await _table(parsed.dsn, parsed.schema)
    seen: dict[JobId, str] = {int(row["id"]): json.loads(row["payload"])["tag"] for row in rows}
    verdict = ledger.verdict([int(row["id"]) for row in rows], seen)
    summary = f"{verdict.describe()}; errors {dict(ledger.errors)}; {len(rows)} rows left"
    assert not verdict.duplicated, f"a job was handed out twice under overlapping leases: {summary}"
    assert not verdict.unexpected, f"a handout named a job never enqueued: {summary}"
    unexplained = set(verdict.lost) - ledger.acks_in_doubt
    assert not unexplained, f"jobs gone without an ack (confirmed or in doubt): {sorted(unexplained)}; {summary}"
    undrained = [row for row in rows if row["state"] != "processing"]
    assert not undrained, f"the queue was not drained: {summary}; left: {_describe_rows(rows, seen, ledger)}"
    return verdict


def _describe_rows(rows: list[Any], tags: dict[JobId, str], ledger: Ledger) -> str:
    """Each row left, with what the ledger saw of it: an undrained queue says which job stayed, and why it may have."""
    handed = Counter(handout.job_id for handout in ledger.handouts)
    described = []
    for row in rows:
        job_id = int(row["id"])
        tag = tags[job_id]
        if job_id in ledger.enqueued:
            enqueue = "enqueue confirmed"
        elif tag in ledger.tags_in_doubt:
            enqueue = "enqueue in doubt"
        else:
            enqueue = "enqueue never seen"
        doubt = ", ack in doubt" if job_id in ledger.acks_in_doubt else ""
        doubt += ", the producer's last enqueue" if tag == ledger.last_tag else ""
        described.append(
            f"id {job_id} ({tag}) {row['state']}, attempts {row['attempts']}, run_at {row['run_at']:%H:%M:%S.%f}, "
            f"enqueued_at {row['enqueued_at']:%H:%M:%S.%f}, {enqueue}, {handed[job_id]} handouts{doubt}"
        )
    read_at = f" (read at {rows[0]['read_at']:%H:%M:%S.%f})" if rows else ""
    return "; ".join(described) + read_at


async def _terminate_backends(bare: Any, name: str) -> int:
    """``pg_terminate_backend`` on every connection whose ``application_name`` is ``name``; how many."""
    killed: int = await bare.fetchval(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = $1 AND pid <> pg_backend_pid()",
        name,
    )
    return killed


@pytest.mark.asyncio
async def test_killed_backends_under_load() -> None:
    await _require_server(adapter)
    location = await adapter.create_location()
    parsed = Location.decode(location)
    bare = await asyncpg.connect(parsed.dsn)
    store = await adapter.open_store(location, seed=11)
    rng = random.Random(11)
    try:
        queue = store.queue(QUEUE, OPTS)
        ledger = Ledger()
        await _preload(queue, ledger, PRELOADED)
        stop, produced = asyncio.Event(), asyncio.Event()
        kills: list[int] = []

        async def killer() -> None:
            loop = asyncio.get_running_loop()
            until = loop.time() + KILL_FOR_S
            while loop.time() < until:
                kills.append(await _terminate_backends(bare, application_name(parsed.schema)))
                await asyncio.sleep(rng.uniform(*KILL_PAUSE_S))
            stop.set()

        async with asyncio.timeout(60), asyncio.TaskGroup() as group:
            group.create_task(killer())
            group.create_task(_producer(queue, ledger, stop, produced, 0.004))
            for index in range(WORKERS):
                group.create_task(_worker(queue, f"w{index}", ledger, produced, 0.002))

        assert sum(kills) >= 10, f"the side task killed only {sum(kills)} backends: the fault never happened"
        assert sum(ledger.errors.values()) >= 3, f"no op met a killed connection: {dict(ledger.errors)}"
        verdict = await _check(location, ledger)
        assert verdict.acks >= PRELOADED // 2, f"too little work got through: {verdict.describe()}"
        # And the store is healthy afterwards: a fresh op works.
        job_id = await queue.enqueue({"tag": "after"})
        assert (await queue.get_job(job_id)) is not None
    finally:
        await store.close()
        await bare.close()
        await adapter.drop_location(location)


# --- a cluster restart ----------------------------------------------------------------------------


def _restart_skip_reason() -> str | None:
    """Why the restart test cannot run here (never under CI: there it must run)."""
    if os.environ.get("CI"):
        return None
    if os.geteuid() != 0:
        return "restarting a throwaway cluster needs root (pg_ctl runs as the postgres user via runuser)"
    if not glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"):
        return "Debian's Postgres binaries (/usr/lib/postgresql/*/bin) are missing; CI installs them"
    return None


def _script_env(state_dir: Path) -> dict[str, str]:
    """ci/postgres.sh's environment: no DSN, a port nobody listens on, our own state dir."""
    env = {key: value for key, value in os.environ.items() if key != "ALKSTORE_PG_DSN"}
    env["ALKSTORE_PG_PROBE_PORT"] = "1"
    env["ALKSTORE_PG_STATE_DIR"] = str(state_dir)
    return env


def _run(args: list[str], env: dict[str, str] | None, timeout: float) -> str:
    """Run a command to its end; its stdout, or a failure naming its output."""
    done = subprocess.run(
        args, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{args} exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def _pg_ctl_restart(base: Path, bindir: Path) -> None:
    """``pg_ctl restart`` on the throwaway cluster, as its owner, logging to its own file.

    ``-l`` matters: without it the restarted server would write to this
    process's pipes and keep them open after ``pg_ctl`` returns.
    """
    command = [str(bindir / "pg_ctl"), "-D", str(base / "data"), "-l", str(base / "server.log")]
    command += ["-m", "fast", "-w", "-t", "60", "restart"]
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    _run(command, None, RESTART_TIMEOUT_S)


@pytest.mark.asyncio
async def test_cluster_restart_with_an_open_store(tmp_path: Path) -> None:
    reason = _restart_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    env = _script_env(tmp_path / "pg-state")
    try:
        dsn = (await asyncio.to_thread(_run, ["bash", str(POSTGRES_SH)], env, SCRIPT_TIMEOUT_S)).strip()
        base, bindir, recorded = (tmp_path / "pg-state" / "cluster").read_text().splitlines()[:3]
        assert recorded == dsn, "ci/postgres.sh printed a DSN other than the cluster it recorded"
        assert "alkstore-pg." in base, f"ci/postgres.sh reused a server instead of starting one: {base}"
        await _restart_under_load(dsn, Path(base), Path(bindir))
    finally:
        await asyncio.to_thread(_run, ["bash", str(POSTGRES_SH), "stop"], env, SCRIPT_TIMEOUT_S)


async def _restart_under_load(dsn: str, base: Path, bindir: Path) -> None:
    pg = PgAdapter()
    pg.configure({DSN_OPTION.ini: dsn})
    location = await pg.create_location()
    store = await pg.open_store(location, seed=12)
    try:
        queue = store.queue(QUEUE, OPTS)
        ledger = Ledger()
        await _preload(queue, ledger, PRELOADED)
        stop, produced = asyncio.Event(), asyncio.Event()
        outage: dict[str, int] = {}

        async def restarter() -> None:
            await asyncio.sleep(0.5)
            before = sum(ledger.errors.values())
            await asyncio.to_thread(_pg_ctl_restart, base, bindir)
            outage["errors"] = sum(ledger.errors.values()) - before
            outage["ops_before_recovery"] = ledger.ops_ok
            # The same store, untouched by the test, must serve again once the server answers.
            ledger.progress.clear()
            await asyncio.wait_for(ledger.progress.wait(), RECOVERY_TIMEOUT_S)
            await asyncio.sleep(1.0)  # let the workers run on the recovered server for a while
            stop.set()

        async with asyncio.timeout(RESTART_TIMEOUT_S), asyncio.TaskGroup() as group:
            group.create_task(restarter())
            group.create_task(_producer(queue, ledger, stop, produced, 0.01))
            for index in range(WORKERS):
                group.create_task(_worker(queue, f"w{index}", ledger, produced, 0.003))

        assert outage["errors"] >= 1, "no op failed while the server restarted: the outage was never seen"
        assert all("the connection to the Postgres server failed" in m for m in ledger.error_messages), (
            f"an outage error does not say what happened: {ledger.error_messages}"
        )
        assert ledger.ops_ok > outage["ops_before_recovery"], "the store did not recover after the restart"
        job_id = await queue.enqueue({"tag": "after"})
        assert (await queue.get_job(job_id)) is not None, "the same store works after the restart"
        await queue.cancel(job_id)
        await _check(location, ledger)
    finally:
        await store.close()
        await pg.drop_location(location)
