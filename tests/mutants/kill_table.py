"""Run the suite against every mutant and write the kill table (``docs/mutants.md``).

``python -m tests.mutants.kill_table`` regenerates the page; ``tests/test_mutants.py``
uses ``run_suite`` and asserts that every mutant is killed by a row citing its clause.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.mutants.catalog import CatalogEntry, catalog

REPO = Path(__file__).resolve().parents[2]
SEED = 20261129
"""One fixed seed, so the kill table is the same on every run."""


def run_suite(entries: list[CatalogEntry], report_path: Path, *, workers: int = 2) -> dict[str, Any]:
    """One pytest run of every row on every mutant; returns the JSON report."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    env.pop("ALKSTORE_REQUIRE", None)
    with tempfile.TemporaryDirectory(prefix="alkstore-mutants-") as scratch:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                scratch,
                "-c",
                os.devnull,
                "--rootdir",
                scratch,
                "-p",
                "no:cacheprovider",
                "-q",
                "-n",
                str(workers),
                f"--alkstore-seed={SEED}",
                f"--alkstore-report={report_path}",
                "--alkstore-engine=" + ",".join(entry.spec for entry in entries),
            ],
            env=env,
            cwd=scratch,
            check=False,
            capture_output=True,
        )
    data: dict[str, Any] = json.loads(report_path.read_text(encoding="utf-8"))
    return data


def killers(report: dict[str, Any], name: str) -> dict[str, str]:
    """Rows that failed on mutant ``name``, with the first line of each failure."""
    for engine in report["engines"]:
        if engine["name"] == name:
            return {row["row"]: row["reason"] or "" for row in engine["rows"] if row["outcome"] == "failed"}
    return {}


def render(entries: list[CatalogEntry], report: dict[str, Any]) -> str:
    lines = [
        "# Mutant kill table",
        "",
        "Each mutant is a real engine with one clause broken (`tests/mutants/`). This table is generated",
        "by `python -m tests.mutants.kill_table` from one run of the whole suite against every mutant",
        f"(seed {SEED}); `tests/test_mutants.py` asserts the same run kills every mutant by a row citing",
        "the broken clause.",
        "",
        "| mutant | clause | fault | rows that caught it |",
        "|---|---|---|---|",
    ]
    for entry in entries:
        caught = ", ".join(f"`{row}`" for row in sorted(killers(report, entry.name))) or "**none — survived**"
        lines.append(f"| `{entry.name}` | {entry.mutant.clause} | {entry.mutant.what} | {caught} |")
    killed = sum(1 for entry in entries if killers(report, entry.name))
    lines += ["", f"{killed} of {len(entries)} mutants killed."]
    return "\n".join(lines) + "\n"


def main() -> int:
    entries = catalog()
    with tempfile.TemporaryDirectory() as scratch:
        report = run_suite(entries, Path(scratch) / "report.json")
    (REPO / "docs" / "mutants.md").write_text(render(entries, report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
