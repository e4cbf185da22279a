"""The report's data model: what the suite publishes about a run, and all the report part reads of it.

Part of the report.

The report part owns the report's format (``report.schema.json``), so it owns
this model too: plain dataclasses of strings, numbers and lists, one per thing
the JSON report holds. The suite fills them in (``alkstore_contract.suite.publish``
turns its verdicts into an ``EngineEntry``) and hands them to
``alkstore_contract.report.build``; nothing in the report reaches back into the
suite's verdicts, profiles or registry. The dependency runs one way, suite →
report, and ``tests/test_boundaries.py`` keeps it so: a report module that
imports a suite module fails it. A field added here is a field the suite must
publish and the schema must allow.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from alkstore_contract.hazards import PHRASES, Hazard


@dataclass
class RowResult:
    """One row on one engine."""

    row: str
    engine: str
    clauses: list[str]
    required: bool
    outcome: str = "passed"
    reason: str | None = None
    duration_s: float = 0.0
    seed: int | None = None
    notes: list[str] = field(default_factory=list)
    legs: list[str] = field(default_factory=list)
    """``name: status`` of each leg the row ran or left out."""

    def as_json(self) -> dict[str, Any]:
        """Every field in declaration order, less ``engine`` (the entry holding the row names it), the duration
        rounded."""
        data = asdict(self)
        del data["engine"]
        data["duration_s"] = round(self.duration_s, 4)
        return data


@dataclass
class EngineInfo:
    """Who an engine is, as the run saw it."""

    name: str
    spec: str
    version: str
    capabilities: list[str]
    clock: str
    unavailable_reason: str | None = None
    storage: str | None = None
    """What the engine stores into, as its adapter's optional ``storage_version()`` said."""
    time_resolution_us: int = 1
    """How finely the engine keeps instants, as its adapter's optional ``time_resolution_us`` says."""
    emulates: dict[str, str] = field(default_factory=dict)
    """What the adapter built for the engine, clause by clause (its optional ``emulates``)."""


@dataclass
class EngineEntry:
    """What the suite concluded about one engine, as the report carries it: lines and JSON-ready lists.

    The suite computes every field from its clause verdicts (``alkstore_contract.suite.publish``);
    the report only places them, so a change to how the suite judges never touches the report part.
    """

    info: EngineInfo
    certified: bool
    certificate: str
    """The certificate line: ``CERTIFIED: …``, ``NOT CERTIFIED: …`` or why the run gives none."""
    covers: list[str]
    not_exercised: list[str]
    not_certified_because: list[str]
    clauses: list[dict[str, Any]]
    """One verdict per clause, each as ``report.schema.json``'s ``clause`` object."""
    profiles: list[dict[str, Any]]
    """One verdict per profile, each as ``report.schema.json``'s ``profile`` object."""
    summary: str
    """Each profile's verdict and the whole contract's, in one line."""
    known_differences_only: bool


SAFETY: tuple[str, ...] = ("C1", "C4", "H1", "H5", "P2", "P3", "N3", "N4", "N5")
"""The safety profile's clauses, in contract order (docs/capabilities.md says which promise each holds)."""

PROFILES: dict[str, tuple[str, ...]] = {"safety": SAFETY}
"""Every profile, by name."""

HAZARDS: dict[str, tuple[str, ...]] = {
    PHRASES[Hazard.LOST]: ("P3", "N3", "N4"),
    PHRASES[Hazard.CONCURRENT]: ("C4", "P2"),
    PHRASES[Hazard.STALE]: ("H1", "H5", "N5"),
    PHRASES[Hazard.LATE]: ("C1",),
}
"""What a failed safety clause shows, by hazard (``alkstore_contract.hazards``; docs/capabilities.md,
"Profiles"): *lost*, a job never completed (a committed write gone after a crash, a job a cut connection lost
or duplicated); *run twice at once*, two unexpired leases on one job; *completed by a stale worker*, an op of a
claim whose lease lapsed that still took effect; *late recovery*, a lapsed lease not claimable at its deadline.
N4 also counts jobs completed twice, and N3 duplicates; both sit under *lost* because their checks are the ones
that count jobs that never completed."""
