"""The certificate rule (docs/capabilities.md, "What a certificate covers"), on ledgers written by hand."""

from __future__ import annotations

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.clauses import CLAUSES, binding
from alkstore_contract.suite.ledger import Failure, Gap, Ledger, LegRecord
from alkstore_contract.suite.run import _clause_line, _row_summary
from alkstore_contract.suite.verdicts import Certificate, Verdict, certify, clause_verdicts
from tests.ledgers import all_checked

NOT_DECLARED = "; not declared: release L1–L4, unique_keys K1–K4, transactional_enqueue W1–W4"
"""What a certificate of an engine declaring none of the 2.1 capabilities says of them."""

DURABLE = frozenset({Capability.DURABLE})


def _certificate(ledgers: list[Ledger], capabilities: frozenset[Capability]) -> Certificate:
    return certify(clause_verdicts(ledgers, {}), ledgers, capabilities)


def test_every_binding_clause_passed_certifies_and_names_what_it_covers() -> None:
    certificate = _certificate([all_checked(DURABLE)], DURABLE)
    assert certificate.certified
    assert certificate.line("system") == (f"CERTIFIED (contract 2.0): core + durable (clock=system{NOT_DECLARED})")


def test_an_engine_without_the_2_1_capabilities_is_certified_for_2_0_and_their_clauses_are_not_declared() -> None:
    """Deprecate, never break: L, K and W bind only an engine declaring them; their row's skip is 'not declared'."""
    skipped = Ledger(row="release")
    skipped.gap(
        ("L1", "L2"), Gap.CAPABILITY, "engine 'old' does not declare 'release' (L1–L4), which row release needs"
    )
    ledgers = [all_checked(DURABLE), skipped]
    verdicts = clause_verdicts(ledgers, {})
    assert (verdicts["L1"].verdict, verdicts["L1"].gap) == (Verdict.NOT_EXERCISED, str(Gap.NOT_DECLARED))
    certificate = certify(verdicts, ledgers, DURABLE)
    assert (certificate.certified, certificate.contract) == (True, "2.0")
    assert "release L1–L4" in certificate.not_declared
    both = DURABLE | {Capability.RELEASE, Capability.UNIQUE_KEYS}
    newer = certify(clause_verdicts([all_checked(both)], {}), [all_checked(both)], both)
    assert (newer.certified, newer.contract, newer.not_declared) == (True, "2.1", ["transactional_enqueue W1–W4"])


def test_a_failing_capability_row_blocks_the_certificate_of_an_engine_that_declares_it() -> None:
    durability = Ledger(row="durability")
    durability.check("P3")
    durability.fail(Failure("P3", "kill -9 and reopen", "[P3] the engine lost an acked job's deletion"))
    certificate = _certificate([all_checked(DURABLE), durability], DURABLE)
    assert not certificate.certified
    assert certificate.blockers == [
        "P3 failed (row durability, leg 'kill -9 and reopen'): [P3] the engine lost an acked job's deletion"
    ]


def test_a_failure_only_model_based_or_crash_recovery_found_blocks_the_certificate() -> None:
    for row, clause_id in (("model_based", "C2"), ("crash_recovery", "C1")):
        found = Ledger(row=row)
        found.fail(Failure(clause_id, row, f"[{clause_id}] the engine did something else"))
        certificate = _certificate([all_checked(DURABLE), found], DURABLE)
        assert not certificate.certified
        assert certificate.blockers[0].startswith(f"{clause_id} failed")


def test_a_clause_with_no_check_blocks_unless_untested_or_outside_what_is_declared() -> None:
    ledger = all_checked(frozenset())
    del ledger.checks["H5"]
    certificate = _certificate([ledger], frozenset())
    assert certificate.blockers == ["H5 not exercised: no row that checks it ran"]
    assert _certificate([all_checked(frozenset())], frozenset()).certified
    assert CLAUSES["T3"].capability is Capability.NETWORKED, "T3 binds networked engines only"


def test_t3_without_the_hook_or_the_tools_is_named_on_the_certificate_never_passed() -> None:
    """T3 on a networked engine: an adapter without the skewed-server hook, or a machine without its tools."""
    networked = frozenset({Capability.NETWORKED})
    for kind in (Gap.UNTESTED, Gap.NOT_RUN_HERE):
        ledger = all_checked(networked)
        del ledger.checks["T3"]
        ledger.gap(("T3",), kind, "why")
        ledger.legs.append(LegRecord("skewed server", ["T3"], "not run", "why", str(kind)))
        verdicts = clause_verdicts([ledger], {})
        assert (verdicts["T3"].verdict, verdicts["T3"].gap) == (Verdict.NOT_EXERCISED, str(kind))
        certificate = certify(verdicts, [ledger], networked)
        assert certificate.certified
        assert f"T3 ({kind})" in certificate.not_exercised


def test_an_exact_instant_leg_left_out_is_named_on_the_certificate() -> None:
    ledger = all_checked(frozenset())
    ledger.gap(("H1",), Gap.CLOCK, "needs the manual clock")
    ledger.legs.append(LegRecord("H1 boundary", ["H1"], "not run", "needs the manual clock", str(Gap.CLOCK)))
    certificate = _certificate([ledger], frozenset())
    assert certificate.certified
    assert certificate.line("system") == (
        f"CERTIFIED (contract 2.0): core (clock=system; not exercised: H1 boundary (everything){NOT_DECLARED})"
    )


def test_inconclusive_is_never_a_pass() -> None:
    ledger = all_checked(frozenset())
    ledger.undecided(("C1",), "the host was too slow")
    verdicts = clause_verdicts([ledger], {})
    assert verdicts["C1"].verdict is Verdict.INCONCLUSIVE
    assert certify(verdicts, [ledger], frozenset()).blockers == ["C1 inconclusive: the host was too slow"]


def test_an_expected_failure_is_xfailed_and_still_blocks() -> None:
    ledger = all_checked(frozenset())
    ledger.fail(Failure("E7", "priority", "[E7] the engine raised DataError", exception=True))
    verdicts = clause_verdicts([ledger], {"E7": "int32 column"})
    assert verdicts["E7"].verdict is Verdict.XFAILED
    assert certify(verdicts, [ledger], frozenset()).blockers == ["E7 failed as expected (int32 column)"]


def test_the_ledger_survives_its_trip_through_json() -> None:
    ledger = all_checked(DURABLE)
    ledger.fail(Failure("P3", "kill", "lost"))
    ledger.gap(("P2",), Gap.CAPABILITY, "not declared")
    ledger.undecided(("C1",), "slow")
    ledger.legs.append(LegRecord("kill", ["P3"], "failed", "lost"))
    again = Ledger.from_json(ledger.to_json())
    assert (again.checks, again.failures, again.gaps, again.inconclusive, again.legs) == (
        ledger.checks,
        ledger.failures,
        ledger.gaps,
        ledger.inconclusive,
        ledger.legs,
    )


def test_a_failed_clause_names_the_rows_and_legs_that_failed_it_not_every_row_that_checked_it() -> None:
    """Any clause: C3 checked by three rows and failed by two legs of one names that row and those legs only."""
    ledgers = [all_checked(frozenset())]
    for name in ("exactly_once", "crash_recovery"):
        checked = Ledger(row=name)
        checked.check("C3")
        ledgers.append(checked)
    lease = Ledger(row="lease_validity")
    lease.check("C3")
    lease.fail(Failure("C3", "reclaim", "[C3] the engine handed out a job twice"))
    lease.fail(Failure("C3", "reclaim", "[C3] and again"))
    lease.fail(Failure("C3", "batch", "[C3] in a batch too"))
    ledgers.append(lease)
    blockers = certify(clause_verdicts(ledgers, {}), ledgers, frozenset()).blockers
    assert blockers == [
        "C3 failed (row lease_validity, legs 'reclaim', 'batch'): [C3] the engine handed out a job twice"
    ]


def test_a_clause_failed_only_by_an_engine_exception_names_its_row() -> None:
    """Any clause: an exception charged to a clause with no check of its own still says where it happened."""
    ledger = all_checked(frozenset())
    del ledger.checks["E7"]
    raised = Ledger(row="enqueue_opts_resolution")
    raised.fail(Failure("E7", "priority", "[E7] the engine raised OverflowError", exception=True))
    verdicts = clause_verdicts([ledger, raised], {})
    assert (verdicts["E7"].verdict, verdicts["E7"].rows) == (Verdict.FAILED, ["enqueue_opts_resolution"])
    assert certify(verdicts, [ledger, raised], frozenset()).blockers == [
        "E7 failed (row enqueue_opts_resolution, leg 'priority'): [E7] the engine raised OverflowError"
    ]


def test_one_reason_shared_by_many_unexercised_clauses_is_said_once() -> None:
    """Every clause: an engine asked for a clock it does not declare gets the reason once, not once a clause."""
    why = "engine 'x' does not declare 'injectable_clock' (T2), so --alkstore-clock=manual cannot run it"
    ledger = Ledger(row="everything")
    ledger.gap(tuple(c.id for c in binding(frozenset()) if c.untested is None), Gap.CAPABILITY, why)
    blockers = certify(clause_verdicts([ledger], {}), [ledger], frozenset()).blockers
    assert len(blockers) == 1
    assert blockers[0].startswith("S1, S2, S3, S4, E1")
    assert blockers[0].endswith(f" not exercised: {why}")


def test_a_network_leg_whose_faults_missed_the_engine_leaves_its_clause_not_exercised_whatever_else_checked() -> None:
    """N3: one cut leg whose fault never reached the engine keeps N3 from passing on the other leg's checks.

    If this fails, check that ``clause_verdicts`` treats a ``fault missed`` gap as blocking (docs/capabilities.md).
    """
    networked = frozenset({Capability.NETWORKED})
    everything = all_checked(networked)
    faults = Ledger(row="network_faults")
    faults.check("N3")
    faults.gap(("N3",), Gap.FAULT_MISSED, "leg 'cut enqueue' of row network_faults: the fault never reached the engine")
    verdicts = clause_verdicts([everything, faults], {})
    assert verdicts["N3"].verdict is Verdict.NOT_EXERCISED
    assert verdicts["N3"].gap == "fault missed"
    certificate = certify(verdicts, [everything, faults], networked)
    assert not certificate.certified
    assert certificate.blockers == [
        "N3 not exercised: leg 'cut enqueue' of row network_faults: the fault never reached the engine"
    ]


def test_a_row_whose_fault_missed_shows_its_clause_not_exercised_in_the_row_summary_and_the_clause_line() -> None:
    """N3: the row's one-line summary and its clause line agree with the clause verdict: not exercised, not passed.

    If this fails, check that ``_row_summary`` and ``_clause_line`` (suite/run.py) read ``Ledger.fault_missed``.
    """
    faults = Ledger(row="network_faults")
    faults.check("N3")
    faults.check("N4")
    faults.gap(("N3",), Gap.FAULT_MISSED, "leg 'cut enqueue' of row network_faults: the fault never reached the engine")
    verdicts = clause_verdicts([faults], {})
    assert _row_summary(faults) == "N4; not exercised: N3"
    assert _clause_line(faults, verdicts) == "N3 not exercised (fault missed) · N4 passed (1)"
