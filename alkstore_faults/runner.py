"""A library's runner: its manifest, its description, and the three subcommands the harness calls.

A runner is a program in the library's own language (docs/runtime-faults.md, "The runner protocol"); this
module finds it by name or path, checks what it says about itself, and runs its subcommands with bounded
timeouts, so a runner that hangs or prints garbage ends the run with a ``RunnerError`` naming what it did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alkstore_faults import PROTOCOL

RUNNERS = Path(__file__).resolve().parents[1] / "ecosystem" / "runners"
"""Where the runners shipped with the project live, one directory each."""
BROKERS = ("redis", "amqp", "postgres", "dir")
FAULTS = (
    "kill9",
    "pause",
    "broker_restart",
    "broker_restart_aof",
    "broker_restart_volatile",
    "net_cut",
    "slow_handler",
)
OUTCOMES = ("lost", "twice", "concurrent", "stale")
OUTLIVE_LEASE = ("pause", "slow_handler")  # they last lease_s × 1.25 and more: a run of minutes needs a short lease
MAX_LEASE_S = 24 * 60 * 60.0  # a lock of hours (graphile-worker's 4) is declared as it is, with no fault outliving it
DESCRIBE_TIMEOUT_S = 60.0
ENQUEUE_TIMEOUT_S = 60.0


class RunnerError(Exception):
    """A runner that cannot be found, or that broke the protocol: the message says which and how."""


@dataclass(frozen=True)
class Promise:
    """What a library's docs say about an outcome under some faults; ``limit`` is ``None`` for a caveat."""

    outcome: str
    faults: tuple[str, ...]
    limit: int | None
    quote: str
    doc: str

    def covers(self, fault: str) -> bool:
        return "*" in self.faults or fault in self.faults

    def as_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "faults": list(self.faults),
            "max": self.limit,
            "quote": self.quote,
            "doc": self.doc,
        }


@dataclass(frozen=True)
class Description:
    """What ``describe`` printed, checked."""

    library: str
    version: str
    settings: list[dict[str, Any]]
    lease_s: float
    recovery_window_s: float
    faults: tuple[str, ...]
    promises: tuple[Promise, ...]
    caveats: tuple[Promise, ...]


@dataclass(frozen=True)
class Runner:
    """A runner found by its manifest: its name, language, broker and the argv that starts it."""

    name: str
    language: str
    broker: str
    directory: Path
    command: tuple[str, ...]
    spec: str
    """The name or path the runner was asked for by: what a replay command must say."""

    def argv(self, *arguments: str) -> list[str]:
        return [*self.command, *arguments]

    def env(self, broker: str, queue: str, **extra: str) -> dict[str, str]:
        return {**os.environ, "ALKSTORE_FAULTS_BROKER": broker, "ALKSTORE_FAULTS_QUEUE": queue, **extra}

    def describe(self) -> Description:
        try:
            done = subprocess.run(
                self.argv("describe"),
                cwd=self.directory,
                capture_output=True,
                text=True,
                timeout=DESCRIBE_TIMEOUT_S,
                check=False,
                env=self.env("", ""),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RunnerError(f"runner {self.name!r}: describe could not run: {exc}") from exc
        if done.returncode != 0:
            raise RunnerError(f"runner {self.name!r}: describe exited {done.returncode}: {done.stderr[-1500:]}")
        try:
            return parse_description(json.loads(done.stdout))
        except (ValueError, KeyError, TypeError) as exc:
            raise RunnerError(f"runner {self.name!r}: describe printed no valid description: {exc}") from exc

    def enqueue(self, broker: str, queue: str, jobs_file: Path) -> None:
        try:
            done = subprocess.run(
                self.argv("enqueue", str(jobs_file)),
                cwd=self.directory,
                capture_output=True,
                text=True,
                timeout=ENQUEUE_TIMEOUT_S,
                check=False,
                env=self.env(broker, queue),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RunnerError(f"runner {self.name!r}: enqueue could not finish: {exc}") from exc
        if done.returncode != 0:
            raise RunnerError(f"runner {self.name!r}: enqueue exited {done.returncode}: {done.stderr[-1500:]}")


def _promise(entry: dict[str, Any], *, caveat: bool) -> Promise:
    outcome = entry["outcome"]
    if outcome not in OUTCOMES:
        raise ValueError(f"a promise's outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    faults = tuple(entry["faults"])
    unknown = [fault for fault in faults if fault != "*" and fault not in FAULTS]
    if unknown:
        raise ValueError(f"a promise names unknown faults {unknown}; known: {', '.join(FAULTS)}")
    if not str(entry["quote"]).strip() or not str(entry["doc"]).strip():
        raise ValueError(f"a promise about {outcome!r} must quote its doc and name it")
    limit = None if caveat else int(entry["max"])
    return Promise(outcome, faults, limit, str(entry["quote"]), str(entry["doc"]))


def parse_description(data: dict[str, Any]) -> Description:
    """Check a runner's ``describe`` output against docs/runtime-faults.md; a ``ValueError`` names what is wrong."""
    lease = float(data["lease_s"])
    window = float(data["recovery_window_s"])
    if not 0 < lease <= MAX_LEASE_S or not 0 < window <= 600:
        raise ValueError(
            f"lease_s and recovery_window_s must be in (0, 600] seconds (lease_s up to {MAX_LEASE_S:.0f} s for a "
            f"runner that takes no fault outliving its lease), got {lease} and {window}"
        )
    faults = tuple(data["faults"])
    unknown = [fault for fault in faults if fault not in FAULTS]
    if unknown:
        raise ValueError(f"faults names unknown faults {unknown}; known: {', '.join(FAULTS)}")
    outliving = [fault for fault in faults if fault in OUTLIVE_LEASE]
    if lease > 600 and outliving:
        raise ValueError(
            f"faults {outliving} outlive the lease, and a lease_s of {lease} s is longer than a run may last "
            "(600 s): take neither pause nor slow_handler"
        )
    settings = list(data["settings"])
    for setting in settings:
        if not {"name", "value", "doc"} <= set(setting):
            raise ValueError(f"each setting needs a name, a value and the doc it comes from, got {setting!r}")
    return Description(
        library=str(data["library"]),
        version=str(data["version"]),
        settings=settings,
        lease_s=lease,
        recovery_window_s=window,
        faults=faults,
        promises=tuple(_promise(entry, caveat=False) for entry in data.get("promises", [])),
        caveats=tuple(_promise(entry, caveat=True) for entry in data.get("caveats", [])),
    )


def _interpreter(part: str) -> str:
    """A manifest's ``{python}``: this interpreter; ``{python:NAME}``: the venv NAME's (for a library whose
    pinned dependencies conflict with another's, as Celery's Redis transport's and arq's do): the interpreter
    in ``$ALKSTORE_FAULTS_PYTHON_NAME``, else ``.venv-NAME/bin/python`` at the repository's root."""
    if part == "{python}":
        return sys.executable
    if part.startswith("{python:") and part.endswith("}"):
        name = part[len("{python:") : -1]
        default = RUNNERS.parents[1] / f".venv-{name}" / "bin" / "python"
        chosen = os.environ.get(f"ALKSTORE_FAULTS_PYTHON_{name.upper()}") or str(default)
        if not Path(chosen).is_file():
            raise ValueError(
                f"{part} needs the interpreter {chosen}, which does not exist: create it with `bash ci/faults.sh "
                f"install` or name one in ALKSTORE_FAULTS_PYTHON_{name.upper()}"
            )
        return chosen
    return part


def find_runner(name: str) -> Runner:
    """The runner ``name`` (a directory under ecosystem/runners/) or at the path ``name``; ``RunnerError`` if none."""
    candidate = Path(name)
    directory = candidate if (candidate / "runner.json").is_file() else RUNNERS / name
    manifest = directory / "runner.json"
    if not manifest.is_file():
        known = sorted(path.parent.name for path in RUNNERS.glob("*/runner.json"))
        raise RunnerError(
            f"no runner {name!r}: it is no directory with a runner.json, nor a runner in {RUNNERS}; known runners: "
            f"{', '.join(known) or 'none'}"
        )
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data["protocol"] != PROTOCOL:
            raise ValueError(f"protocol must be {PROTOCOL}, got {data['protocol']!r}")
        if data["broker"] not in BROKERS:
            raise ValueError(f"broker must be one of {', '.join(BROKERS)}, got {data['broker']!r}")
        command = tuple(_interpreter(str(part)) for part in data["command"])
        if not command:
            raise ValueError("command must not be empty")
        return Runner(str(data["name"]), str(data["language"]), str(data["broker"]), directory.resolve(), command, name)
    except (ValueError, KeyError, TypeError) as exc:
        raise RunnerError(f"{manifest}: not a runner manifest: {exc}") from exc
