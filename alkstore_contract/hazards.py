"""The hazards a queue exposes a job to, named once for every checker that looks for them. Part of the contract.

Three checkers judge the same dangers from different evidence: the suite's history checker
(``alkstore_contract.suite.history``: the claims and acks an engine answered), the certificate's safety profile
(``alkstore_contract.report.model.HAZARDS``: the contract's safety clauses that failed) and the runtime-faults
checker (``alkstore_faults.checker``: the handlers' records and the library's own final state of each job).
Each names what it found with these words, and splits a hazard only by appending to its name
(``concurrent_executing``, ``stale_refused``), so a reader of any page reads *lost* the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Final

__all__ = ["PHRASES", "PROMISABLE", "Hazard"]


class Hazard(StrEnum):
    """One danger to a job; its value is the word the checkers' counts and reports use."""

    LOST = "lost"
    """The job will never complete: nothing holds it any more, or what holds it will never run it again."""
    TWICE = "twice"
    """The job was completed by more than one run or claim."""
    CONCURRENT = "concurrent"
    """Two holders ran or held the job at once."""
    STALE = "stale"
    """A holder whose lease or lock had gone to another completed or changed the job."""
    LATE = "late"
    """The job was kept, but became claimable again only after the deadline its rules set."""


PHRASES: Final[Mapping[Hazard, str]] = MappingProxyType(
    {
        Hazard.LOST: "lost",
        Hazard.TWICE: "completed twice",
        Hazard.CONCURRENT: "run twice at once",
        Hazard.STALE: "completed by a stale worker",
        Hazard.LATE: "late recovery",
    }
)
"""Each hazard as a report's reader meets it in a sentence ("safety NOT PASSED (lost: P3)")."""
PROMISABLE: Final[tuple[Hazard, ...]] = (Hazard.LOST, Hazard.TWICE, Hazard.CONCURRENT, Hazard.STALE)
"""What a library's docs may promise about under faults, and a runner quote: everything but ``LATE``, which the
runtime-faults checker measures as a recovery delay rather than counts."""
