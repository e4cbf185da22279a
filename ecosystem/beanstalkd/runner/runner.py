"""The beanstalkd runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``,
``inspect JOBS_FILE``.

beanstalkd is a server with a protocol, not a library with a worker: a team writes the worker loop its protocol
document describes, here with ``greenstalk``, the Python client. Each job is put with a time-to-run (TTR) of
``TTR_S``; the worker reserves one job at a time, touches it while the handler runs (the protocol's recipe for a job
that may outlive its TTR), deletes it when the handler succeeded, and releases it with a delay when the handler
failed, burying it after ``MAX_RELEASES`` releases. The worker reconnects when its connection breaks, as a
long-running consumer must. ``broker_restart_aof`` runs the broker with its binlog (``-b DIR -f 0``),
``broker_restart_volatile`` and every other fault without (alkstore_faults/brokers.py), as the Redis brokers run with
and without AOF.

The delete of a job whose reservation lapsed is refused by the server (``NOT_FOUND``): the worker writes that as
the run's ``ack`` record (accepted or refused), so a late completion is seen fenced or taken.

``inspect`` asks beanstalkd's ``stats-job`` for each job (the ids beanstalkd assigned are kept in the run's state
directory); a job beanstalkd no longer has was deleted, by a completed run or never.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from importlib.metadata import version
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlparse

from alkstore_ecosystem_kit.runner_description import caveat, every_fault, promise

from alkstore_faults.handler import JobFailed, perform, record_ack
from alkstore_faults.runner_cli import NO_STATE, Job, State, serve

PROTOCOL = "https://github.com/beanstalkd/beanstalkd/blob/master/doc/protocol.txt"
MANUAL = "https://manpages.debian.org/bookworm/beanstalkd/beanstalkd.1.en.html"
GREENSTALK = "https://greenstalk.readthedocs.io/en/stable/api.html"
TTR_S = 5
"""The time-to-run each job is put with: the lease after which beanstalkd gives a silent worker's job away."""
TOUCH_EVERY_S = TTR_S / 3
"""How often the worker touches the job it runs: well inside its TTR, whose last second is the server's margin."""
RELEASE_DELAY_S = 1
MAX_RELEASES = 3
RESERVE_TIMEOUT_S = 1
"""How long one ``reserve-with-timeout`` waits, so a worker told to stop notices within a second."""


def _server_version() -> str:
    """The installed server's own ``beanstalkd -v``. ``describe`` needs no broker: without the server it says so
    here, and the harness's start of the throwaway broker fails naming the install (alkstore_faults/brokers.py)."""
    binary = shutil.which("beanstalkd")
    if binary is None:
        return "beanstalkd not installed (apt-get install beanstalkd)"
    return subprocess.run([binary, "-v"], capture_output=True, text=True, check=True, timeout=10).stdout.strip()


TTR_RULE = (
    "If the worker does not delete, release, or bury the job within <ttr> seconds, the job will time out and the "
    "server will release the job."
)
DESCRIPTION = {
    "library": "beanstalkd",
    "version": f"{_server_version()}, greenstalk {version('greenstalk')}",
    "settings": [
        {"name": "put <ttr>", "value": TTR_S, "doc": PROTOCOL},
        {"name": "touch <id> every TTR/3 s while the handler runs", "value": round(TOUCH_EVERY_S, 3), "doc": PROTOCOL},
        {"name": "delete <id> after the handler succeeded", "value": "on", "doc": PROTOCOL},
        {"name": "release <id> <pri> <delay> after the handler failed", "value": RELEASE_DELAY_S, "doc": PROTOCOL},
        {"name": "bury <id> after releases (stats-job releases)", "value": MAX_RELEASES, "doc": PROTOCOL},
        {"name": "reserve-with-timeout <seconds>", "value": RESERVE_TIMEOUT_S, "doc": PROTOCOL},
        {
            "name": "beanstalkd -b DIR -f 0 (broker_restart_aof only)",
            "value": "binlog, fsync every write",
            "doc": MANUAL,
        },
        {
            "name": "greenstalk.Client(address, use=tube, watch=tube)",
            "value": "the run's queue as tube",
            "doc": GREENSTALK,
        },
    ],
    "lease_s": float(TTR_S),
    "recovery_window_s": TTR_S + 10.0,
    "faults": every_fault("beanstalkd"),
    "inspect_doc": PROTOCOL,
    "promises": [
        promise("lost", ["kill9", "startup", "pause", "net_cut", "slow_handler"], TTR_RULE, PROTOCOL),
        promise(
            "lost",
            ["broker_restart_aof"],
            "Upon startup, beanstalkd will recover any binlog that is present in path, then, during normal "
            "operation, append new jobs and changes in state to the binlog.",
            MANUAL,
        ),
        promise(
            "stale",
            ["*"],
            '"NOT_FOUND\\r\\n" if the job does not exist or is not either reserved by the client, ready, or '
            "buried. This could happen if the job timed out before the client sent the delete command.",
            PROTOCOL,
        ),
    ],
    "caveats": [
        caveat(
            "lost",
            ["broker_restart_volatile"],
            "Use a binlog to keep jobs on persistent storage in directory path.",
            MANUAL,
        ),
        caveat(
            "twice", ["*"], "When the job times out, the server will put the job back into the ready queue.", PROTOCOL
        ),
    ],
    "policies": [
        {
            "state": "dead",
            "reason": "buried",
            "setting": "bury <id> after releases (stats-job releases)",
            "quote": "Buried jobs are put into a FIFO linked list and will not be touched by the server again until a "
            'client kicks them with the "kick" command.',
            "doc": PROTOCOL,
        },
    ],
    "recovery_rules": [
        {
            "state": "running",
            "after_s": float(TTR_S),
            "rule": f"a reserved job whose worker neither deletes, releases, buries nor touches it within its "
            f"{TTR_S} s TTR is released to the ready queue",
            "quote": TTR_RULE,
            "doc": PROTOCOL,
        },
        {
            "state": "scheduled",
            "after_s": float(RELEASE_DELAY_S),
            "rule": "a job released with a delay is delayed, then ready",
            "quote": "<delay> is an integer number of seconds to wait before putting the job in the ready queue.",
            "doc": PROTOCOL,
        },
    ],
}


DELETE_FIRST = False
"""The broken copy's switch (``--delete-first``, tests/fault_runtimes/beanstalkd_delete_first): delete each job as
soon as it is reserved, before its handler runs. Never set by the shipped runner."""


def _address() -> tuple[str, int]:
    parsed = urlparse(os.environ["ALKSTORE_FAULTS_BROKER"])
    assert parsed.hostname is not None
    assert parsed.port is not None
    return parsed.hostname, parsed.port


def _client() -> Any:
    import greenstalk

    tube = os.environ["ALKSTORE_FAULTS_QUEUE"]
    return greenstalk.Client(_address(), use=tube, watch=tube)


def _ids_file() -> Path:
    return Path(os.environ["ALKSTORE_FAULTS_STATE"]) / "beanstalkd-job-ids.json"


def enqueue(jobs: list[Job]) -> None:
    ids = json.loads(_ids_file().read_text()) if _ids_file().exists() else {}
    with _client() as client:
        for job in jobs:
            ids[job["id"]] = client.put(json.dumps(job), ttr=TTR_S)
    _ids_file().write_text(json.dumps(ids))


def state_of(job: str, stats: dict[str, Any] | None, now: float) -> State:
    """A job's state from its ``stats-job`` (``None``: NOT_FOUND, the job was deleted)."""
    state: State = {**NO_STATE, "job": job}
    if stats is None:
        return {**state, "state": "absent", "library_state": "NOT_FOUND (deleted)"}
    words = {"ready": "queued", "reserved": "running", "delayed": "scheduled", "buried": "dead"}
    state.update(state=words[stats["state"]], library_state=stats["state"], attempts=int(stats["reserves"]))
    if stats["state"] in ("reserved", "delayed"):
        state["until"] = now + float(stats["time-left"])
    if stats["state"] == "buried":
        state["reason"] = f"buried after {stats['releases']} releases"
    return state


def inspect(jobs: list[Job]) -> list[State]:
    """Each job's state as beanstalkd's ``stats-job`` gives it (docs/runtime-faults.md, inspect)."""
    import greenstalk

    ids = json.loads(_ids_file().read_text())
    states = []
    with _client() as client:
        for job in jobs:
            try:
                stats = dict(client.stats_job(ids[job["id"]]))
            except greenstalk.NotFoundError:
                stats = None
            states.append(state_of(job["id"], stats, time.time()))
    return states


class _Toucher(threading.Thread):
    """Touches the reserved job every ``TOUCH_EVERY_S`` until stopped: a live worker keeps its reservation."""

    def __init__(self, client: Any, lock: threading.Lock, job: Any) -> None:
        super().__init__(daemon=True)
        self.client, self.lock, self.job = client, lock, job
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(TOUCH_EVERY_S):
            try:
                with self.lock:
                    self.client.touch(self.job)
            except Exception as error:  # a broken connection or a lost reservation: the main loop finds out
                sys.stderr.write(f"touch of job {self.job.id} failed: {error!r}\n")
                return


def _run_one(client: Any, lock: threading.Lock, reserved: Any) -> None:
    """Run one reserved job: touch it while the handler runs, then delete, release or bury it."""
    import greenstalk

    with lock:
        stats = client.stats_job(reserved)
    job = json.loads(reserved.body)
    if DELETE_FIRST:
        with lock:
            client.delete(reserved)
        perform(job["id"], job["duration_s"], job["fail"], int(stats["reserves"]))
        return
    toucher = _Toucher(client, lock, reserved)
    toucher.start()
    try:
        perform(job["id"], job["duration_s"], job["fail"], int(stats["reserves"]))
    except JobFailed:
        toucher.done.set()
        with lock:
            if int(stats["releases"]) >= MAX_RELEASES:
                client.bury(reserved)
            else:
                client.release(reserved, delay=RELEASE_DELAY_S)
        return
    finally:
        toucher.done.set()
        toucher.join()
    with lock:
        try:
            client.delete(reserved)
        except greenstalk.NotFoundError:
            record_ack(job["id"], int(stats["reserves"]), False)
            return
    record_ack(job["id"], int(stats["reserves"]), True)


def worker() -> None:
    import greenstalk

    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    while not stopping.is_set():
        try:
            with _client() as client:
                lock = threading.Lock()
                while not stopping.is_set():
                    try:
                        with lock:
                            reserved = client.reserve(timeout=RESERVE_TIMEOUT_S)
                    except (greenstalk.TimedOutError, greenstalk.DeadlineSoonError):
                        continue
                    _run_one(client, lock, reserved)
        except (OSError, greenstalk.Error) as error:  # the server went away or the connection was cut: reconnect
            sys.stderr.write(f"connection to beanstalkd lost: {error!r}; reconnecting\n")
            time.sleep(0.5)


def main(argv: list[str]) -> int:
    """``--delete-first`` runs the broken copy: an acknowledgement before the work, which the checker must catch."""
    global DELETE_FIRST
    if argv[:1] == ["--delete-first"]:
        DELETE_FIRST = True
        description = {**DESCRIPTION, "library": "beanstalkd (broken copy: delete before the handler runs)"}
        return serve(description, enqueue, worker, argv[1:], inspect=inspect)
    return serve(DESCRIPTION, enqueue, worker, argv, inspect=inspect)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
