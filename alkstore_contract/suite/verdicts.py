"""One verdict per clause per engine, from the ledgers of its rows, and the certificate they allow.

Part of the suite.

A clause is **passed** only when at least one of its *defining* checks ran in
this run (a check in a leg that declares the clause; incidental checks, made in
legs that merely cite it, can fail a clause but never pass it) and none of its
checks failed; **failed** when a check or an engine exception failed it (the
first message is kept); **xfailed** when every failure of it was listed in the
expected-failures file; **inconclusive** when a real-clock leg found the host
too slow to judge it (never counted as passed); **not exercised** otherwise,
with why (a capability not declared, exact instants the engine cannot be given,
a leg that built on a failed one, a row that did not run, or a clause the
registry marks untested) — and also when any leg of it injected network faults
that touched no connection of the engine (``fault missed``), whatever other
legs checked: a fault that never reached the engine is never a pass.

The certificate binds what the engine declares (docs/capabilities.md, "What a
certificate covers"): CERTIFIED only when every clause of the core and of every
declared capability passed, or was not exercised for a reason the certificate
names (legs needing exact instants or long waits a real-clock run cannot give,
clauses nothing can check on this engine — ``untested`` — and legs needing a
tool this machine lacks — ``not run here``, which ``--alkstore-require`` makes
a failure). A passed clause one of whose defining legs did not
run blocks it too, unless that leg needs exact instants (named on the
certificate) or a capability the engine does not declare (outside what it
covers): the only check of a behaviour never goes missing silently.

A clause the adapter declares it **emulates** (docs/ecosystem.md, "Native or
emulated") keeps its verdict, marked with what the adapter built: the
certificate and the safety profile name it, so a library is never credited with
what its adapter did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from alkstore_contract.adapter import (
    CAPABILITIES_SINCE,
    CAPABILITY_CLAUSES,
    TIME_RESOLUTIONS_US,
    VERSION_CAPABILITIES,
    Capability,
)
from alkstore_contract.suite.clauses import CLAUSES, binding
from alkstore_contract.suite.ledger import Gap, Ledger


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    XFAILED = "xfailed"
    INCONCLUSIVE = "inconclusive"
    NOT_EXERCISED = "not exercised"


@dataclass(slots=True)
class ClauseVerdict:
    clause: str
    verdict: Verdict
    checks: int = 0
    rows: list[str] = field(default_factory=list)
    """Rows in which a defining check of the clause ran or a check of it failed."""
    legs_not_run: list[str] = field(default_factory=list)
    """Legs that define the clause and did not run, each as ``row: leg 'name' (gap kind): why``."""
    detail: str | None = None
    """The first failure, the expected-failure reason, why it was inconclusive or why it was not exercised."""
    gap: str | None = None
    """For ``not exercised``: the kind of gap (``capability``, ``clock``, ``dependency``, ``not run``, ``untested``,
    ``not run here``, ``fault missed``)."""
    emulated: str | None = None
    """What the adapter built for this clause and why (its ``emulates``); ``None``: the engine's own behaviour."""

    def as_json(self) -> dict[str, Any]:
        """Every field in declaration order, the verdict as its plain string."""
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        return data


def clause_verdicts(
    ledgers: list[Ledger], xfailed: dict[str, str], emulated: Mapping[str, str] | None = None
) -> dict[str, ClauseVerdict]:
    """Every registered clause's verdict from ``ledgers`` (one per row that ran on the engine).

    ``xfailed`` maps a clause to the reason of the expected-failure entry that covered its failures;
    ``emulated`` maps a clause to what the adapter built for it (its ``emulates``).
    """
    emulated = emulated or {}
    verdicts: dict[str, ClauseVerdict] = {}
    for clause_id, known in CLAUSES.items():
        checks = sum(ledger.checks.get(clause_id, 0) for ledger in ledgers)
        rows = [
            ledger.row
            for ledger in ledgers
            if ledger.checks.get(clause_id) or any(f.clause == clause_id for f in ledger.failures)
        ]
        failures = [f for ledger in ledgers for f in ledger.failures if f.clause == clause_id]
        undecided = [why for ledger in ledgers for why in ledger.inconclusive.get(clause_id, [])]
        gaps = [gap for ledger in ledgers for gap in ledger.gaps.get(clause_id, [])]
        left_out = [
            f"{ledger.row}: leg {leg.name!r} ({leg.gap}): {leg.reason}"
            for ledger in ledgers
            for leg in ledger.legs
            if leg.status == "not run" and clause_id in leg.clauses
        ]
        missed = [gap for gap in gaps if gap[0] == str(Gap.FAULT_MISSED)]
        found = ClauseVerdict(clause_id, Verdict.PASSED, checks, rows, left_out, emulated=emulated.get(clause_id))
        if failures and clause_id in xfailed:
            found.verdict, found.detail = Verdict.XFAILED, xfailed[clause_id]
        elif failures:
            found.verdict, found.detail = Verdict.FAILED, failures[0].message.splitlines()[0]
        elif undecided:
            found.verdict, found.detail = Verdict.INCONCLUSIVE, undecided[0]
        elif checks == 0 or missed:
            found.verdict = Verdict.NOT_EXERCISED
            undeclared = [
                gap
                for gap in gaps
                if gap[0] == str(Gap.CAPABILITY)
                and known.capability in CAPABILITIES_SINCE
                and f"'{known.capability}'" in gap[1]
            ]
            if missed:
                found.gap, found.detail = missed[0]
            elif undeclared:
                found.gap, found.detail = str(Gap.NOT_DECLARED), undeclared[0][1]
            elif known.untested is not None:
                found.gap, found.detail = "untested", known.untested
            elif gaps:
                found.gap, found.detail = gaps[0]
            elif any(ledger.incidental.get(clause_id) for ledger in ledgers):
                cited = [ledger.row for ledger in ledgers if ledger.incidental.get(clause_id)]
                found.gap = "not run"
                found.detail = f"only incidental checks of it ran (in {', '.join(cited)}); no leg that defines it ran"
            else:
                found.gap, found.detail = "not run", "no row that checks it ran"
        verdicts[clause_id] = found
    return verdicts


@dataclass(slots=True)
class Certificate:
    certified: bool
    covers: list[str]
    """``core`` and the declared capabilities."""
    not_exercised: list[str]
    """What the certificate names as not exercised within what it covers."""
    blockers: list[str]
    emulated: list[str] = field(default_factory=list)
    """Clauses within what it covers that passed on what the adapter built, not on the engine's own behaviour."""
    expected_only: bool = False
    """Not certified, and every blocker is a failure the expected-failures file lists (the known differences),
    or a leg left out because it built on one of those."""
    contract: str = "2.0"
    """The contract version the engine meets if certified: the highest whose capabilities it declares."""
    not_declared: list[str] = field(default_factory=list)
    """Capabilities a minor version added that the engine does not declare, each with its clauses
    (``release L1–L4``): their clauses are not declared, never failed (docs/contract.md, "What 2.1 added")."""

    def line(self, clock: str, resolution_us: int = 1) -> str:
        scope = " + ".join(self.covers)
        left = f"; not exercised: {', '.join(self.not_exercised)}" if self.not_exercised else ""
        coarse = "" if resolution_us == 1 else f", time resolution {TIME_RESOLUTIONS_US[resolution_us]}"
        built = f"; emulated by the adapter: {' '.join(self.emulated)}" if self.emulated else ""
        undeclared = f"; not declared: {', '.join(self.not_declared)}" if self.not_declared else ""
        if self.certified:
            return f"CERTIFIED (contract {self.contract}): {scope} (clock={clock}{coarse}{left}{undeclared}{built})"
        return "NOT CERTIFIED: " + "; ".join(self.blockers)


def _failed_in(clause: str, ledgers: list[Ledger]) -> str:
    """`` (row durability, leg 'kill -9 at the acknowledgement')``: where ``clause`` failed, not every row checking it.

    A clause checked by four rows and failed by one names that one, and the legs of it that failed, so the
    reader starts where the failure is; ``""`` when no failure of the clause was recorded (an xfail's own).
    """
    places: dict[str, list[str]] = {}
    for ledger in ledgers:
        for failure in ledger.failures:
            if failure.clause == clause and failure.leg not in places.setdefault(ledger.row, []):
                places[ledger.row].append(failure.leg)
    shown = [
        f"row {row}, leg{'s' if len(legs) > 1 else ''} {', '.join(repr(leg) for leg in legs)}"
        for row, legs in places.items()
        if legs
    ]
    return f" ({'; '.join(shown)})" if shown else ""


def certify(
    verdicts: dict[str, ClauseVerdict], ledgers: list[Ledger], capabilities: frozenset[Capability]
) -> Certificate:
    """The certificate the clause verdicts allow for an engine declaring ``capabilities``."""
    covers = ["core", *sorted(str(c) for c in capabilities)]
    blockers: list[str] = []
    named: list[str] = []
    unexercised: dict[str, list[str]] = {}
    """why → the clauses not exercised for it: a reason shared by many clauses is said once."""
    expected = 0
    others = 0
    """Blockers other than an expected failure and what a failure left out (a dependency gap)."""
    for known in binding(capabilities):
        found = verdicts[known.id]
        where = f" ({', '.join(found.rows)})" if found.rows else ""
        if found.verdict is Verdict.FAILED:
            blockers.append(f"{known.id} failed{_failed_in(known.id, ledgers) or where}: {found.detail}")
            others += 1
        elif found.verdict is Verdict.XFAILED:
            blockers.append(f"{known.id} failed as expected ({found.detail})")
            expected += 1
        elif found.verdict is Verdict.INCONCLUSIVE:
            blockers.append(f"{known.id} inconclusive: {found.detail}")
            others += 1
        elif found.verdict is Verdict.NOT_EXERCISED:
            if found.gap in (str(Gap.UNTESTED), str(Gap.NOT_RUN_HERE)):
                named.append(f"{known.id} ({found.gap})")
                continue
            if found.gap == str(Gap.CLOCK):
                named.append(known.id)
                continue
            unexercised.setdefault(str(found.detail), []).append(known.id)
            others += found.gap != str(Gap.DEPENDENCY)
        elif found.verdict is Verdict.PASSED:
            for ledger in ledgers:
                for leg in ledger.legs:
                    if (
                        leg.status != "not run"
                        or known.id not in leg.clauses
                        or leg.gap in (str(Gap.CLOCK), str(Gap.CAPABILITY))
                    ):
                        continue
                    blockers.append(
                        f"{known.id} passed without its leg {leg.name!r} ({ledger.row}, {leg.gap}): {leg.reason}"
                    )
                    others += leg.gap != str(Gap.DEPENDENCY)
    blockers += [f"{', '.join(ids)} not exercised: {why}" for why, ids in unexercised.items()]
    for ledger in ledgers:
        for leg in ledger.legs:
            if leg.gap == str(Gap.CLOCK) and any(CLAUSES[c] in binding(capabilities) for c in leg.clauses):
                named.append(f"{leg.name} ({ledger.row})")
    bound = binding(capabilities)
    emulated = [c.id for c in bound if verdicts[c.id].emulated and verdicts[c.id].verdict is Verdict.PASSED]
    only_expected = expected > 0 and others == 0
    contract = max(
        (version for version, needs in VERSION_CAPABILITIES.items() if needs <= capabilities),
        key=lambda version: tuple(int(part) for part in version.split(".")),
    )
    not_declared = [
        f"{capability} {CAPABILITY_CLAUSES[capability]}"
        for capability in CAPABILITIES_SINCE
        if capability not in capabilities
    ]
    return Certificate(
        not blockers,
        covers,
        list(dict.fromkeys(named)),
        blockers,
        emulated,
        only_expected,
        contract,
        not_declared,
    )


@dataclass
class EngineVerdict:
    """What the session concluded about one engine."""

    clauses: dict[str, ClauseVerdict]
    certificate: Certificate | None
    """``None`` when the run cannot certify: the engine did not run, or rows were left out."""
    why_no_certificate: str | None = None
    blockers: list[str] = field(default_factory=list)
    """Without a certificate: the failures that would refuse one anyway (a partial run that failed a clause)."""

    @property
    def not_certified_because(self) -> list[str]:
        """One line per thing in the certificate's way (empty when certified)."""
        if self.certificate is not None:
            return self.certificate.blockers
        return [*self.blockers, str(self.why_no_certificate)]

    def contract_status(self) -> str:
        """``CERTIFIED``, ``NOT CERTIFIED (E7 H5)``, or why the run gives no certificate."""
        if self.certificate is not None and self.certificate.certified:
            return "CERTIFIED"
        blocking = [line.split(" ", 1)[0] for line in self.not_certified_because if line.split(" ", 1)[0] in CLAUSES]
        if self.certificate is None and not blocking:
            return "no certificate (the line above says why)"
        return f"NOT CERTIFIED ({' '.join(dict.fromkeys(blocking))})"

    def line_for(self, clock: str, resolution_us: int = 1) -> str:
        if self.certificate is None and self.blockers:
            return "NOT CERTIFIED: " + "; ".join(self.not_certified_because)
        if self.certificate is None:
            return str(self.why_no_certificate)
        return self.certificate.line(clock, resolution_us)
