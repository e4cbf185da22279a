"""A 5 ms group commit that declares ``durable`` is NOT CERTIFIED citing P3 on five seeds on both clocks.

Rule ids: P3 (the durability row's ``kill -9 at the acknowledgement`` leg, and for a networked engine its
``server crash and restart`` leg, both of which end the engine right after it answered a write). The
engines are the group-commit mutants: in-process (SQLite), over the wire (Node.js) and networked
(Postgres). Each leg named must fail on its own on every run, so the kill at a random moment (the
``kill -9 and reopen`` leg, which may or may not land inside 5 ms) is never what catches them.

Thirty suite runs: only with ``ALKSTORE_FULL_CATALOG=1`` (as the whole-catalog run); ``tests/test_mutants.py``
runs each of these mutants once in every ``ci/test.sh``. If it fails, check that ``worker.py``'s ``burst``
ends its process group right after the ``told`` line, with no await in between, and that ``at_ack.told_problem``
holds each job to the op the suite was told of.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.suite_subprocess import run_suite

SEEDS = (1, 2, 3, 4, 5)
CLOCKS = ("manual", "system")
AT_ACK = "kill -9 at the acknowledgement"
SERVER_CRASH = "server crash and restart"
MUTANTS = {
    "sqlite_group_commit": (AT_ACK,),
    "node_group_commit": (AT_ACK,),
    "pg_group_commit": (AT_ACK, SERVER_CRASH),
}
"""Each group-commit mutant and the legs that must fail on it."""

pytestmark = pytest.mark.skipif(
    os.environ.get("ALKSTORE_FULL_CATALOG") != "1", reason="thirty suite runs: set ALKSTORE_FULL_CATALOG=1"
)


@pytest.mark.parametrize("clock", CLOCKS)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_5_ms_group_commit_fails_p3(mutant: str, seed: int, clock: str, tmp_path: Path) -> None:
    engine, output = run_suite(
        tmp_path,
        f"tests.mutants.{mutant}:adapter",
        "-k",
        "durability",
        f"--alkstore-seed={seed}",
        f"--alkstore-clock={clock}",
    )
    verdicts = {clause["clause"]: clause["verdict"] for clause in engine["clauses"]}
    assert verdicts["P3"] == "failed", (verdicts, output)
    assert engine["certified"] is False, output
    (durability,) = [row for row in engine["rows"] if row["row"] == "durability"]
    for leg in MUTANTS[mutant]:
        assert f"{leg}: failed" in durability["legs"], (durability["legs"], output)
