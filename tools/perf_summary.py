"""README's performance summary, generated from the committed benchmark runs (docs/benchmarks/runs/*.json).

``python -m tools.perf_summary`` rewrites the block between ``<!-- perf-summary -->``
and ``<!-- /perf-summary -->`` in README.md; ``tests/test_readme.py`` fails when the
block and the runs disagree, so a figure in the README is always one a committed run
measured. The summary quotes the latest runs only: the two latest ``throughput.py``
runs of Postgres (each ratio as the two values), the latest run of SQLite and of mem,
the latest ``many_workers.py`` run and the latest ``worker.py`` run of the fair harness (``WORKER_FORMAT``;
its equal-slots ratios only, with their ranges and the load average). A new run is committed as JSON beside the
others (docs/benchmarks.md, "How to reproduce"), and this script is run again.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "docs" / "benchmarks" / "runs"
README = REPO / "README.md"
BLOCK = re.compile(r"(<!-- perf-summary -->\n)(.*?)(<!-- /perf-summary -->)", re.DOTALL)
THROUGHPUT = ["engine", "path", "workers", "implementation", "jobs/s (median)"]
MANY_WORKERS = ["engine", "path", "workers", "alkstore (jobs/s)"]
WIDTH = 100
"""The README's line length."""
PATHS = ("enqueue", "enqueue_many", "claim_one+ack", "claim_batch+ack_batch")
LABELS = {
    "enqueue": "`enqueue`",
    "enqueue_many": "`enqueue_many` (100)",
    "claim_one+ack": "`claim_one` + `ack`",
    "claim_batch+ack_batch": "`claim_batch` + `ack_batch` (100)",
}


@dataclass(frozen=True)
class Table:
    """One table of a committed run, its rows as dicts by column, and when and how the run was taken."""

    started: str
    command: str
    rows: list[dict[str, str]]


def tables(columns: list[str]) -> list[Table]:
    """Every committed table whose columns begin with ``columns``, oldest run first."""
    found: list[Table] = []
    for path in sorted(RUNS.glob("*.json")):
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        runs = record["runs"]
        for index, table in enumerate(record["tables"]):
            if table["columns"][: len(columns)] != columns or index >= len(runs):
                continue
            rows = [dict(zip(table["columns"], row, strict=True)) for row in table["rows"]]
            found.append(Table(runs[index]["started"], runs[index]["command"], rows))
    return sorted(found, key=lambda table: table.started)


def latest(found: list[Table], engine: str, count: int) -> list[Table]:
    """The ``count`` latest tables that hold ``engine``'s rows."""
    return [table for table in found if any(row["engine"] == engine for row in table.rows)][-count:]


def _row(table: Table, engine: str, path: str, workers: str, implementation: str) -> dict[str, str]:
    wanted = [engine, path, workers, implementation]
    for row in table.rows:
        if [row["engine"], row["path"], row["workers"], row["implementation"]] == wanted:
            return row
    raise LookupError(f"run of {table.started}: no {engine} {path} {workers}-worker row of {implementation}")


def ratio(table: Table, engine: str, path: str, workers: str, implementation: str) -> str:
    """alkstore's jobs/s over ``implementation``'s on one path, as the run's last column wrote it."""
    return _row(table, engine, path, workers, implementation)["alkstore ÷ this"]


def jobs_per_s(table: Table, engine: str, path: str, workers: str) -> str:
    """alkstore's jobs/s (the median of the run) on one path."""
    return _row(table, engine, path, workers, "alkstore")["jobs/s (median)"]


WORKER_FORMAT = "worker.py/2"
"""The JSON ``benchmarks/worker.py`` writes since its comparison became fair; older worker runs are history only."""
PEERS = (
    ("pgqueuer", "pgqueuer's"),
    ("procrastinate", "procrastinate's"),
    ("celery-redis", "Celery's on Redis"),
    ("celery-rabbitmq", "on RabbitMQ"),
    ("rq", "RQ's"),
)


def worker_runs(runs: Path = RUNS) -> list[dict[str, Any]]:
    """Every committed ``worker.py`` run in the fair harness's format, oldest first."""
    found = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(runs.glob("*.json"))]
    fair = [record for record in found if record.get("format") == WORKER_FORMAT and record["runs"]]
    return sorted(fair, key=lambda record: str(record["runs"][0]["started"]))


def _named(record: dict[str, Any], name: str) -> list[dict[str, str]]:
    (table,) = [table for table in record["tables"] if table["name"] == name]
    return [dict(zip(table["columns"], row, strict=True)) for row in table["rows"]]


def workers_sentence(runs: Path = RUNS) -> str:
    """The latest fair ``worker.py`` run: alkstore's worker draining a backlog beside the peers' own workers.

    Only equal-slots, no-op rows are quoted: every peer's at the run's largest process count and
    pgqueuer's at its smallest, each as the ratio of alkstore-postgres's jobs/s to the peer's pass by
    pass (median and range), with the load average over all the run's passes; a peer that failed is
    named as failed, never given a ratio.
    """
    fair = worker_runs(runs)
    if not fair:
        return (
            "End to end through `alkstore worker`: no run of the fair harness (docs/benchmarks.md, Workers) is "
            "committed yet; the earlier worker figures gave the peers fewer slots and are withdrawn."
        )
    record = fair[-1]
    settings = record["settings"]
    processes, fewest = str(max(settings["processes"])), str(min(settings["processes"]))
    rows = {
        (row["system"], row["processes"], row["handler"]): row
        for row in _named(record, "drain")
        if row["point"] == "equal"
    }
    equal = {(system, count): row for (system, count, handler), row in rows.items() if handler == "noop"}

    def ratio(peer: str, count: str, handler: str = "noop") -> str:
        row = rows[peer, count, handler]
        return row["alkstore-postgres ÷ this (median, range)"] or row["drain jobs/s (median)"]

    def slept(count: str) -> str:
        return ", ".join(
            f"{ratio(peer, count, 'sleep')} {label.removesuffix(' own workers')}"
            for peer, label in PEERS
            if (peer, count, "sleep") in rows
        )

    peers = ", ".join(f"{ratio(peer, processes)} {label}" for peer, label in PEERS if (peer, processes) in equal)
    if fewest != processes and ("pgqueuer", fewest) in equal:
        peers += f" own workers, and {ratio('pgqueuer', fewest)} pgqueuer's at {fewest} process(es)"
    else:
        peers += " own workers"
    wait = {row["system"]: row for row in _named(record, "latency")}
    loads = [float(run[key][0]) for run in record["runs"] for key in ("load_at_start", "load_at_end")]
    started = record["runs"][0]["started"][:10]
    latency = "; ".join(
        f"enqueue-to-start p50 {wait[system]['enqueue→start p50 (ms)']} ms, p99 {wait[system]['p99 (ms)']} ms {how}"
        for system, how in (("alkstore-postgres", "on Postgres with NOTIFY"), ("alkstore-sqlite", "on SQLite"))
        if system in wait
    )
    return (
        f"End to end through `alkstore worker` (`{record['runs'][0]['command'].split(' --json')[0]}`, {started}; "
        f"{settings['passes']} interleaved passes, load average {min(loads):.2f}–{max(loads):.2f}): draining "
        f"{settings['jobs']:,} jobs with a no-op handler, {processes} processes × {settings['slots']} slots for "
        f"every system, alkstore on Postgres ran {peers} (median and range of the passes); with a 10 ms "
        f"handler, the same slots, {slept(processes)} at {processes} processes and {slept(fewest)} at {fewest} "
        f"(below 1× the peer was faster); {latency}."
    )


def _span(values: list[str]) -> str:
    """``0.95×`` for one value or equal values, ``0.95–0.98×`` for a range (smallest first)."""
    numbers = sorted({float(value.rstrip("×")) for value in values})
    if len(numbers) == 1:
        return f"{numbers[0]:.2f}×"
    return f"{numbers[0]:.2f}–{numbers[-1]:.2f}×"


def summary() -> str:
    """The README's block, from the committed runs."""
    runs = tables(THROUGHPUT)
    pg = latest(runs, "postgres", 2)
    dates = ", ".join(table.started[:16].replace("T", " ") for table in pg)
    per_path = "; ".join(
        f"{LABELS[path]} "
        + " / ".join(_span([ratio(t, "postgres", path, w, "asyncpg (raw)") for t in pg]) for w in ("1", "4"))
        for path in PATHS
    )
    pgq = [_span([ratio(t, "postgres", "enqueue_many", w, "pgqueuer") for t in pg]) for w in ("1", "4")]
    consume = _span([ratio(t, "postgres", "consume", "4", "pgqueuer (batch_size=100)") for t in pg])
    (lite,) = latest(runs, "sqlite", 1)
    sqlite = _span(
        [
            row["alkstore ÷ this"]
            for row in lite.rows
            if row["engine"] == "sqlite" and row["implementation"] == "aiosqlite (raw)"
        ]
    )
    (mem,) = latest(runs, "mem", 1)
    (many,) = latest(tables(MANY_WORKERS), "postgres", 1)
    lines = [
        f"Postgres (`{pg[-1].command}`, the latest {len(pg)} runs: {dates} UTC), the engine ÷ bare asyncpg "
        f"running the same statements, 1 worker / 4 workers: {per_path}.",
        f"Against pgqueuer on the same server: `enqueue_many` {pgq[0]} (1 worker) and {pgq[1]} (4); "
        f"4 workers' batched claims {consume} its best consume.",
        f"16 workers (one process, or 4 × 4; {many.started[:10]}): {_span([row['ratio'] for row in many.rows])} "
        "the bare driver's.",
        f"SQLite ({lite.started[:10]}): {sqlite} its bare aiosqlite on every path; mem: "
        f"{jobs_per_s(mem, 'mem', 'enqueue', '1')} `enqueue`s and {jobs_per_s(mem, 'mem', 'claim_one+ack', '1')} "
        "`claim_one` + `ack`s a second, 1 worker.",
        workers_sentence(),
        "Method, the latest tables and how to reproduce them: [docs/benchmarks.md](docs/benchmarks.md); every "
        "run as JSON: [docs/benchmarks/runs/](docs/benchmarks/runs); scale: [docs/scale.md](docs/scale.md).",
    ]
    return textwrap.fill(" ".join(lines), width=WIDTH, break_long_words=False, break_on_hyphens=False) + "\n"


def regenerate(text: str) -> str:
    """``text`` (README.md) with its summary block rewritten from the committed runs."""
    return BLOCK.sub(lambda match: match.group(1) + summary() + match.group(3), text)


def main() -> None:
    README.write_text(regenerate(README.read_text(encoding="utf-8")), encoding="utf-8")
    sys.stderr.write(f"{README} performance summary regenerated from {RUNS}\n")


if __name__ == "__main__":
    main()
