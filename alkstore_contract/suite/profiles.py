"""Profiles: named subsets of the contract that get a verdict of their own (docs/capabilities.md, "Profiles").

Part of the suite.

Much of the contract is policy a queue may choose differently (the backoff
formula, priority bounds, the wording of ``last_error``); the **safety**
profile is what every queue promises: no job lost, none run twice at once,
none completed by a worker whose lease lapsed, a lapsed lease recovered on
time. A profile's verdict follows the certificate's rule restricted to its
clauses that bind the engine (a capability clause binds only an engine
declaring the capability), and it says which of them passed on what the
adapter built rather than on the engine's own behaviour.

A failure is named by the hazard it shows (``HAZARDS``), never by a bare
clause id a reader could take for loss: C1 is the contract's claimability
rule, and what its failure shows is a job recovered late (or not at all
before the lease's deadline), not a job lost. Only the clauses whose checks
count jobs that never completed (P3, N3, N4) read as *lost*.

The profiles' clauses and their hazards (``SAFETY``, ``PROFILES``, ``HAZARDS``) are
defined in ``alkstore_contract.report.model``, since the report's format names
them; this module judges them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from alkstore_contract.adapter import Capability
from alkstore_contract.report.model import HAZARDS, PROFILES, SAFETY
from alkstore_contract.suite.clauses import binding
from alkstore_contract.suite.ledger import Gap
from alkstore_contract.suite.verdicts import ClauseVerdict, EngineVerdict, Verdict

__all__ = ["HAZARDS", "PROFILES", "SAFETY", "ProfileVerdict", "profile_verdict", "profile_verdicts", "summary_line"]


@dataclass(slots=True)
class ProfileVerdict:
    """One profile's verdict for one engine."""

    name: str
    clauses: list[str]
    """The profile's clauses that bind the engine."""
    passed: bool
    failed: list[str] = field(default_factory=list)
    """The binding clauses that did not pass (failed, xfailed, inconclusive or not exercised), in contract order."""
    emulated: list[str] = field(default_factory=list)
    """The binding clauses that passed on what the adapter built."""

    @property
    def hazards(self) -> dict[str, list[str]]:
        """The failed clauses by the hazard they show, in ``HAZARDS`` order; a hazard with none is left out."""
        return {
            hazard: found for hazard, clauses in HAZARDS.items() if (found := [c for c in self.failed if c in clauses])
        }

    def named_failures(self) -> str:
        """``late recovery: C1; completed by a stale worker: H1 H5``: each hazard with its failed clauses."""
        named = self.hazards
        rest = [c for c in self.failed if not any(c in found for found in named.values())]
        parts = [f"{hazard}: {' '.join(found)}" for hazard, found in named.items()]
        return "; ".join(parts + ([" ".join(rest)] if rest else []))

    @property
    def status(self) -> str:
        """``PASSED``, ``PASSED WITH EMULATION`` or ``NOT PASSED``."""
        if not self.passed:
            return "NOT PASSED"
        return "PASSED WITH EMULATION" if self.emulated else "PASSED"

    def line(self) -> str:
        """``safety NOT PASSED (completed by a stale worker: H5)``, ``safety PASSED WITH EMULATION (emulated: H3)``
        or ``safety PASSED``."""
        if not self.passed:
            return f"{self.name} NOT PASSED ({self.named_failures()})"
        if self.emulated:
            return f"{self.name} PASSED WITH EMULATION (emulated: {' '.join(self.emulated)})"
        return f"{self.name} PASSED"

    def as_json(self) -> dict[str, Any]:
        """Every field, and the two properties a reader of the report would otherwise work out again."""
        return asdict(self) | {"status": self.status, "hazards": self.hazards}


def _counts_as_passed(found: ClauseVerdict) -> bool:
    if found.verdict is Verdict.PASSED:
        return True
    named = (str(Gap.UNTESTED), str(Gap.NOT_RUN_HERE), str(Gap.CLOCK))
    return found.verdict is Verdict.NOT_EXERCISED and found.gap in named


def profile_verdict(
    name: str, verdicts: dict[str, ClauseVerdict], capabilities: frozenset[Capability]
) -> ProfileVerdict:
    """The profile ``name``'s verdict from the clause verdicts of an engine declaring ``capabilities``."""
    bound = {c.id for c in binding(capabilities)}
    clauses = [c for c in PROFILES[name] if c in bound]
    failed = [c for c in clauses if not _counts_as_passed(verdicts[c])]
    emulated = [c for c in clauses if c not in failed and verdicts[c].emulated]
    return ProfileVerdict(name, clauses, not failed, failed, emulated)


def profile_verdicts(
    verdicts: dict[str, ClauseVerdict], capabilities: frozenset[Capability]
) -> dict[str, ProfileVerdict]:
    """Every profile's verdict for one engine."""
    return {name: profile_verdict(name, verdicts, capabilities) for name in PROFILES}


def summary_line(verdict: EngineVerdict, capabilities: frozenset[Capability]) -> str:
    """Each profile's verdict and the whole contract's: ``safety NOT PASSED (H5) · contract NOT CERTIFIED (E7 H5)``."""
    profiles = [found.line() for found in profile_verdicts(verdict.clauses, capabilities).values()]
    if verdict.certificate is None:
        profiles = [_unjudged(name, verdict) for name in PROFILES]
    return " · ".join([*profiles, "contract " + verdict.contract_status()])


def _unjudged(name: str, verdict: EngineVerdict) -> str:
    """A profile of a run that gives no certificate: NOT PASSED on a clause that failed, else not judged."""
    failed = [c for c in PROFILES[name] if verdict.clauses[c].verdict in (Verdict.FAILED, Verdict.XFAILED)]
    if not failed:
        return f"{name} not judged"
    return ProfileVerdict(name, list(PROFILES[name]), False, failed).line()
