"""One run of the suite inside pytest: collection, execution, the summary and the report.

Part of the suite.

``SuiteSession`` is registered as a pytest plugin object only when engines
were selected, so none of its hooks touch a session that does not certify.

Items are named ``alkstore::ROW[ENGINE]`` (``-k claim_order`` selects by row,
``-k sqlite`` by engine, and ``pytest 'alkstore::claim_order[sqlite]'`` runs
one). Each item runs its row's legs and leaves the row's ledger — the checks
that ran, the failures, what was left out — in its report; the session turns
the ledgers into one verdict per clause and a certificate per engine
(``alkstore_contract.suite.verdicts``).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alkstore_contract import CONTRACT_VERSION, __version__
from alkstore_contract.adapter import (
    CAPABILITY_CLAUSES,
    TIME_RESOLUTIONS_US,
    Capability,
    EngineAdapter,
    time_resolution_us,
)
from alkstore_contract.report.build import build_report, write_report
from alkstore_contract.report.model import EngineInfo, RowResult
from alkstore_contract.suite.emulation import declared_emulation
from alkstore_contract.suite.engine_options import ResolvedOption
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.ledger import CURRENT, Gap, Ledger
from alkstore_contract.suite.profiles import summary_line
from alkstore_contract.suite.publish import engine_entry
from alkstore_contract.suite.row import SUITE_VERSION, Row, all_rows
from alkstore_contract.suite.settings import SuiteSettings
from alkstore_contract.suite.verdicts import ClauseVerdict, EngineVerdict, Verdict, certify, clause_verdicts
from alkstore_contract.suite.xfail import XfailEntry, load_xfail_file
from alkstore_contract.wire.adapter import WireAdapter

SESSION_PLUGIN_NAME = "alkstore-suite-session"
ANCHOR = Path(__file__).with_name("contract.suite")
"""The file whose collection yields the rows (a data file, so no other collector claims it)."""
NODE_PREFIX = "alkstore"
"""The node id of the anchor: items are ``alkstore::ROW[ENGINE]`` wherever pytest was started."""


@dataclass
class Engine:
    """An engine as selected for this run."""

    spec: str
    adapter: EngineAdapter
    clock: str
    options: tuple[ResolvedOption, ...] = ()
    """The engine's own options as this session resolved them (its adapter's ``options``)."""
    _probe: tuple[str | None, str | None] | None = None

    @property
    def name(self) -> str:
        return self.adapter.name

    @property
    def resolution_us(self) -> int:
        return time_resolution_us(self.adapter)

    @property
    def emulates(self) -> dict[str, str]:
        """The clauses the adapter declares it builds for the engine (its optional ``emulates``)."""
        return declared_emulation(self.adapter)

    def unavailable_reason(self) -> str | None:
        """Asked once per process; the answer is kept for every row."""
        return self._probed()[0]

    def _probed(self) -> tuple[str | None, str | None]:
        if self._probe is None:
            self._probe = asyncio.run(probe(self.adapter))
        return self._probe

    def info(self) -> EngineInfo:
        unavailable, storage = self._probed()
        return EngineInfo(
            name=self.name,
            spec=self.spec,
            version=self.adapter.version,
            capabilities=sorted(str(c) for c in self.adapter.capabilities),
            clock=self.clock,
            unavailable_reason=unavailable,
            storage=storage,
            time_resolution_us=self.resolution_us,
            emulates=self.emulates,
        )


async def probe(adapter: EngineAdapter) -> tuple[str | None, str | None]:
    """Whether the engine can run here, and if so what it stores into (``storage_version``, optional).

    An adapter without ``storage_version`` reports ``None``; one whose
    ``storage_version`` raises reports what it raised, so the report says so
    rather than the run failing for a line of description.
    """
    unavailable = await adapter.unavailable_reason()
    describe = getattr(adapter, "storage_version", None)
    if unavailable is not None or describe is None:
        return unavailable, None
    try:
        storage: str = await describe()
    except Exception as exc:
        storage = f"unknown ({type(exc).__name__}: {exc})"
    return None, storage


def _prop(report: pytest.TestReport, key: str) -> Any:
    for name, value in getattr(report, "user_properties", ()):
        if name == key:
            return value
    return None


def _skip_text(report: pytest.TestReport) -> str | None:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return None


def _failure_text(report: pytest.TestReport) -> str:
    """The first line that says what went wrong: the crash message, or a row's own first line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr)
    lines = text.strip().splitlines()
    return lines[0] if lines else "failed"


class RowFailed(AssertionError):
    """One or more legs of a row failed; the message lists every failure with its clause."""


class SuiteSession:
    """The plugin object for one certifying session."""

    anchor = ANCHOR

    def __init__(
        self, config: pytest.Config, settings: SuiteSettings, engines: list[Engine], tick: tuple[float, str]
    ) -> None:
        self.config = config
        self.settings = settings
        self.engines = engines
        self.tick_s, self.tick_source = tick
        self.rows = all_rows()
        self.xfail: dict[str, list[XfailEntry]] = load_xfail_file(settings.xfail_file) if settings.xfail_file else {}
        self.results: dict[tuple[str, str], RowResult] = {}
        self.ledgers: dict[tuple[str, str], Ledger] = {}
        self.unavailable: dict[str, str] = {}

    def unmatched_xfail(self) -> list[str]:
        """Entries naming no row of this run (a typo, or a row the suite no longer has)."""
        known = {f"{row.name}[{engine.name}]" for row in self.rows for engine in self.engines}
        return [
            f"line {e.line}: {e.row_id} {e.clause}" for key, es in self.xfail.items() for e in es if key not in known
        ]

    @property
    def is_xdist_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    def pytest_report_header(self) -> list[str]:
        lines = [f"alkstore {__version__}, contract {CONTRACT_VERSION}"]
        lines += [f"alkstore: {key}={value}" for key, value in self.settings.echo().items()]
        lines.append(f"alkstore: real-clock tick {self.tick_s} s ({self.tick_source})")
        for engine in self.engines:
            caps = ", ".join(sorted(str(c) for c in engine.adapter.capabilities)) or "none"
            lines.append(
                f"alkstore engine {engine.name} {engine.adapter.version} ({engine.spec}): "
                f"clock={engine.clock}; time resolution {TIME_RESOLUTIONS_US[engine.resolution_us]}; "
                f"capabilities: {caps}"
            )
            lines.extend(f"alkstore engine {engine.name} {resolved.echo()}" for resolved in engine.options)
        return lines

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path == ANCHOR:
            suite: SuiteFile = SuiteFile.from_parent(parent, path=file_path, nodeid=NODE_PREFIX)
            return suite
        return None

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        summary = _prop(report, "alkstore_summary")
        if summary is None or report.when != "call" or hasattr(report, "wasxfail"):
            return None
        if report.passed:
            return "passed", ".", f"PASSED [{summary}]"
        if report.failed:
            return "failed", "F", f"FAILED [{summary}]"
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        unavailable = _prop(report, "alkstore_unavailable")
        if unavailable is not None:
            self.unavailable[str(_prop(report, "alkstore_engine"))] = str(unavailable)
            return
        row_name = _prop(report, "alkstore_row")
        if row_name is None:
            return
        engine = str(_prop(report, "alkstore_engine"))
        key = (engine, str(row_name))
        result = self.results.get(key)
        if result is None:
            result = RowResult(
                row=str(row_name),
                engine=engine,
                clauses=str(_prop(report, "alkstore_clauses")).split(),
                required=bool(_prop(report, "alkstore_required")),
                seed=_prop(report, "alkstore_seed"),
            )
            self.results[key] = result
        result.duration_s += report.duration
        notes = _prop(report, "alkstore_notes")
        if notes:
            result.notes = str(notes).splitlines()
        ledger = _prop(report, "alkstore_ledger")
        if ledger is not None:
            self.ledgers[key] = Ledger.from_json(str(ledger))
            result.legs = [leg.name + ": " + leg.status for leg in self.ledgers[key].legs]
        if hasattr(report, "wasxfail"):
            result.outcome, result.reason = "xfailed", str(report.wasxfail) or None
        elif report.skipped:
            result.outcome, result.reason = "skipped", _skip_text(report)
            if key not in self.ledgers:
                skipped = Ledger(row=str(row_name))
                skipped.gap(tuple(result.clauses), Gap.CAPABILITY, result.reason or "skipped")
                self.ledgers[key] = skipped
        elif report.failed:
            result.outcome = "failed"
            failures = self.ledgers[key].failures if key in self.ledgers else []
            result.reason = "; ".join(f.message.splitlines()[0] for f in failures) or _failure_text(report)

    def _ordered(self, engine: Engine) -> list[RowResult]:
        order = [row.name for row in self.rows]
        found = [r for r in self.results.values() if r.engine == engine.name]
        return sorted(found, key=lambda r: order.index(r.row))

    def _xfailed_clauses(self, engine: Engine) -> dict[str, str]:
        covered: dict[str, str] = {}
        for row in self.rows:
            for entry in self.xfail.get(f"{row.name}[{engine.name}]", []):
                covered[entry.clause] = f"{entry.row_id} {entry.clause}: {entry.reason}"
        return covered

    def verdict(self, engine: Engine) -> EngineVerdict:
        """The clause verdicts and the certificate for ``engine`` from what its rows recorded."""
        ledgers = [ledger for (name, _), ledger in self.ledgers.items() if name == engine.name]
        verdicts = clause_verdicts(ledgers, self._xfailed_clauses(engine), engine.emulates)
        # The engine's own answer, not only its placeholder item's: ``-k durability`` deselects the
        # placeholder, and a partial run must still say why the engine did not run.
        unavailable = self.unavailable.get(engine.name) or (None if ledgers else engine.unavailable_reason())
        if unavailable is not None:
            return EngineVerdict(verdicts, None, f"not run here: {unavailable}")
        ran = {row for (name, row) in self.ledgers if name == engine.name}
        missing = [row.name for row in self.rows if row.name not in ran]
        if missing:
            selection = " ".join(
                f"{flag} {value}"
                for flag, value in (("-k", self.config.option.keyword), ("-m", self.config.option.markexpr))
                if value
            )
            partial = f"partial run ({selection or f'{len(missing)} of {len(self.rows)} rows not run'})"
            failed = [
                line
                for line in certify(verdicts, ledgers, engine.adapter.capabilities).blockers
                if " not exercised: " not in line
            ]
            if failed:
                return EngineVerdict(verdicts, None, partial, failed)
            return EngineVerdict(verdicts, None, f"{partial}: no certificate")
        return EngineVerdict(verdicts, certify(verdicts, ledgers, engine.adapter.capabilities))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_xdist_worker or self.config.option.collectonly:
            return
        write = terminalreporter.write_line
        terminalreporter.section("alkstore conformance")
        for engine in self.engines:
            found = self.verdict(engine)
            storage = engine.info().storage
            on = f"; storage: {storage}" if storage else ""
            write(f"engine {engine.name} {engine.adapter.version} (clock={engine.clock}{on})")
            for result in self._ordered(engine):
                kind = "required" if result.required else "capability"
                reason = f" — {result.reason}" if result.reason and result.outcome != "passed" else ""
                write(f"  {result.outcome.upper():8} {result.row:27} {kind}{reason}")
                ledger = self.ledgers.get((engine.name, result.row))
                if ledger is not None:
                    write("           " + _clause_line(ledger, found.clauses))
                    for leg in ledger.legs:
                        if leg.status == "not run":
                            write(f"           leg {leg.name!r} not run ({' '.join(leg.clauses)}): {leg.reason}")
            write(f"  => {engine.name}: {found.line_for(engine.clock, engine.resolution_us)}")
            write(f"  => {engine.name}: {summary_line(found, engine.adapter.capabilities)}")
            for clause_id, why in engine.emulates.items():
                write(f"     emulated by the adapter: {clause_id}: {why}")
        for line in self.unmatched_xfail():
            write(f"alkstore: xfail entry matches no row: {line}")
        if self.settings.report is not None:
            write(f"alkstore: report written to {self.settings.report}")

    def pytest_sessionfinish(self) -> None:
        if self.is_xdist_worker or self.settings.report is None:
            return
        report = build_report(
            settings=self.settings.echo() | {"tick_s": self.tick_s, "tick_source": self.tick_source},
            selection={"keyword": self.config.option.keyword, "markexpr": self.config.option.markexpr},
            engines=[engine_entry(engine.info(), self.verdict(engine), engine.clock) for engine in self.engines],
            results=[r for engine in self.engines for r in self._ordered(engine)],
            unmatched_xfail=self.unmatched_xfail(),
            suite_version=SUITE_VERSION,
        )
        write_report(self.settings.report, report)


def _clause_line(ledger: Ledger, verdicts: dict[str, ClauseVerdict]) -> str:
    """A row's clauses as this row saw them: ``C3 passed (12) · P2 not exercised (capability)``."""
    parts: list[str] = []
    for clause_id in dict.fromkeys([*ledger.checks, *(f.clause for f in ledger.failures), *ledger.gaps]):
        failed = [f for f in ledger.failures if f.clause == clause_id]
        if failed:
            verdict = "xfailed" if verdicts[clause_id].verdict is Verdict.XFAILED else "failed"
        elif clause_id in ledger.inconclusive:
            verdict = "inconclusive"
        elif clause_id in ledger.fault_missed:
            verdict = f"not exercised ({Gap.FAULT_MISSED})"
        elif ledger.checks.get(clause_id):
            verdict = f"passed ({ledger.checks[clause_id]})"
        else:
            verdict = f"not exercised ({ledger.gaps[clause_id][0][0]})"
        parts.append(f"{clause_id} {verdict}")
    return " · ".join(parts)


def suite_session(config: pytest.Config) -> SuiteSession:
    """The session plugin object; it exists whenever rows are collected."""
    session = config.pluginmanager.get_plugin(SESSION_PLUGIN_NAME)
    if not isinstance(session, SuiteSession):
        raise RuntimeError("the alkstore suite session is not registered")
    return session


class SuiteFile(pytest.File):
    """The anchor file: one item per row and engine, or one placeholder for an engine that cannot run here."""

    def collect(self) -> Iterator[pytest.Item]:
        session = suite_session(self.config)
        for engine in session.engines:
            if not session.settings.require and engine.unavailable_reason() is not None:
                yield UnavailableItem.from_parent(self, name=f"unavailable[{engine.name}]", engine=engine)
                continue
            for contract_row in session.rows:
                item: RowItem = RowItem.from_parent(
                    self, name=f"{contract_row.name}[{engine.name}]", row=contract_row, engine=engine
                )
                skip = item.skip_reason()
                if skip is not None:
                    item.add_marker(pytest.mark.skip(reason=skip))
                yield item


class UnavailableItem(pytest.Item):
    """Stands for every row of an engine that cannot run here: one skip, with why and what to do."""

    def __init__(self, *, engine: Engine, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine = engine
        reason = str(engine.unavailable_reason())
        self.user_properties.extend([("alkstore_unavailable", reason), ("alkstore_engine", engine.name)])
        self.add_marker(
            pytest.mark.skip(
                reason=f"engine '{engine.name}' cannot run here: {reason} (--alkstore-require makes this a failure)"
            )
        )

    def runtest(self) -> None:
        raise RuntimeError("an unavailable engine's placeholder never runs")

    def reportinfo(self) -> tuple[str, int, str]:
        return NODE_PREFIX, 0, f"{NODE_PREFIX}::{self.name}"


class RowItem(pytest.Item):
    """One row on one engine."""

    def __init__(self, *, row: Row, engine: Engine, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row = row
        self.engine = engine
        session = suite_session(self.config)
        self.session_plugin = session
        self.settings = session.settings
        self.expected = session.xfail.get(f"{row.name}[{engine.name}]", [])
        self.seed = zlib.crc32(f"{self.settings.seed}:{row.name}:{engine.name}".encode())
        self.add_marker(pytest.mark.alkstore_row(name=row.name, clauses=row.clauses, required=row.required))
        self.user_properties.extend(
            [
                ("alkstore_row", row.name),
                ("alkstore_engine", engine.name),
                ("alkstore_clauses", " ".join(row.clauses)),
                ("alkstore_required", row.required),
                ("alkstore_seed", self.seed),
            ]
        )

    def skip_reason(self) -> str | None:
        """Why this row cannot run on this engine, naming the capability and clause missing; ``None``: it can."""
        adapter = self.engine.adapter
        for capability in self.row.requires:
            if capability not in adapter.capabilities:
                return (
                    f"engine '{self.engine.name}' does not declare '{capability}' ({CAPABILITY_CLAUSES[capability]}), "
                    f"which row {self.row.name} needs"
                )
        if self.engine.clock == "manual" and Capability.INJECTABLE_CLOCK not in adapter.capabilities:
            return (
                f"engine '{self.engine.name}' does not declare 'injectable_clock' (T2), "
                "so --alkstore-clock=manual cannot run it"
            )
        return None

    def setup(self) -> None:
        reason = self.engine.unavailable_reason()
        if reason is not None:
            pytest.fail(
                f"engine '{self.engine.name}' cannot run here: {reason} (--alkstore-require turns this into a failure)",
                pytrace=False,
            )

    def runtest(self) -> None:
        ledger = Ledger(row=self.row.name)
        context = RowContext(
            adapter=self.engine.adapter,
            engine_spec=self.engine.spec,
            manual=self.engine.clock == "manual",
            seed=self.seed,
            tolerance_s=self.settings.tolerance_s,
            examples=self.settings.examples,
            unit_s=self.session_plugin.tick_s,
            full_trace=self.settings.full_trace,
            ledger=ledger,
            resolution_us=self.engine.resolution_us,
            require=self.settings.require,
        )
        token = CURRENT.set(ledger)
        try:
            asyncio.run(_drive(self.row, context))
        finally:
            CURRENT.reset(token)
            self.user_properties.append(("alkstore_notes", "\n".join(context.notes)))
            self.user_properties.append(("alkstore_ledger", ledger.to_json()))
            listed = {entry.clause for entry in self.expected}
            self.user_properties.append(("alkstore_summary", _row_summary(ledger, listed)))
        self._judge(ledger)

    def _judge(self, ledger: Ledger) -> None:
        """Turn the ledger into the item's outcome: failed, xfailed (every failure listed), skipped, passed."""
        listed = {entry.clause: entry for entry in self.expected}
        failed = ledger.failed_clauses
        left_out = _left_out_by_a_failure(ledger)
        unexpected = [f for f in ledger.failures if f.clause not in listed]
        passing = [
            entry for clause_id, entry in listed.items() if clause_id not in failed and clause_id not in left_out
        ]
        if unexpected or passing:
            lines = [self._header(f.clause) + "\n" + f.message for f in unexpected]
            lines += [
                f"[{e.clause}] expected-failure entry (line {e.line}: {e.row_id} {e.clause}) did not fail: "
                f"clause {e.clause} of row {self.row.name} "
                + ("passed" if ledger.checks.get(e.clause) else "was not exercised")
                + " (the expected-failures file is strict)"
                for e in passing
            ]
            raise RowFailed("\n\n".join(lines))
        if failed:
            covered = [*failed, *(c for c in listed if c in left_out and c not in failed)]
            pytest.xfail("; ".join(f"{c}: {listed[c].reason}" for c in covered))
        if ledger.inconclusive:
            pytest.skip(
                "inconclusive: "
                + "; ".join(f"{c}: {why[0]}" for c, why in ledger.inconclusive.items())
                + " (never counted as passed)"
            )

    def _header(self, clause_id: str) -> str:
        return (
            f"row {self.row.name} on engine '{self.engine.name}' — clause {clause_id} "
            f"(clock={self.engine.clock}, seed={self.seed}, tick={self.session_plugin.tick_s} s):"
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, RowFailed):
            return f"{excinfo.value}\n\n{self.row.hint_for(wire=isinstance(self.engine.adapter, WireAdapter))}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[str, int, str]:
        """Located at ``alkstore`` (not the anchor file's path inside the installed package), like the node id."""
        return NODE_PREFIX, 0, f"{NODE_PREFIX}::{self.name} [{' '.join(self.row.clauses)}]"


def _left_out_by_a_failure(ledger: Ledger) -> set[str]:
    """Clauses with a leg that did not run because a leg it builds on failed: an expected-failure entry covers them."""
    return {c for c, gaps in ledger.gaps.items() if any(kind == str(Gap.DEPENDENCY) for kind, _ in gaps)}


def _legs_not_run(ledger: Ledger) -> list[str]:
    """Each leg of the row that did not run: ``'H1 boundary' (H1 H3: clock)``."""
    return [f"{leg.name!r} ({' '.join(leg.clauses)}: {leg.gap})" for leg in ledger.legs if leg.status == "not run"]


def _row_summary(ledger: Ledger, listed: set[str] | frozenset[str] = frozenset()) -> str:
    """The clauses of a row as ``pytest -v`` shows them: ``C3 C4 P1; failed: C4; not exercised: P2``.

    A failure the expected-failures file lists (``listed``) is shown as ``xfailed``, never under ``failed``,
    even when the row fails for another reason (a strict entry that did not fail).
    """
    failed = [c for c in ledger.failed_clauses if c not in listed]
    xfailed = [c for c in ledger.failed_clauses if c in listed]
    missed = ledger.fault_missed
    passed = [
        c for c in ledger.checks if c not in ledger.failed_clauses and c not in ledger.inconclusive and c not in missed
    ]
    left = [c for c in ledger.gaps if (c not in ledger.checks or c in missed) and c not in ledger.failed_clauses]
    parts = [" ".join(passed)]
    if failed:
        parts.append("failed: " + " ".join(failed))
    if xfailed:
        parts.append("xfailed: " + " ".join(xfailed))
    if ledger.inconclusive:
        parts.append("inconclusive: " + " ".join(ledger.inconclusive))
    if left:
        parts.append("not exercised: " + " ".join(left))
    legs = _legs_not_run(ledger)
    if legs:
        parts.append("legs not run: " + ", ".join(legs))
    return "; ".join(p for p in parts if p)


async def _drive(contract_row: Row, context: RowContext) -> None:
    """The row's body as its outermost leg, so anything that escapes its own legs is still a clause verdict."""
    await context.leg(contract_row.name, contract_row.clauses, _setup_and_run(contract_row), clock=contract_row.clock)


def _setup_and_run(contract_row: Row) -> Any:
    async def body(context: RowContext) -> None:
        await context.setup()
        try:
            await contract_row.body(context)
        finally:
            await context.teardown()

    return body
