"""A throwaway Postgres cluster, so the suite can crash a server and restart it (contract P3).

The engine's provisioning, as SQLAlchemy's dialects keep theirs (``testing/provision.py``): the
server a test needs lives with the backend it serves, behind the hooks the suite owns. The Postgres
adapter imports this only when the suite asks it for a crashable or skewed-clock location, and the
runtime-faults harness starts its Postgres broker with it (``alkstore_faults.brokers``); a user's
store never imports it. It lived in ``alkstore_faults`` for a while, which made the engine import
the harness above it (tests/test_boundaries.py now forbids that).

P3 for an engine whose storage is a server means the server's crash: every
committed write survives a ``kill -9`` of the server and its restart. The suite
must never do that to the server a user pointed the engine at (``--alkstore-pg-dsn``
may name a shared or production server), so the adapter makes each crashable
location on a cluster of its own: in a temporary directory, a copy of the data
directory ``initdb`` made once for these binaries (``_template``), and the
``postgres`` server on a free loopback port, as ``ci/postgres.sh`` does. A crash
is ``SIGKILL`` to the postmaster and every process it started (backends,
checkpointer: no shutdown, nothing gets to write a checkpoint), and a wait
until none of them is left (``crash``); a restart
starts ``postgres`` again on the same data directory, which replays its WAL —
Postgres's own crash recovery, exactly what a crashed production server does.

``initdb`` runs with ``--no-sync``: a process crash leaves the kernel's page
cache intact, so fsync matters only for a power loss, which no leg simulates.
The server keeps its defaults (``fsync``, ``synchronous_commit`` on).

Which binaries: ``$ALKSTORE_PG_BINDIR``, else ``pg_config --bindir``, else the
newest ``/usr/lib/postgresql/*/bin`` (Debian's layout). Run as root, the
cluster runs as the ``postgres`` user (initdb and postgres refuse root).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

BINDIR_ENV = "ALKSTORE_PG_BINDIR"
START_TIMEOUT_S = 60.0
"""How long a start (or a restart after a crash, which replays the WAL) may take before it is an error."""
KILL_TIMEOUT_S = 10.0
OWNER = "postgres"
"""The user the cluster runs as when this process is root."""
_RUNNING: set[ThrowawayCluster] = set()


def server_bindir() -> Path:
    """Where ``initdb`` and ``postgres`` are; a ``RuntimeError`` saying how to provide them when nowhere."""
    candidates: list[Path] = []
    if chosen := os.environ.get(BINDIR_ENV):
        candidates.append(Path(chosen))
    if shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            shown = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True, timeout=10)
            candidates.append(Path(shown.stdout.strip()))
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: _version_key(p.parent.name))
    candidates.extend(reversed(debian))
    for candidate in candidates:
        if (candidate / "initdb").is_file() and (candidate / "postgres").is_file():
            return candidate
    raise RuntimeError(
        "a crashable or skewed-clock location needs PostgreSQL's server binaries (initdb, postgres) on "
        f"this machine, to start a throwaway cluster of its own: none found (set ${BINDIR_ENV}, or install "
        "Debian's postgresql package)"
    )


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_owner() -> dict[str, Any]:
    """``user`` and ``group`` for a server binary's process: ``OWNER`` when this process is root, else its own.

    initdb and postgres refuse to run as root, so a root process hands them to ``OWNER``.
    """
    owner = OWNER if os.geteuid() == 0 else None
    return {"user": owner, "group": owner}


INITDB_ARGS = ("-U", OWNER, "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")


def _template(bindir: Path) -> Path:
    """A data directory ``initdb`` made once per machine for ``bindir``, never started: what each cluster copies.

    It lives in the temp directory under a name made of the binaries' path and ``INITDB_ARGS``, so a
    change of either makes a new one. Made in a directory of its own and renamed into place, so
    processes that race to make it never copy a half-made one (the loser removes its own).
    """
    key = hashlib.sha256(repr((str(bindir), INITDB_ARGS, os.geteuid())).encode()).hexdigest()[:16]
    template = Path(tempfile.gettempdir()) / f"alkstore-pg-template.{key}"
    if (template / "data" / "PG_VERSION").is_file():
        return template / "data"
    building = Path(tempfile.mkdtemp(prefix=f"{template.name}.building."))
    try:
        if os.geteuid() == 0:
            shutil.chown(building, OWNER, OWNER)
        command = [str(bindir / "initdb"), "-D", str(building / "data"), *INITDB_ARGS]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120, **_as_owner())
        if done.returncode != 0:
            raise RuntimeError(f"initdb for a throwaway cluster exited {done.returncode}: {done.stderr[-2000:]}")
        with contextlib.suppress(OSError):  # another process made it first: its copy is as good
            building.rename(template)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    if not (template / "data" / "PG_VERSION").is_file():
        raise RuntimeError(f"{template} holds no cluster made by initdb: remove it, and it is made again")
    return template / "data"


class ThrowawayCluster:
    """One cluster in a temporary directory: started by ``create``, crashed by ``kill``, gone after ``destroy``."""

    def __init__(self, base: Path, bindir: Path, port: int, environment: Mapping[str, str] | None = None) -> None:
        self.base = base
        self.bindir = bindir
        self.port = port
        self.environment = dict(environment or {})
        """Added to the server's environment (``LD_PRELOAD`` and ``FAKETIME`` for a skewed clock: ``faketime``)."""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def dsn(self) -> str:
        return f"postgresql://{OWNER}@127.0.0.1:{self.port}/postgres"

    @property
    def data(self) -> Path:
        return self.base / "data"

    @classmethod
    async def create(cls, environment: Mapping[str, str] | None = None) -> ThrowawayCluster:
        """``initdb`` a fresh cluster and start it; a ``RuntimeError`` with the tool's output when that fails.

        ``environment`` goes to the server process only (never to ``initdb``), on every start.
        """
        bindir = server_bindir()
        base = Path(tempfile.mkdtemp(prefix="alkstore-pg-throwaway."))
        if os.geteuid() == 0:
            shutil.chown(base, OWNER, OWNER)
        cluster = cls(base, bindir, _free_port(), environment)
        try:
            await asyncio.to_thread(cluster._copy_template)
            await cluster.start()
        except BaseException:
            await cluster.destroy()
            raise
        return cluster

    def _copy_template(self) -> None:
        """The data directory: a copy of the template ``initdb`` made for these binaries (``_template``).

        ``initdb`` costs a second or more of CPU (it bootstraps the catalogs through several single-user
        servers); a copy of a data directory that was never started costs a few milliseconds, and is the
        cluster a fresh ``initdb`` makes but for its system identifier, which every copy shares and nothing
        here reads.
        """
        done = subprocess.run(
            ["cp", "-a", str(_template(self.bindir)), str(self.data)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"copying the template cluster failed ({done.returncode}): {done.stderr[-2000:]}")

    async def start(self) -> None:
        """Start the server on its data directory (recovering from a crash if there was one) and wait for it."""
        self._process = await asyncio.to_thread(self._spawn)
        _RUNNING.add(self)
        await self._wait_until_it_answers()

    def _spawn(self) -> subprocess.Popen[bytes]:
        command = [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.base)]
        command += ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100"]
        with open(self.base / "server.log", "ab") as log:
            # A session of its own: a Ctrl-C at the terminal stops the test run, not the server under it
            # (``crash`` ends the server). The log stays open in the server, not here.
            return subprocess.Popen(
                command,
                env={**os.environ, **self.environment},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                **_as_owner(),
            )

    async def _wait_until_it_answers(self) -> None:
        import asyncpg

        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT_S
        while True:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"the throwaway Postgres server exited {self._process.returncode}: {self._log()}")
            try:
                conn = await asyncpg.connect(self.dsn, timeout=2)
            except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
                if loop.time() > deadline:
                    raise RuntimeError(
                        f"the throwaway Postgres server did not answer within {START_TIMEOUT_S} s ({exc!r}): "
                        f"{self._log()}"
                    ) from exc
                await asyncio.sleep(0.1)
                continue
            await conn.close()
            return

    def _log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.base / "server.log").read_text(errors="replace")[-2000:]
        return "(no log)"

    async def kill(self) -> None:
        """``SIGKILL`` the postmaster and every process it started at once, and wait until none is left.

        A crash, no shutdown. Each of the postmaster's children (backends,
        checkpointer, WAL writer) calls ``setsid()`` as it starts, so a signal
        to the postmaster's process group reaches none of them: they live on
        until they notice their postmaster gone, attached to the server's shared
        memory, and a restart meanwhile refuses to start ("pre-existing shared
        memory block ... is still in use", seen once in CI). ``crash`` stops the
        postmaster, so that it forks no more, and kills it with its children.
        """
        process = self._process
        if process is None:
            return
        await crash(process)
        self._process = None
        _RUNNING.discard(self)

    async def destroy(self) -> None:
        """Crash the server if it runs and delete the cluster's directory (it is throwaway: nothing to keep)."""
        await self.kill()
        await asyncio.to_thread(shutil.rmtree, self.base, True)


def _live_parent(pid: int) -> int | None:
    """Process ``pid``'s parent, from ``/proc``; ``None`` once it has exited (or without ``/proc``).

    A zombie has exited: it holds no shared memory, and only its parent, or
    init once the parent is gone, can reap it.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
    return None if state == "Z" else int(parent)


def children_of(parent: int) -> list[int]:
    """The processes ``parent`` started that have not exited (none without ``/proc``: then nothing is waited for)."""
    with contextlib.suppress(FileNotFoundError):
        pids = [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]
        return [pid for pid in pids if _live_parent(pid) == parent]
    return []


def _kill_with_children(parent: int) -> list[int]:
    """``SIGKILL`` ``parent`` and the processes it started; those processes.

    ``SIGSTOP`` first, so that no child is forked between the reading of its
    children and the signals.
    """
    with contextlib.suppress(ProcessLookupError):
        os.kill(parent, signal.SIGSTOP)
    children = children_of(parent)
    for pid in (parent, *children):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return children


async def crash(process: subprocess.Popen[bytes]) -> None:
    """``SIGKILL`` ``process`` and every process it started, reap it, and wait until all are gone."""
    children = await asyncio.to_thread(_kill_with_children, process.pid)
    await asyncio.to_thread(process.wait, KILL_TIMEOUT_S)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + KILL_TIMEOUT_S
    while live := [pid for pid in children if _live_parent(pid) is not None]:
        if loop.time() > deadline:
            raise RuntimeError(f"processes {live} of a throwaway Postgres server outlived {KILL_TIMEOUT_S} s of kill")
        await asyncio.sleep(0.01)


@atexit.register
def _kill_leftovers() -> None:
    """A process that ends without dropping its crashable locations leaves no server running."""
    for cluster in list(_RUNNING):
        if cluster._process is not None:
            _kill_with_children(cluster._process.pid)
        shutil.rmtree(cluster.base, ignore_errors=True)
