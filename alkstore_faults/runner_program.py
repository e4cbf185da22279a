"""A library's runner: its manifest, its description, and the subcommands the harness calls.

A runner is a program in the library's own language (docs/runtime-faults.md, "The runner protocol"); this
module finds it by name or path, checks what it says about itself, and runs its subcommands with bounded
timeouts, so a runner that hangs or prints garbage ends the run with a ``RunnerError`` naming what it did;
except ``inspect``, whose failure ends nothing: each job's state is then ``unknown``, with the reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alkstore_contract.hazards import PROMISABLE
from alkstore_faults import PROTOCOLS
from alkstore_faults.promises import Promise, parse_promises
from alkstore_faults.schedule_spec import ScheduleSpec, parse_workloads

ECOSYSTEM = Path(__file__).resolve().parents[1] / "ecosystem"
"""Where the libraries the project judges live, one folder each (``ecosystem/<library>/``): a library's runners
are its directories named ``runner`` or ``runner_<variant>`` holding a ``runner.json``, whose ``name`` is the
runner's name (``ecosystem/celery/runner_redis/`` is ``celery_redis``)."""
RUNNER_MANIFESTS = "*/runner*/runner.json"
BROKERS = ("redis", "amqp", "beanstalkd", "postgres", "dir")
FAULTS = (
    "kill9",
    "startup",
    "pause",
    "broker_restart",
    "broker_restart_aof",
    "broker_restart_volatile",
    "net_cut",
    "slow_handler",
)
PROMISE_OUTCOMES = tuple(hazard.value for hazard in PROMISABLE)
OUTLIVE_LEASE = ("pause", "slow_handler")  # they last lease_s × 1.25 and more: a run of minutes needs a short lease
MAX_LEASE_S = 24 * 60 * 60.0  # a lock of hours (graphile-worker's 4) is declared as it is, with no fault outliving it
DESCRIBE_TIMEOUT_S = 60.0
ENQUEUE_TIMEOUT_S = 60.0
INSPECT_TIMEOUT_S = 60.0
STATES = ("completed", "failed", "dead", "queued", "scheduled", "running", "absent", "unknown")
"""What ``inspect`` may say of a job (docs/runtime-faults.md, "inspect")."""
MISSING = (
    re.compile(r"runner needs the (?:Python|npm|Ruby|Debian) package [^\n]*"),
    re.compile(r"PackageNotFoundError: No package metadata was found for (\S+)"),
    re.compile(r"ModuleNotFoundError: No module named '([^'.]+)"),
    re.compile(r"Error: Cannot find module '([^'./][^']*)'"),
    re.compile(r"cannot load such file -- ([^./\s][^\s]*) \(LoadError\)"),
)
"""A missing client library in a runner's stderr: runner_cli's, runner_protocol.js's, runner_protocol.rb's and
RunnerProtocol.java's own line (a Java runner's jars come from Debian's packages, so its line names the Debian
package), or the plain error of a runner that imports its library before any could say so."""


class RunnerError(Exception):
    """A runner that cannot be found, or that broke the protocol: the message says which and how."""


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
    policies: tuple[dict[str, Any], ...] = ()
    """Failures the library's documented settings cause: ``state``, ``reason`` (a substring of inspect's),
    ``setting``, ``quote``, ``doc``."""
    recovery_rules: tuple[dict[str, Any], ...] = ()
    """Documented rules that run a held or waiting job again: ``state``, ``after_s``, ``rule``, ``quote``, ``doc``."""
    warmup_s: float = 0.0
    """The runner's documented warm-up: how long after start a worker may take before the harness strikes."""
    extra: dict[str, Any] | None = None
    """What else describe said that the report keeps as it is: ``inspect_doc``, ``variant_of``, ``left_out``."""
    workloads: tuple[str, ...] = ("jobs",)
    """The workloads the runner serves (``jobs``, ``schedule``); a runner that names none serves ``jobs``."""
    schedule: ScheduleSpec | None = None
    """Its library's scheduler for the ``schedule`` workload, when it serves it (``alkstore_faults.schedule_spec``)."""


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
    protocol: int = 1

    def argv(self, *arguments: str) -> list[str]:
        return [*self.command, *arguments]

    def env(self, broker: str, queue: str, **extra: str) -> dict[str, str]:
        return {**os.environ, "ALKSTORE_FAULTS_BROKER": broker, "ALKSTORE_FAULTS_QUEUE": queue, **extra}

    def call(self, arguments: list[str], timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """Run one subcommand in the runner's directory, its output captured, bounded by ``timeout``: the one way
        the harness, and the tests that run a runner as the harness does, start a subcommand."""
        return subprocess.run(
            self.argv(*arguments),
            cwd=self.directory,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )

    def describe(self) -> Description:
        try:
            done = self.call(["describe"], DESCRIBE_TIMEOUT_S, self.env("", ""))
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RunnerError(f"runner {self.name!r}: describe could not run: {exc}") from exc
        if done.returncode != 0:
            missing = missing_package(done.stderr)
            if missing is not None:
                raise RunnerError(f"runner {self.name!r}: {missing}")
            raise RunnerError(f"runner {self.name!r}: describe exited {done.returncode}: {done.stderr[-1500:]}")
        try:
            return parse_description(json.loads(done.stdout))
        except (ValueError, KeyError, TypeError) as exc:
            raise RunnerError(f"runner {self.name!r}: describe printed no valid description: {exc}") from exc

    def enqueue(self, broker: str, queue: str, jobs_file: Path, state: Path | None = None) -> None:
        extra = {} if state is None else {"ALKSTORE_FAULTS_STATE": str(state)}
        try:
            done = self.call(["enqueue", str(jobs_file)], ENQUEUE_TIMEOUT_S, self.env(broker, queue, **extra))
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RunnerError(f"runner {self.name!r}: enqueue could not finish: {exc}") from exc
        if done.returncode != 0:
            raise RunnerError(f"runner {self.name!r}: enqueue exited {done.returncode}: {done.stderr[-1500:]}")

    def inspect(self, broker: str, queue: str, jobs_file: Path, state: Path, jobs: list[str]) -> list[dict[str, Any]]:
        """What the library holds for each of ``jobs`` (protocol 2), never raising: a runner that crashes, hangs
        or prints garbage gets ``unknown`` for every job it did not answer, with the reason."""
        env = self.env(broker, queue, ALKSTORE_FAULTS_STATE=str(state))
        try:
            done = self.call(["inspect", str(jobs_file)], INSPECT_TIMEOUT_S, env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return [unknown(job, f"inspect could not finish: {exc}") for job in jobs]
        if done.returncode != 0:
            tail = (missing_package(done.stderr) or done.stderr.strip()[-300:]).replace("\n", " ")
            return [unknown(job, f"inspect exited {done.returncode}: {tail}") for job in jobs]
        return parse_states(done.stdout, jobs)


def unknown(job: str, reason: str) -> dict[str, Any]:
    """The state of a job the runner could not read: never a guess."""
    return {
        "job": job,
        "state": "unknown",
        "library_state": None,
        "reason": reason,
        "until": None,
        "held_by": None,
        "attempts": None,
    }


def parse_states(output: str, jobs: list[str]) -> list[dict[str, Any]]:
    """``inspect``'s lines, one per job of ``jobs`` in that order: a line that is no valid state makes its job
    (or, when it names none, every job left unanswered) ``unknown`` with why; a job no line names, too."""
    found: dict[str, dict[str, Any]] = {}
    garbage: list[str] = []
    for number, text in enumerate(output.splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
            job = str(line["job"])
            state = line["state"]
            if state not in STATES:
                raise ValueError(f"state must be one of {', '.join(STATES)}, got {state!r}")
            until = line.get("until")
            found[job] = {
                "job": job,
                "state": state,
                "library_state": None if line.get("library_state") is None else str(line["library_state"]),
                "reason": None if line.get("reason") is None else str(line["reason"]),
                "until": None if until is None else float(until),
                "held_by": None if line.get("held_by") is None else str(line["held_by"]),
                "attempts": None if line.get("attempts") is None else int(line["attempts"]),
            }
        except (ValueError, KeyError, TypeError) as exc:
            garbage.append(f"line {number}: {exc}")
    why = f"inspect printed no valid state for it ({'; '.join(garbage)[:300]})" if garbage else "inspect said nothing"
    return [found.get(job) or unknown(job, why) for job in jobs]


def missing_package(stderr: str) -> str | None:
    """One line naming the package a runner lacks, when its stderr says one is missing; ``None`` otherwise."""
    for pattern in MISSING:
        match = pattern.search(stderr)
        if match:
            return match.group(0) if not match.groups() else f"runner needs the package {match.group(1)!r}: install it"
    return None


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
    policies = tuple(dict(policy) for policy in data.get("policies", []))
    for policy in policies:
        if policy.get("state") not in ("failed", "dead") or not {"reason", "setting", "quote", "doc"} <= set(policy):
            raise ValueError(
                f"each policy needs a state (failed or dead), a reason, a setting, a quote and a doc, got {policy!r}"
            )
    rules = tuple(dict(rule) for rule in data.get("recovery_rules", []))
    for rule in rules:
        after = rule.get("after_s")
        if rule.get("state") not in ("running", "scheduled") or not {"rule", "quote", "doc"} <= set(rule):
            raise ValueError(
                f"each recovery rule needs a state (running or scheduled), an after_s, a rule, a quote and a doc, "
                f"got {rule!r}"
            )
        if after is not None and not (isinstance(after, int | float) and after >= 0):
            raise ValueError(f"a recovery rule's after_s must be seconds (a number ≥ 0) or null, got {after!r}")
    workloads, schedule = parse_workloads(data)
    warmup = float(data.get("warmup_s", 0.0))
    if not 0 <= warmup <= 60:
        raise ValueError(f"warmup_s must be in [0, 60] seconds, got {warmup}")
    return Description(
        library=str(data["library"]),
        version=str(data["version"]),
        settings=settings,
        lease_s=lease,
        recovery_window_s=window,
        faults=faults,
        promises=parse_promises(data.get("promises", []), PROMISE_OUTCOMES, FAULTS, caveat=False, subject="a promise"),
        caveats=parse_promises(data.get("caveats", []), PROMISE_OUTCOMES, FAULTS, caveat=True, subject="a promise"),
        policies=policies,
        recovery_rules=rules,
        warmup_s=warmup,
        extra={key: data[key] for key in ("inspect_doc", "variant_of", "left_out") if key in data},
        workloads=workloads,
        schedule=schedule,
    )


def _interpreter(part: str) -> str:
    """A manifest's ``{python}``: this interpreter; ``{python:NAME}``: the venv NAME's (for a library whose
    pinned dependencies conflict with another's, as Celery's Redis transport's and arq's do): the interpreter
    in ``$ALKSTORE_FAULTS_PYTHON_NAME``, else ``.venv-NAME/bin/python`` at the repository's root."""
    if part == "{python}":
        return sys.executable
    if part.startswith("{python:") and part.endswith("}"):
        name = part[len("{python:") : -1]
        default = ECOSYSTEM.parent / f".venv-{name}" / "bin" / "python"
        chosen = os.environ.get(f"ALKSTORE_FAULTS_PYTHON_{name.upper()}") or str(default)
        if not Path(chosen).is_file():
            raise ValueError(
                f"{part} needs the interpreter {chosen}, which does not exist: create it with `bash ci/faults.sh "
                f"install` or name one in ALKSTORE_FAULTS_PYTHON_{name.upper()}"
            )
        return chosen
    return part


def shipped_runners() -> dict[str, Path]:
    """Each runner shipped in the checkout's ``ecosystem/``, by the name its manifest gives, to its directory."""
    found: dict[str, Path] = {}
    for manifest in sorted(ECOSYSTEM.glob(RUNNER_MANIFESTS)):
        try:
            name = json.loads(manifest.read_text(encoding="utf-8"))["name"]
        except (OSError, ValueError, KeyError, TypeError):
            name = manifest.parent.name  # find_runner names what is wrong with it when it is asked for
        found[str(name)] = manifest.parent
    return found


def runner_directory(name: str) -> Path:
    """The directory of the shipped runner ``name``; ``RunnerError`` naming the known ones if there is none."""
    shipped = shipped_runners()
    if name not in shipped:
        raise RunnerError(
            f"no runner {name!r}: it is no directory with a runner.json, nor a runner in {ECOSYSTEM}; known "
            f"runners: {', '.join(sorted(shipped)) or 'none'}"
        )
    return shipped[name]


def find_runner(name: str) -> Runner:
    """The runner ``name`` (shipped under ecosystem/<library>/) or at the path ``name``; ``RunnerError`` if none."""
    candidate = Path(name)
    if (candidate / "runner.json").is_file():
        directory = candidate
    elif ECOSYSTEM.is_dir():
        directory = runner_directory(name)
    else:
        raise RunnerError(
            f"no runner {name!r}: the shipped runners are programs in their libraries' languages and live in a "
            f"checkout of alkstore (ecosystem/<library>/runner*/), not in the installed package; run alkstore faults "
            f"from a checkout or an unpacked sdist (pip download --no-deps --no-binary :all: alkstore), or name the "
            f"directory of a runner.json"
        )
    manifest = directory / "runner.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data["protocol"] not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(map(str, PROTOCOLS))}, got {data['protocol']!r}")
        if data["broker"] not in BROKERS:
            raise ValueError(f"broker must be one of {', '.join(BROKERS)}, got {data['broker']!r}")
        command = tuple(_interpreter(str(part)) for part in data["command"])
        if not command:
            raise ValueError("command must not be empty")
        return Runner(
            str(data["name"]),
            str(data["language"]),
            str(data["broker"]),
            directory.resolve(),
            command,
            name,
            int(data["protocol"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise RunnerError(f"{manifest}: not a runner manifest: {exc}") from exc
