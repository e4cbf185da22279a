"""P3 judges what the engine committed, never what its ops mean: a durable engine with other semantics passes P3.

Rule ids: P3 (the ``durability`` row's expectation is the engine's own reads before the close or kill), D1 and B2
(the clauses of the differences, which still fail). If this fails on P3, check that ``reopen.py`` expects each
job's ``get_job`` before the close and charges no refused set-up op to P3, and that ``kill.py``'s ``Replay``
expects each job as the churn worker's ``end`` line showed it (``worker.snapshot``), not as a model of the op.
"""

from __future__ import annotations

from pathlib import Path

from tests.suite_subprocess import run_suite

ENGINE = "tests.engines.sqlite_fail_retries:adapter"
ROWS = "durability or dead_letter or batch_ack_and_cancel"


def test_a_durable_engine_whose_fail_retries_and_cancel_refuses_passes_p3_and_fails_d1_and_b2(tmp_path: Path) -> None:
    """P3 passed on both legs; D1 (fail leaves the job ready) and B2 (no cancel of a processing job) failed."""
    engine, output = run_suite(tmp_path, ENGINE, "-k", ROWS)
    verdicts = {clause["clause"]: clause for clause in engine["clauses"]}
    assert verdicts["P3"]["verdict"] == "passed", (verdicts["P3"], output)
    assert verdicts["D1"]["verdict"] == "failed", (verdicts["D1"], output)
    assert verdicts["B2"]["verdict"] == "failed", (verdicts["B2"], output)
    durability = [row for row in engine["rows"] if row["row"] == "durability"]
    notes = [note for row in durability for note in row["notes"]]
    assert any("the engine refused cancel-processing" in note for note in notes), notes
