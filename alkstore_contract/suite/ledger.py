"""What one row proved, clause by clause: the checks that ran, the failures, and what was left out.

Part of the suite.

Every ``expect*`` call in ``alkstore_contract.suite.checks`` counts one check of its
clause in the ledger of the row that is running (a context variable, so rows
need not pass it around and checks made in worker threads still land in it).
A check counts as **defining** its clause only when the leg it runs in
declares that clause (``ctx.leg(name, clauses, ...)``: the clauses a leg
declares are the behaviour it tests); a check of any other clause is
*incidental* — "the job is stored" in a set-up leg — and is kept apart
(``incidental``): it can fail its clause, never pass it.
A leg that ends in a violation or an engine exception records a failure of a
clause; a leg that cannot run records a *gap* with its kind and reason; a leg
that finds the host too slow to judge records an *inconclusive* clause.

The ledger is plain data: it travels from the pytest item (perhaps in an
xdist worker) to the session as JSON in the report's user properties, and the
session turns the ledgers of all rows into one verdict per clause
(``alkstore_contract.suite.verdicts``).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from alkstore_contract.suite.clauses import clause


class Gap(StrEnum):
    """Why a check did not run; the kind decides what a certificate makes of it."""

    CAPABILITY = "capability"
    """The engine does not declare what the check needs: outside what the certificate covers."""
    CLOCK = "clock"
    """The check needs exact instants (the manual clock) and the engine cannot be given one: named on the
    certificate."""
    DEPENDENCY = "dependency"
    """An earlier leg this one builds on failed: the row fails anyway."""
    FAULT_MISSED = "fault missed"
    """The leg's network faults touched no connection of the engine, so it judged nothing: its clauses are
    not exercised even where other legs checked them (a fault that never reached the engine is never a pass),
    and the certificate is refused."""
    UNTESTED = "untested"
    """Nothing can check the clause on this engine: the registry says no row checks it, or its leg needs an
    adapter hook this engine's adapter lacks (T3 without ``SkewedServerAdapter``). Never a pass; the
    certificate names it."""
    NOT_RUN_HERE = "not run here"
    """The leg needs a tool this machine lacks (initdb, libfaketime); ``--alkstore-require`` makes that a
    failure instead. Never a pass; the certificate names it."""
    NOT_DECLARED = "not declared"
    """A capability gap of a clause a minor version added (L, K, W since 2.1): an engine written for the
    earlier version does not declare it, so the clause is outside its certificate, never failed."""


@dataclass(slots=True)
class Failure:
    clause: str
    leg: str
    message: str
    """The violation's text, or the engine exception's header and trimmed traceback."""
    exception: bool = False
    """An exception the engine raised, rather than a violation a check found."""


@dataclass(slots=True)
class LegRecord:
    name: str
    clauses: list[str]
    status: str
    """``passed``, ``failed``, ``inconclusive`` or ``not run``."""
    reason: str | None = None
    gap: str | None = None


@dataclass(slots=True)
class Ledger:
    """One row's record on one engine."""

    row: str
    checks: dict[str, int] = field(default_factory=dict)
    """clause → defining checks that ran (in a leg declaring the clause): what can pass it."""
    incidental: dict[str, int] = field(default_factory=dict)
    """clause → checks that ran in a leg not declaring the clause: they can fail it, never pass it."""
    failures: list[Failure] = field(default_factory=list)
    gaps: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """clause → [(gap kind, why)]."""
    inconclusive: dict[str, list[str]] = field(default_factory=dict)
    legs: list[LegRecord] = field(default_factory=list)
    last_checked: str | None = None
    """The clause of the latest check: the one an engine exception is charged to when a leg checks several."""

    def check(self, clause_id: str, *, defining: bool = True) -> None:
        clause(clause_id)
        counts = self.checks if defining else self.incidental
        counts[clause_id] = counts.get(clause_id, 0) + 1
        self.last_checked = clause_id

    def fail(self, failure: Failure) -> None:
        self.failures.append(failure)

    def gap(self, clause_ids: tuple[str, ...], kind: Gap, why: str) -> None:
        for clause_id in clause_ids:
            clause(clause_id)
            self.gaps.setdefault(clause_id, []).append((str(kind), why))

    def undecided(self, clause_ids: tuple[str, ...], why: str) -> None:
        for clause_id in clause_ids:
            clause(clause_id)
            self.inconclusive.setdefault(clause_id, []).append(why)

    @property
    def failed_clauses(self) -> list[str]:
        return list(dict.fromkeys(f.clause for f in self.failures))

    @property
    def fault_missed(self) -> list[str]:
        """Clauses a leg's network faults never reached: not exercised, whatever other legs of the row checked."""
        return [c for c, gaps in self.gaps.items() if any(kind == str(Gap.FAULT_MISSED) for kind, _ in gaps)]

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("last_checked")
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        data: dict[str, Any] = json.loads(text)
        return cls(
            row=data["row"],
            checks=data["checks"],
            incidental=data.get("incidental", {}),
            failures=[Failure(**f) for f in data["failures"]],
            gaps={k: [(kind, why) for kind, why in v] for k, v in data["gaps"].items()},
            inconclusive=data["inconclusive"],
            legs=[LegRecord(**leg) for leg in data["legs"]],
        )


CURRENT: ContextVar[Ledger | None] = ContextVar("alkstore_ledger", default=None)
"""The ledger of the row running in this context; ``None`` outside a row (checks then count nowhere)."""


DEFINES: ContextVar[frozenset[str] | None] = ContextVar("alkstore_leg_defines", default=None)
"""The clauses the innermost running leg declares (``RowContext.leg`` sets it); ``None`` outside any leg."""


SETTLED: ContextVar[dict[str, int] | None] = ContextVar("alkstore_leg_settled", default=None)
"""clause → defining checks made in the innermost running leg's inner legs that ended: a failure of the running
leg takes back its own checks of its other clauses, never these (``RowContext.leg`` sets it)."""


def count_check(clause_id: str) -> None:
    """One check of ``clause_id`` ran (called by every ``expect*``): defining where the running leg declares it."""
    ledger = CURRENT.get()
    if ledger is not None:
        defines = DEFINES.get()
        ledger.check(clause_id, defining=defines is None or clause_id in defines)
