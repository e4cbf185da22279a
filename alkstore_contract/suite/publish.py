"""What the suite publishes about an engine: its verdicts turned into the report's model.

Part of the suite.

The report part reads only ``alkstore_contract.report.model`` (the rule is in
that module's docstring and ``tests/test_boundaries.py``), so the suite does
the judging here: the certificate line, the profiles' verdicts and the summary
line are computed from the clause verdicts and handed over as plain data.
"""

from __future__ import annotations

from alkstore_contract.adapter import Capability
from alkstore_contract.report.model import EngineEntry, EngineInfo
from alkstore_contract.suite.profiles import profile_verdicts, summary_line
from alkstore_contract.suite.verdicts import EngineVerdict


def engine_entry(info: EngineInfo, verdict: EngineVerdict, clock: str) -> EngineEntry:
    """The report's entry for one engine: what ``verdict`` concludes, for an engine run on ``clock``."""
    certificate = verdict.certificate
    capabilities = frozenset(Capability(c) for c in info.capabilities)
    return EngineEntry(
        info=info,
        certified=certificate is not None and certificate.certified,
        certificate=verdict.line_for(clock, info.time_resolution_us),
        covers=certificate.covers if certificate is not None else [],
        not_exercised=certificate.not_exercised if certificate is not None else [],
        not_certified_because=verdict.not_certified_because,
        clauses=[found.as_json() for found in verdict.clauses.values()],
        profiles=[p.as_json() for p in profile_verdicts(verdict.clauses, capabilities).values()],
        summary=summary_line(verdict, capabilities),
        known_differences_only=certificate is not None and certificate.expected_only,
    )
