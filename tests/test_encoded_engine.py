"""N1–N6: an engine that encodes what it sends its server meets the same faults and is certified on its merits.

``tests/engines/postgres_base64.py`` is the Postgres engine sending payloads
and worker ids base64-encoded. N3's cuts once looked for the payload's bytes on
the wire, so this engine's cut-enqueue leg never ran and N3 was reported
passed on the checks left. Now the cut lands at the server's answer to the op
armed before it, whatever its bytes: the engine must be CERTIFIED with every N
clause passed, a server crash behind its P3, and no leg "not run".

If this fails, check ``alkstore_contract/suite/fault_proxy.py`` (``cut_answer``) and the
cut legs of ``alkstore_contract/suite/rows/network_faults.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.suite_subprocess import recorded_or_run
from tests.test_postgres_engine import server_dsn

ENGINE = "tests.engines.postgres_base64:adapter"
N_CLAUSES = ("N1", "N2", "N3", "N4", "N5", "N6")


def test_an_engine_that_encodes_its_payloads_is_certified_with_every_n_clause_passed(tmp_path: Path) -> None:
    server_dsn()
    engine, output = recorded_or_run(tmp_path, ENGINE, "postgres-base64")
    assert engine["certified"], output
    verdicts = {clause["clause"]: clause for clause in engine["clauses"]}
    for clause_id in N_CLAUSES:
        assert verdicts[clause_id]["verdict"] == "passed", (clause_id, verdicts[clause_id], output)
    assert verdicts["P3"]["verdict"] == "passed", output
    not_run = [f"{row['row']}: {leg}" for row in engine["rows"] for leg in row["legs"] if leg.endswith("not run")]
    assert not not_run, f"legs not run on an engine that encodes its payloads: {not_run}"
    crashed = [note for row in engine["rows"] if row["row"] == "durability" for note in row["notes"]]
    assert any(note.startswith("server crash leg:") for note in crashed), crashed
