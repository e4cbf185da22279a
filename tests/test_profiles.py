"""The safety profile and emulated verdicts (docs/capabilities.md, "Profiles" and "Native or emulated").

If one of these fails, check ``alkstore_contract/suite/profiles.py`` (which clauses a profile holds and how
its verdict follows the certificate's rule), ``alkstore_contract/suite/emulation.py`` (how an adapter's
``emulates`` is read) and ``certify`` in ``alkstore_contract/suite/verdicts.py`` (``emulated`` and
``expected_only``).
"""

from __future__ import annotations

import pytest

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.clauses import CLAUSES
from alkstore_contract.suite.emulation import declared_emulation
from alkstore_contract.suite.ledger import Failure, Gap, Ledger
from alkstore_contract.suite.profiles import HAZARDS, SAFETY, profile_verdict, summary_line
from alkstore_contract.suite.verdicts import EngineVerdict, Verdict, certify, clause_verdicts
from tests.ledgers import all_checked

DURABLE = frozenset({Capability.DURABLE})
STALE_H5 = "safety NOT PASSED (completed by a stale worker: H5)"


def _failing(clause_id: str) -> Ledger:
    ledger = Ledger(row="lease_validity")
    ledger.fail(Failure(clause_id, "fenced after a reclaim", f"[{clause_id}] the old handle acked"))
    return ledger


def test_safety_holds_only_registered_clauses() -> None:
    """Profiles: every clause of the safety profile is a clause of docs/contract.md."""
    assert all(clause_id in CLAUSES for clause_id in SAFETY)


def test_an_engine_passing_every_clause_passes_safety_natively() -> None:
    """Profiles: all binding safety clauses passed, none emulated: PASSED, and capability clauses it lacks are out."""
    verdicts = clause_verdicts([all_checked(DURABLE)], {})
    found = profile_verdict("safety", verdicts, DURABLE)
    assert found.line() == "safety PASSED"
    assert found.clauses == ["C1", "C4", "H1", "H5", "P3"]


def test_a_failed_safety_clause_is_named() -> None:
    """Profiles: a failed H5 is named by its hazard (completed by a stale worker), and the contract names it."""
    ledgers = [all_checked(DURABLE), _failing("H5")]
    verdicts = clause_verdicts(ledgers, {})
    verdict = EngineVerdict(verdicts, certify(verdicts, ledgers, DURABLE))
    assert summary_line(verdict, DURABLE) == f"{STALE_H5} · contract NOT CERTIFIED (H5)"


def test_a_failed_c1_reads_as_late_recovery_never_as_loss() -> None:
    """Profiles: C1 (claimability) failing is a late recovery; only P3 N3 N4 read as lost, in the line and the JSON."""
    ledgers = [all_checked(DURABLE), _failing("C1"), _failing("H1")]
    found = profile_verdict("safety", clause_verdicts(ledgers, {}), DURABLE)
    assert found.line() == "safety NOT PASSED (completed by a stale worker: H1; late recovery: C1)"
    assert found.as_json()["hazards"] == {"completed by a stale worker": ["H1"], "late recovery": ["C1"]}
    assert "lost" not in found.line()
    lost = profile_verdict("safety", clause_verdicts([all_checked(DURABLE), _failing("P3")], {}), DURABLE)
    assert lost.line() == "safety NOT PASSED (lost: P3)"


def test_every_safety_clause_has_one_hazard() -> None:
    """Profiles: each clause of SAFETY is named by exactly one hazard, and no hazard names a clause outside it."""
    named = [c for clauses in HAZARDS.values() for c in clauses]
    assert sorted(named) == sorted(SAFETY)


def test_a_policy_failure_leaves_safety_passed() -> None:
    """Profiles: E7 (priority bounds) is policy: the contract fails, safety does not."""
    ledgers = [all_checked(DURABLE), _failing("E7")]
    verdicts = clause_verdicts(ledgers, {})
    verdict = EngineVerdict(verdicts, certify(verdicts, ledgers, DURABLE))
    assert summary_line(verdict, DURABLE) == "safety PASSED · contract NOT CERTIFIED (E7)"


def test_an_emulated_pass_is_never_a_native_one() -> None:
    """Native or emulated: a clause the adapter emulates passes as emulated, on the certificate and the profile."""
    ledgers = [all_checked(DURABLE)]
    verdicts = clause_verdicts(ledgers, {}, {"H5": "a token column the adapter checks"})
    certificate = certify(verdicts, ledgers, DURABLE)
    assert verdicts["H5"].verdict is Verdict.PASSED
    assert verdicts["H5"].as_json()["emulated"] == "a token column the adapter checks"
    assert certificate.certified
    assert certificate.line("system").endswith("; emulated by the adapter: H5)")
    found = profile_verdict("safety", verdicts, DURABLE)
    assert (found.status, found.emulated) == ("PASSED WITH EMULATION", ["H5"])


def test_listed_failures_and_the_legs_built_on_them_are_the_known_differences() -> None:
    """Expected failures: xfailed clauses plus dependency gaps are expected_only; any other failure is not."""
    left_out = all_checked(frozenset())
    del left_out.checks["H5"]
    left_out.gap(("H5",), Gap.DEPENDENCY, "leg 'fenced' builds on a failed leg")
    ledgers = [left_out, _failing("H3")]
    verdicts = clause_verdicts(ledgers, {"H3": "lease_validity[x] H3: heartbeats cannot extend"})
    assert certify(verdicts, ledgers, frozenset()).expected_only
    verdicts = clause_verdicts([*ledgers, _failing("C2")], {"H3": "lease_validity[x] H3: heartbeats cannot extend"})
    assert not certify(verdicts, [*ledgers, _failing("C2")], frozenset()).expected_only


class _Declares:
    def __init__(self, emulates: object) -> None:
        self.emulates = emulates


def test_emulates_is_checked() -> None:
    """Native or emulated: a bad emulates names the rule; none declared is none emulated."""
    assert declared_emulation(object()) == {}
    assert declared_emulation(_Declares({"H5": " token check "})) == {"H5": "token check"}
    with pytest.raises(ValueError, match="'Z9' is not a clause"):
        declared_emulation(_Declares({"Z9": "x"}))
    with pytest.raises(ValueError, match=r"emulates\['H5'\]=''"):
        declared_emulation(_Declares({"H5": ""}))
    with pytest.raises(ValueError, match="not a list"):
        declared_emulation(_Declares(["H5"]))


def test_a_run_without_a_certificate_judges_no_profile_unless_a_safety_clause_failed() -> None:
    """Profiles: an engine not run here or a partial run gives 'not judged', or NOT PASSED naming a failed clause."""
    verdicts = clause_verdicts([], {})
    unrun = EngineVerdict(verdicts, None, "not run here: the server refused the connection")
    assert summary_line(unrun, DURABLE) == "safety not judged · contract no certificate (the line above says why)"
    partial = clause_verdicts([_failing("H5")], {})
    failed = EngineVerdict(
        partial, None, "partial run (-k lease)", ["H5 failed (lease_validity): [H5] the old handle acked"]
    )
    assert summary_line(failed, DURABLE) == f"{STALE_H5} · contract NOT CERTIFIED (H5)"
