"""What a row gets to work with: the engine, a fresh location, a clock it can move, and its legs.

Part of the suite.

A ``RowContext`` lives for one row on one engine. It owns the locations it
creates and the stores it opens and releases all of them at teardown, inside
the same event loop that used them (a store never outlives its loop).

A row is made of **legs** (``await ctx.leg(name, clauses, body)``). The
clauses a leg declares are the ones it *defines* — the behaviour it tests; its
checks of any other clause are incidental and can fail that clause but never
pass it (``alkstore_contract.suite.ledger``). A leg may declare only clauses its row
declares, so the rows table in docs/capabilities.md stays true. A leg that
finds a violation, or during which the engine raises, records a failure of a
clause in the row's ledger and the row goes on with its next leg, so one
difference cannot hide the rest. A leg that builds on another's state names it
in ``after`` and does not run when that one did not pass. A leg that needs
exact instants (``clock="manual"``) runs on a manual-clock twin of the context
even in a system-clock run, when the engine declares ``injectable_clock``;
otherwise it is recorded as not exercised, and the certificate names it.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal, TypeVar

from alkstore_contract.adapter import Capability, EngineAdapter
from alkstore_contract.clock import ManualClock
from alkstore_contract.suite.checks import ContractViolation, expect_instant
from alkstore_contract.suite.clauses import UnknownClause
from alkstore_contract.suite.ledger import DEFINES, SETTLED, Failure, Gap, Ledger, LegRecord
from alkstore_contract.surface import Store

T = TypeVar("T")

MANUAL_UNIT_S = 10.0
"""One "tick" of row time under the manual clock: large, since moving it costs nothing."""
SYSTEM_UNIT_S = 0.4
"""The least tick on the real clock; the session measures the host and may choose a longer one."""
MAX_WAIT_UNITS = 12
"""No row asks to wait longer than this many ticks on the real clock: a longer wait can only come from an
instant the engine reported beyond what the row asked for, and fails at once instead of being waited out."""
SUITE_FILES = tuple(
    Path(__file__).resolve().parent / name for name in ("rows", "harness.py", "checks.py", "run.py", "ledger.py")
)
"""The suite's own code: frames in it are left out of an engine exception's traceback (the engine's own
frames, its drivers' and the contract code it calls — validation, resolution — stay)."""

LegBody = Callable[["RowContext"], Awaitable[None]]


class HostTooSlow(Exception):
    """A real-clock leg found the host too slow to judge it: the leg is inconclusive, never failed nor passed.

    ``clauses`` names the ones it could not decide when the leg's other checks did decide theirs (a range
    check that holds for every instant of its bracket stays a pass); ``None`` leaves every clause of the leg
    undecided.
    """

    def __init__(self, why: str, *, clauses: tuple[str, ...] | None = None) -> None:
        super().__init__(why)
        self.clauses = clauses


class FaultMissed(Exception):
    """A network leg's faults touched no connection of the engine: the leg judged nothing (not exercised).

    The checks it counted are taken back, and a violation it found is dropped: an engine that never met the
    fault neither kept nor broke what the fault tests.
    """


def _in_suite(path: Path) -> bool:
    resolved = path.resolve()
    return any(resolved == part or resolved.is_relative_to(part) for part in SUITE_FILES)


WIRE_DIR = Path(__file__).resolve().parent.parent / "wire"
"""The wire adapter's code: an exception raised there comes from an engine in a process of its own."""


def engine_traceback(exc: BaseException, *, full: bool) -> str:
    """The traceback of an exception the engine raised, trimmed to the engine's frames unless ``full``.

    The suite's own frames (rows, harness, checks) say nothing an engine author can act on; the frames of
    the engine and its drivers do. A wire engine has no Python frames: what it raised comes through the
    wire adapter, whose frames are the suite's too, and the engine's own account (its stack, or the tail of
    its stderr when it crashed or hung) is already in the exception's message.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    if not full and frames and Path(frames[-1].filename).resolve().is_relative_to(WIRE_DIR):
        return (
            "The engine runs in a process of its own: its stack or its stderr's tail is in the message above "
            f"({len(frames)} frames of the suite and its wire adapter left out; --alkstore-full-trace shows them)"
        )
    kept = frames if full else [f for f in frames if not _in_suite(Path(f.filename))]
    lines = traceback.format_list(kept)
    lines += traceback.format_exception_only(type(exc), exc)
    cut = (
        ""
        if full or len(kept) == len(frames)
        else f"  ({len(frames) - len(kept)} frames of the suite left out; --alkstore-full-trace shows them)\n"
    )
    return "Traceback (the engine's frames):\n" + cut + "".join(lines)


class UndeclaredClause(Exception):
    """A leg declares a clause its row (or the leg around it) does not: a defect in the suite, never a verdict."""


def _check_declared(name: str, clauses: tuple[str, ...]) -> None:
    """A leg defines only clauses the leg around it (the row, outermost) defines: the rows table stays true."""
    enclosing = DEFINES.get()
    stray = [c for c in clauses if enclosing is not None and c not in enclosing]
    if stray:
        raise UndeclaredClause(
            f"leg {name!r} declares {stray}, which the leg or row around it does not define "
            f"({' '.join(sorted(enclosing or ()))}): add them to the row's clauses or cite them incidentally"
        )


class RowContext:
    """The engine under test, as one row sees it."""

    def __init__(
        self,
        *,
        adapter: EngineAdapter,
        engine_spec: str,
        manual: bool,
        seed: int,
        tolerance_s: float,
        examples: int,
        unit_s: float = SYSTEM_UNIT_S,
        full_trace: bool = False,
        ledger: Ledger | None = None,
        resolution_us: int = 1,
        require: bool = False,
    ) -> None:
        self.adapter = adapter
        self.engine_spec = engine_spec
        """How a child process finds the engine again (entry-point name or ``module:attr``)."""
        self.manual = manual
        self.seed = seed
        self.examples = examples
        self.clock: ManualClock | None = ManualClock() if manual else None
        self.resolution_us = resolution_us
        """How finely the engine keeps instants (its adapter's ``time_resolution_us``)."""
        self.resolution = timedelta(microseconds=resolution_us)
        slack_s = (resolution_us - 1) / 1_000_000
        self.tolerance_s = slack_s if manual else tolerance_s + slack_s
        """Slack for comparing instants: under the manual clock none beyond the engine's resolution (an
        instant kept at 1 ms may lie up to 999 µs from the exact one); on the real clock the tolerance too."""
        self.unit_s = MANUAL_UNIT_S if manual else unit_s
        self.full_trace = full_trace
        self.require = require
        """``--alkstore-require``: a leg that needs a tool this machine lacks fails instead of not running."""
        self.ledger = ledger if ledger is not None else Ledger(row="")
        """Where this row's checks, failures and gaps are recorded (shared with a manual-clock twin)."""
        self._system_unit_s = unit_s
        self._tolerance_arg = tolerance_s
        self._leg_clauses: tuple[str, ...] = ()
        self.notes: list[str] = []
        self._locations: list[str] = []
        self._stores: list[Store] = []
        self._location: str | None = None

    @property
    def location(self) -> str:
        """The row's main location, made at setup."""
        if self._location is None:
            raise RuntimeError("RowContext.setup() has not run")
        return self._location

    def has(self, capability: Capability) -> bool:
        """Whether the engine declares ``capability``."""
        return capability in self.adapter.capabilities

    def note(self, text: str) -> None:
        """Record something the report should say about this row (e.g. a leg not run, and why)."""
        self.notes.append(text)

    async def setup(self) -> None:
        """Make the row's main location (once: a manual-clock twin's legs may ask again)."""
        if self._location is None:
            self._location = await self.new_location()

    async def new_location(self) -> str:
        """A further fresh location, dropped at teardown."""
        location = await self.adapter.create_location()
        self._locations.append(location)
        return location

    def adopt_location(self, location: str) -> None:
        """Drop ``location``, which the adapter made some other way (a crashable one), at teardown with the rest."""
        self._locations.append(location)

    async def open_store(
        self, location: str | None = None, *, clock: ManualClock | Literal["row"] | None = "row"
    ) -> Store:
        """A store on ``location`` (default: the row's) with the row's seed, closed at teardown.

        Its clock is the row's unless ``clock`` says otherwise: ``None`` is the engine's default clock, which a
        leg about that clock (T3) needs whatever clock the run uses.
        """
        store = await self.adapter.open_store(
            location if location is not None else self.location,
            clock=self.clock if clock == "row" else clock,
            seed=self.seed + len(self._stores),
        )
        self._stores.append(store)
        return store

    def now(self) -> datetime:
        """The row's idea of now: the manual clock, or the host's clock."""
        return self.clock.now() if self.clock is not None else datetime.now(UTC)

    @property
    def max_wait_s(self) -> float:
        """The longest the row may sleep at once on the real clock (``MAX_WAIT_UNITS`` ticks and the slack)."""
        return MAX_WAIT_UNITS * self.unit_s + self.tolerance_s

    async def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass: instantly under the manual clock, by sleeping on the real one.

        On the real clock a wait longer than ``max_wait_s`` is a violation of the clause the running leg
        checks: it can only come from an instant the engine stamped beyond what the row asked for (a lease
        of 300 s where the row asked for 1 s), and waiting it out would hang the run.
        """
        if self.clock is not None:
            self.clock.advance(seconds)
            return
        if seconds > self.max_wait_s:
            clause_id = self._leg_clauses[0] if self._leg_clauses else "T1"
            raise ContractViolation(
                f"[{clause_id}] the engine reported an instant {seconds:.3f} s ahead, which the row would have to "
                f"wait for; no row asks for more than {self.max_wait_s:.3f} s ({MAX_WAIT_UNITS} ticks of "
                f"{self.unit_s} s and the tolerance), so the engine stamped more than the row requested; "
                f"{clause_id} demands the instants the row's own durations give",
                clause=clause_id,
            )
        await asyncio.sleep(seconds)

    async def wait_until(self, instant: datetime) -> None:
        """Let time reach ``instant``: exactly under the manual clock; on the system clock, the tolerance past it."""
        margin = 0.0 if self.manual else self.tolerance_s
        await self.advance(max(0.0, (instant - self.now()).total_seconds() + margin))

    def not_exercised(self, clauses: tuple[str, ...], why: str, *, leg: str, kind: Gap = Gap.CAPABILITY) -> None:
        """Record that leg ``leg`` of ``clauses`` did not run, and why (a capability the engine lacks, say)."""
        _check_declared(leg, clauses)
        self.ledger.gap(clauses, kind, why)
        self.ledger.legs.append(LegRecord(leg, list(clauses), "not run", why, str(kind)))

    def _leg_gap(self, name: str) -> str | None:
        """The gap kind of leg ``name`` when it did not run, else ``None``."""
        found = [leg.gap for leg in self.ledger.legs if leg.name == name]
        return found[-1] if found else None

    def leg_status(self, name: str) -> str | None:
        """How leg ``name`` of this row ended, or ``None`` when it has not run."""
        found = [leg.status for leg in self.ledger.legs if leg.name == name]
        return found[-1] if found else None

    async def leg(
        self,
        name: str,
        clauses: tuple[str, ...],
        body: LegBody,
        *,
        after: tuple[str, ...] = (),
        clock: Literal["manual"] | None = None,
    ) -> bool:
        """Run one leg of the row; ``True`` when it passed.

        A violation or an engine exception ends this leg only: it is recorded as a failure of its clause
        (an exception is charged to the clause the leg was checking: its only clause, else the clause of
        its latest check) and the row goes on. ``after`` names legs whose state this one builds on: unless
        all of them passed, this one does not run. ``clock="manual"``: the leg needs exact instants.
        """
        _check_declared(name, clauses)
        blocked = [dep for dep in after if self.leg_status(dep) != "passed"]
        if blocked:
            # Left out only because what it builds on needed exact instants: a clock gap too, named on the
            # certificate, not a dependency on a failure.
            clock_only = all(self._leg_gap(dep) == str(Gap.CLOCK) for dep in blocked)
            self.not_exercised(
                clauses,
                f"leg {name!r} builds on leg(s) {blocked}, which did not pass",
                leg=name,
                kind=Gap.CLOCK if clock_only else Gap.DEPENDENCY,
            )
            return False
        target: RowContext = self
        if clock == "manual" and not self.manual:
            if Capability.INJECTABLE_CLOCK not in self.adapter.capabilities:
                self.not_exercised(
                    clauses,
                    f"leg {name!r} needs exact instants (the manual clock, T2) and the engine does not declare "
                    "injectable_clock",
                    leg=name,
                    kind=Gap.CLOCK,
                )
                return False
            target = self._manual_twin()
        record = LegRecord(name, list(clauses), "passed")
        self.ledger.last_checked = None
        checks_before, incidental_before = dict(self.ledger.checks), dict(self.ledger.incidental)
        outer, target._leg_clauses = target._leg_clauses, clauses
        defining = DEFINES.set(frozenset(clauses))
        settled: dict[str, int] = {}
        """Defining checks made in this leg's inner legs, each of which ended: a failure of this one keeps them."""
        enclosing = SETTLED.set(settled)
        try:
            if target is not self:
                await target.setup()
            try:
                await body(target)
            finally:
                if target is not self:
                    await target.teardown()
        except ContractViolation as exc:
            record.status, record.reason = "failed", str(exc).splitlines()[0]
            self.ledger.fail(Failure(exc.clause or clauses[0], name, str(exc)))
            self._stopped_short(name, clauses, checks_before, settled, exc.clause or clauses[0])
        except FaultMissed as exc:
            self.ledger.checks, self.ledger.incidental = checks_before, incidental_before
            why = f"leg {name!r} of row {self.ledger.row}: {exc}"
            record.status, record.reason, record.gap = "not run", why, str(Gap.FAULT_MISSED)
            self.ledger.gap(clauses, Gap.FAULT_MISSED, why)
        except HostTooSlow as exc:
            record.status, record.reason = "inconclusive", str(exc)
            undecided = clauses if exc.clauses is None else tuple(c for c in clauses if c in exc.clauses)
            self.ledger.undecided(undecided, str(exc))
        except (UnknownClause, UndeclaredClause):
            raise
        except Exception as exc:
            charged = self._charged(clauses)
            header = (
                f"[{charged}] the engine raised {type(exc).__name__}: {exc} in leg {name!r}; {charged} demands "
                "the operation to succeed or to fail as the contract says"
            )
            record.status, record.reason = "failed", header
            self.ledger.fail(
                Failure(charged, name, header + "\n\n" + engine_traceback(exc, full=self.full_trace), exception=True)
            )
            self._stopped_short(name, clauses, checks_before, settled, charged)
        finally:
            target._leg_clauses = outer
            DEFINES.reset(defining)
            SETTLED.reset(enclosing)
        self._settle(checks_before)
        self.ledger.legs.append(record)
        return record.status == "passed"

    def _stopped_short(
        self, name: str, clauses: tuple[str, ...], checks_before: dict[str, int], settled: dict[str, int], failed: str
    ) -> None:
        """A leg ended at a failure of ``failed``: it judged none of the other clauses it declares to its end.

        What it had checked of them itself is taken back, as a missed fault's checks are: a leg's early
        checks are often its set-up (the jobs a claim handed out, say), and a clause whose defining leg
        stopped before its own judgement must not read *passed* on them. Checks made in its inner legs
        that ended stay (each judged what it set out to). The clauses get a ``dependency`` gap (what they
        build on failed): *not exercised* behind that failure, unless another leg passed them, and an
        expected-failure entry for the failure accounts for them, as for a leg left out after it.
        """
        others = tuple(c for c in clauses if c != failed)
        for clause_id in others:
            kept = checks_before.get(clause_id, 0) + settled.get(clause_id, 0)
            if kept:
                self.ledger.checks[clause_id] = kept
            else:
                self.ledger.checks.pop(clause_id, None)
        if others:
            self.ledger.gap(others, Gap.DEPENDENCY, f"leg {name!r} stopped at its failure of {failed}")

    def _settle(self, checks_before: dict[str, int]) -> None:
        """An ended leg's defining checks count as settled in the leg around it, which a later failure there keeps."""
        enclosing = SETTLED.get()
        if enclosing is None:
            return
        for clause_id, count in self.ledger.checks.items():
            gained = count - checks_before.get(clause_id, 0)
            if gained > 0:
                enclosing[clause_id] = enclosing.get(clause_id, 0) + gained

    def _charged(self, clauses: tuple[str, ...]) -> str:
        last = self.ledger.last_checked
        if len(clauses) > 1 and last in clauses:
            return last
        return clauses[0]

    def _manual_twin(self) -> RowContext:
        """A context on a fresh location under a manual clock, sharing this row's ledger and seed."""
        twin = RowContext(
            adapter=self.adapter,
            engine_spec=self.engine_spec,
            manual=True,
            seed=self.seed,
            tolerance_s=self._tolerance_arg,
            examples=self.examples,
            unit_s=self._system_unit_s,
            full_trace=self.full_trace,
            ledger=self.ledger,
            resolution_us=self.resolution_us,
            require=self.require,
        )
        twin.notes = self.notes
        return twin

    async def timed(self, operation: Awaitable[T]) -> tuple[T, datetime, datetime]:
        """Await ``operation`` between two reads of the row's clock (equal under the manual clock)."""
        before = self.now()
        result = await operation
        return result, before, self.now()

    def expect_during(self, actual: datetime | None, before: datetime, after: datetime, clause: str, what: str) -> None:
        """``actual`` must be the engine's now during an op timed by ``timed``: exactly under the manual clock."""
        half = (after - before) / 2
        expect_instant(actual, before + half, clause, what, tolerance_s=self.tolerance_s + half.total_seconds())

    async def stored_jobs(self, location: str | None = None) -> int:
        """The oracle's count of jobs at ``location``, read without the engine's code path."""
        return await self.adapter.count_stored_jobs(location if location is not None else self.location)

    def child_clock_arg(self) -> str:
        """How a child process should build its clock: ``system``, or the manual clock's instant, frozen."""
        return "system" if self.clock is None else self.clock.now().isoformat()

    async def teardown(self) -> None:
        """Close every store and drop every location this context made (once)."""
        stores, self._stores = self._stores, []
        locations, self._locations = self._locations, []
        for store in reversed(stores):
            await store.close()
        for location in reversed(locations):
            await self.adapter.drop_location(location)
