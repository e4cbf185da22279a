"""Running ``alkstore worker`` as a service is run: its logs, its metrics, its errors, its optional dependencies.

Real processes throughout: the log stream is read from a worker's stderr while
a throwaway Postgres cluster it serves is down; the metrics endpoint is fetched
over HTTP during a drain; the CLI's errors are the lines a shell shows; a
missing optional package is hidden from a fresh interpreter by a meta-path
blocker, as an install without the extra would lack it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import pytest

from alkstore_worker.logs import JsonLines
from tests.test_worker_processes import _defer
from tests.worker_app import LEASE_ENV, LOG_ENV, STORE_ENV
from tests.worker_processes import WorkerProcess, wait_until

ROOT = Path(__file__).resolve().parents[1]
LEVELS = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}


def _assert_structured(stderr: str) -> list[dict[str, object]]:
    """Every line of ``stderr`` is a JSON object with an ISO-8601 UTC timestamp, a level, a logger and an event."""
    lines = []
    for number, text in enumerate(stderr.splitlines(), 1):
        try:
            line = json.loads(text)
        except ValueError:
            raise AssertionError(f"stderr line {number} is no JSON object: {text!r}\n{stderr}") from None
        assert isinstance(line, dict), text
        stamp = datetime.fromisoformat(str(line["timestamp"]))
        assert stamp.utcoffset() == UTC.utcoffset(None), text
        assert line["level"] in LEVELS, text
        assert isinstance(line["logger"], str), text
        assert isinstance(line["event"], str), text
        lines.append(line)
    return lines


def _run_cli(*args: str, env: dict[str, str] | None = None, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``alkstore ARGS`` in a fresh interpreter (after ``prelude``), from the repository's root."""
    code = f"{prelude}\nimport sys\nfrom alkstore_worker.cli import main\nsys.exit(main({list(args)!r}))"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _hiding(module: str) -> str:
    """Python that makes ``import MODULE`` fail as it does where the package is not installed."""
    return (
        "import sys, importlib.abc\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r} or name.startswith({module + '.'!r}):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Hide())\n"
    )


def test_an_exception_is_an_error_event_with_its_traceback_under_a_key() -> None:
    import logging

    try:
        raise ConnectionResetError("the server went away")
    except ConnectionResetError:
        record = logging.getLogger("asyncpg.pool").makeRecord(
            "asyncpg.pool", logging.ERROR, __file__, 1, "connection lost", (), sys.exc_info()
        )
    line = json.loads(JsonLines().format(record))
    assert (line["level"], line["logger"], line["event"], line["message"]) == (
        "ERROR",
        "asyncpg.pool",
        "log",
        "connection lost",
    )
    assert line["error"] == {"type": "ConnectionResetError", "message": "the server went away"}
    assert str(line["traceback"]).startswith("Traceback (most recent call last):")
    assert "\n" not in JsonLines().format(record), "one line, whatever the traceback"


def test_warnings_other_loggers_and_an_uncaught_exception_join_the_json_stream() -> None:
    program = (
        "import logging, warnings\n"
        "from alkstore_worker import logs\n"
        "logs.configure('INFO')\n"
        "warnings.warn('this API goes away', DeprecationWarning, stacklevel=1)\n"
        "logging.getLogger('asyncpg.pool').warning('Failed to restore the pool connection floor; retrying')\n"
        "raise ConnectionRefusedError(111, 'Connect call failed')\n"
    )
    done = subprocess.run([sys.executable, "-W", "always", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    warned, pool, uncaught = _assert_structured(done.stderr)
    assert (warned["logger"], warned["event"], warned["level"]) == ("py.warnings", "warning", "WARNING")
    assert "this API goes away" in str(warned["message"])
    assert (pool["logger"], pool["event"]) == ("asyncpg.pool", "log")
    assert (uncaught["event"], uncaught["level"]) == ("uncaught_exception", "CRITICAL")
    assert uncaught["error"] == {"type": "ConnectionRefusedError", "message": "[Errno 111] Connect call failed"}
    assert "Traceback (most recent call last)" in str(uncaught["traceback"])


def test_cli_errors_are_one_line_with_status_2_for_bad_arguments_and_1_for_an_unreachable_store(
    tmp_path: Path,
) -> None:
    sqlite_app = {STORE_ENV: f"sqlite:{tmp_path / 'missing' / 'jobs.sqlite3'}", LOG_ENV: str(tmp_path / "h.jsonl")}
    cases: list[tuple[tuple[str, ...], dict[str, str], int, str]] = [
        (("jobs", "dead", "tests.worker_app:app", "--limit", "-3"), {}, 2, "argument --limit: -3: must be an int >= 1"),
        (("jobs", "dead", "tests.worker_app:app", "--limit", "0"), {}, 2, "argument --limit: 0: must be an int >= 1"),
        (("jobs", "dead", "tests.worker_app:app", "--limit", "x"), {}, 2, "argument --limit: 'x' is not an int"),
        (("jobs", "frob"), {}, 2, "invalid choice: 'frob'"),
        (("worker", "tests.worker_app:app", "--metrics-port", "70000"), {}, 2, "70000: must be a port, 0 to 65535"),
        (("worker", "tests.worker_app:app", "--max-restarts", "-1"), {}, 2, "--max-restarts=-1: must be an int >= 0"),
        (("worker", "tests.worker_app:app", "--restart-window", "0"), {}, 2, "--restart-window=0.0: must be a finite"),
        (("jobs", "dead", "tests.worker_app:app"), sqlite_app, 1, "cannot reach sqlite:"),
        (
            ("jobs", "dead", "tests.worker_app:app"),
            {STORE_ENV: "postgres:nowhere", "ALKSTORE_PG_DSN": "postgresql://postgres@127.0.0.1:9/postgres"},
            1,
            "cannot reach postgres schema nowhere (",
        ),
        (
            ("jobs", "retry", "tests.worker_app:app", "7"),
            {STORE_ENV: "postgres:nowhere", "ALKSTORE_PG_DSN": "postgresql://postgres@127.0.0.1:9/postgres"},
            1,
            "check that it runs",
        ),
    ]
    for args, env, status, says in cases:
        done = _run_cli(*args, env=env)
        assert done.returncode == status, (args, done.stderr)
        assert done.stderr.count("\n") == 1, (args, done.stderr)
        assert done.stderr.startswith("alkstore: "), (args, done.stderr)
        assert says in done.stderr, (args, done.stderr)


def test_a_worker_that_cannot_reach_its_store_says_so_in_one_json_line_and_exits_1(tmp_path: Path) -> None:
    env = {
        STORE_ENV: "postgres:nowhere",
        "ALKSTORE_PG_DSN": "postgresql://postgres@127.0.0.1:9/postgres",
        LOG_ENV: str(tmp_path / "h.jsonl"),
    }
    done = _run_cli("worker", "tests.worker_app:app", env=env)
    assert done.returncode == 1, done.stderr
    (line,) = _assert_structured(done.stderr)
    assert (line["event"], line["level"], line["store"]) == ("store_unreachable", "ERROR", "postgres schema nowhere")


def test_postgres_source_without_asyncpg_names_the_extra_that_installs_it(tmp_path: Path) -> None:
    probe = "from alkstore_postgres import PostgresSource\nPostgresSource('postgresql://db/prod')"
    done = subprocess.run(
        [sys.executable, "-c", _hiding("asyncpg") + probe], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: PostgresSource needs the asyncpg driver, which is not installed: "
        "pip install 'alkstore[postgres]'"
    )
    env = {STORE_ENV: "postgres:any", LOG_ENV: str(tmp_path / "h.jsonl")}
    worker = _run_cli("worker", "tests.worker_app:app", env=env, prelude=_hiding("asyncpg"))
    assert worker.returncode == 2, worker.stderr
    assert worker.stderr.count("\n") == 1, worker.stderr
    assert worker.stderr.endswith("pip install 'alkstore[postgres]'\n"), worker.stderr


def test_metrics_without_prometheus_client_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    env = {STORE_ENV: f"sqlite:{tmp_path / 'jobs.sqlite3'}", LOG_ENV: str(tmp_path / "h.jsonl")}
    done = _run_cli(
        "worker", "tests.worker_app:app", "--metrics-port", "0", env=env, prelude=_hiding("prometheus_client")
    )
    assert (done.returncode, done.stderr) == (
        2,
        "alkstore: --metrics-port needs the prometheus_client package: pip install 'alkstore[metrics]'\n",
    )


def _sample(text: str, name: str, **labels: str) -> float:
    """One sample's value in Prometheus text exposition (0 when the series is absent)."""
    shown = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    pattern = re.escape(f"{name}{{{shown}}}" if labels else name) + r" ([0-9.e+-]+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_each_job_counter_counts_its_events_by_task_and_queue() -> None:
    from prometheus_client import generate_latest

    from alkstore_worker.events import Counters
    from alkstore_worker.metrics import Metrics

    metrics = Metrics(Counters(in_flight=2))
    where = {"task": "send", "queue": "emails"}
    events: list[tuple[str, Mapping[str, object]]] = [
        ("start", where),
        ("retry", where),
        ("dead", {"task": None, "queue": "emails"}),
        ("lease_lost", where),
        ("lease_lost", {**where, "at": "ack"}),
        ("cancelled", where),
        ("settle_retry", where),
        ("worker_started", {}),
    ]
    for event, fields in events:
        metrics.observe(event, fields)
    text = generate_latest(metrics.registry).decode()
    expected = {
        "started": 1,
        "succeeded": 0,
        "failed": 1,
        "retried": 1,
        "cancelled": 2,
        "settle_retries": 1,
        "dead": 0,
    }
    for name, value in expected.items():
        assert _sample(text, f"alkstore_jobs_{name}_total", **where) == value, (name, text)
    assert _sample(text, "alkstore_jobs_dead_total", task="", queue="emails") == 1
    assert _sample(text, "alkstore_jobs_failed_total", task="", queue="emails") == 1
    assert _sample(text, "alkstore_jobs_in_flight") == 2


def test_the_metrics_endpoint_counts_a_drain_as_it_goes(tmp_path: Path) -> None:
    spec = f"sqlite:{tmp_path / 'jobs.sqlite3'}"
    log = tmp_path / "handlers.jsonl"
    for _ in range(12):
        asyncio.run(_defer(spec, "long_job", {"seconds": 0.25}))
    worker = WorkerProcess(spec, log, "--concurrency", "1", "--prefetch", "0", "--metrics-port", "0", "--drain")
    try:
        worker.until(lambda: any(e["event"] == "metrics_serving" for e in worker.events()), "the endpoint is up")
        (serving,) = [e for e in worker.events() if e["event"] == "metrics_serving"]
        assert serving["address"] == "127.0.0.1", "metrics listen on loopback unless told otherwise"
        url = f"http://127.0.0.1:{serving['port']}/metrics"

        def scrape() -> str:
            with urllib.request.urlopen(url, timeout=10) as response:
                return str(response.read().decode("utf-8"))

        labels = {"task": "long_job", "queue": "work"}
        worker.until(lambda: _sample(scrape(), "alkstore_jobs_succeeded_total", **labels) >= 1, "a first success")
        first = scrape()
        worker.until(
            lambda: (
                _sample(scrape(), "alkstore_jobs_succeeded_total", **labels)
                > _sample(first, "alkstore_jobs_succeeded_total", **labels)
            ),
            "the success counter moved",
        )
        second = scrape()
        assert _sample(second, "alkstore_jobs_started_total", **labels) > _sample(
            first, "alkstore_jobs_started_total", **labels
        )
        assert _sample(second, "alkstore_claim_seconds_count") > _sample(first, "alkstore_claim_seconds_count")
        # held: the one running, and the one before it while its ack is out (its slot is free by then)
        assert _sample(second, "alkstore_jobs_in_flight") in (0.0, 1.0, 2.0)
        assert worker.wait() == 0, worker.stderr()
    finally:
        worker.kill()
    _assert_structured(worker.stderr())


def test_log_lines_stay_json_with_a_timestamp_and_a_level_while_postgres_is_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from alkstore_postgres.provision import ThrowawayCluster

    try:
        cluster = asyncio.run(ThrowawayCluster.create())
    except (RuntimeError, OSError) as exc:
        if os.environ.get("CI") or os.environ.get("ALKSTORE_REQUIRE") == "1":
            raise
        pytest.skip(f"no throwaway Postgres cluster here: {exc}")
    monkeypatch.setenv("ALKSTORE_PG_DSN", cluster.dsn)
    monkeypatch.setenv(LEASE_ENV, "5")
    spec = "postgres:outage"
    log = tmp_path / "handlers.jsonl"
    worker = WorkerProcess(spec, log, "--concurrency", "2", lease_s=5.0)
    try:
        worker.wait_started()
        asyncio.run(cluster.kill())
        worker.until(
            lambda: len([e for e in worker.events() if e["event"] == "claim_error"]) >= 5, "a few failed claims"
        )
        asyncio.run(cluster.start())
        job_id = asyncio.run(_defer(spec, "long_job", {"seconds": 0}))
        wait_until(
            lambda: any(e["event"] == "success" and e["job"] == job_id for e in worker.events()),
            "a job deferred after the restart ran",
        )
        worker.signal(signal.SIGTERM)
        assert worker.wait() == 0, worker.stderr()
    finally:
        worker.kill()
        asyncio.run(cluster.destroy())
    lines = _assert_structured(worker.stderr())
    errors = [line for line in lines if line["event"] == "claim_error"]
    assert errors
    assert all(line["level"] == "WARNING" for line in errors)
