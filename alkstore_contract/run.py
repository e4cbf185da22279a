"""One run of the suite inside pytest: collection, execution, the summary and the report.

``SuiteSession`` is registered as a pytest plugin object only when engines
were selected, so none of its hooks touch a session that does not certify.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from alkstore_contract.adapter import CAPABILITY_CLAUSES, Capability, EngineAdapter
from alkstore_contract.checks import ContractViolation
from alkstore_contract.harness import RowContext
from alkstore_contract.report import EngineInfo, RowResult, build_report, certification, write_report
from alkstore_contract.settings import SuiteSettings
from alkstore_contract.suite import Row, all_rows
from alkstore_contract.xfail import XfailEntry, load_xfail_file

SESSION_PLUGIN_NAME = "alkstore-suite-session"
ANCHOR = Path(__file__).with_name("contract.suite")
"""The file whose collection yields the rows (a data file, so no other collector claims it)."""


@dataclass
class Engine:
    """An engine as selected for this run."""

    spec: str
    adapter: EngineAdapter
    clock: str
    _probe: tuple[str | None, str | None] | None = None

    @property
    def name(self) -> str:
        return self.adapter.name

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


class SuiteSession:
    """The plugin object for one certifying session."""

    anchor = ANCHOR

    def __init__(self, config: pytest.Config, settings: SuiteSettings, engines: list[Engine]) -> None:
        self.config = config
        self.settings = settings
        self.engines = engines
        self.rows = all_rows()
        self.xfail: dict[str, XfailEntry] = load_xfail_file(settings.xfail_file) if settings.xfail_file else {}
        self.results: dict[tuple[str, str], RowResult] = {}

    @property
    def required_rows(self) -> list[str]:
        return [row.name for row in self.rows if row.required]

    def unmatched_xfail(self) -> list[str]:
        """Entries naming no row of this run (a typo, or a row the suite no longer has)."""
        known = {f"{row.name}[{engine.name}]" for row in self.rows for engine in self.engines}
        return [f"line {e.line}: {e.row_id}" for key, e in self.xfail.items() if key not in known]

    @property
    def is_xdist_worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    def pytest_report_header(self) -> list[str]:
        lines = [f"alkstore: {key}={value}" for key, value in self.settings.echo().items()]
        for engine in self.engines:
            caps = ", ".join(sorted(str(c) for c in engine.adapter.capabilities)) or "none"
            lines.append(
                f"alkstore engine {engine.name} {engine.adapter.version} ({engine.spec}): "
                f"clock={engine.clock}; capabilities: {caps}"
            )
        return lines

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path == ANCHOR:
            suite: SuiteFile = SuiteFile.from_parent(parent, path=file_path)
            return suite
        return None

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        clauses = _prop(report, "alkstore_clauses")
        if clauses is None or report.when != "call" or hasattr(report, "wasxfail"):
            return None
        if report.passed:
            return "passed", ".", f"PASSED [{clauses}]"
        if report.failed:
            return "failed", "F", f"FAILED [{clauses}]"
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
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
        if hasattr(report, "wasxfail"):
            result.outcome, result.reason = "xfailed", str(report.wasxfail) or None
        elif report.skipped:
            result.outcome, result.reason = "skipped", _skip_text(report)
        elif report.failed:
            result.outcome = "failed"
            result.reason = result.reason or _failure_text(report)

    def _ordered(self, engine: Engine) -> list[RowResult]:
        order = [row.name for row in self.rows]
        found = [r for r in self.results.values() if r.engine == engine.name]
        return sorted(found, key=lambda r: order.index(r.row))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_xdist_worker:
            return
        write = terminalreporter.write_line
        terminalreporter.section("alkstore conformance")
        for engine in self.engines:
            results = self._ordered(engine)
            storage = engine.info().storage
            on = f"; storage: {storage}" if storage else ""
            write(f"engine {engine.name} {engine.adapter.version} (clock={engine.clock}{on})")
            for result in results:
                kind = "required" if result.required else "capability"
                reason = f" — {result.reason}" if result.reason and result.outcome != "passed" else ""
                write(f"  {result.outcome.upper():8} {result.row:27} {' '.join(result.clauses):22} {kind}{reason}")
            certified, blockers = certification(results, self.required_rows)
            verdict = "CERTIFIED" if certified else "NOT CERTIFIED: " + "; ".join(blockers)
            write(f"  => {engine.name}: {verdict}")
        for line in self.unmatched_xfail():
            write(f"alkstore: xfail entry matches no row: {line}")
        if self.settings.report is not None:
            write(f"alkstore: report written to {self.settings.report}")

    def pytest_sessionfinish(self) -> None:
        if self.is_xdist_worker or self.settings.report is None:
            return
        report = build_report(
            settings=self.settings.echo(),
            selection={"keyword": self.config.option.keyword, "markexpr": self.config.option.markexpr},
            engines=[engine.info() for engine in self.engines],
            results=[r for engine in self.engines for r in self._ordered(engine)],
            required_rows=self.required_rows,
            unmatched_xfail=self.unmatched_xfail(),
        )
        write_report(self.settings.report, report)


def suite_session(config: pytest.Config) -> SuiteSession:
    """The session plugin object; it exists whenever rows are collected."""
    session = config.pluginmanager.get_plugin(SESSION_PLUGIN_NAME)
    if not isinstance(session, SuiteSession):
        raise RuntimeError("the alkstore suite session is not registered")
    return session


class SuiteFile(pytest.File):
    """The anchor file: collects one item per row and engine."""

    def collect(self) -> Iterator[pytest.Item]:
        session = suite_session(self.config)
        for engine in session.engines:
            for contract_row in session.rows:
                item: RowItem = RowItem.from_parent(
                    self, name=f"{contract_row.test_name}[{engine.name}]", row=contract_row, engine=engine
                )
                skip = item.skip_reason()
                if skip is not None:
                    item.add_marker(pytest.mark.skip(reason=skip))
                entry = session.xfail.get(f"{contract_row.name}[{engine.name}]")
                if entry is not None:
                    item.add_marker(pytest.mark.xfail(reason=entry.reason, strict=True, raises=AssertionError))
                yield item


class RowItem(pytest.Item):
    """One row on one engine."""

    def __init__(self, *, row: Row, engine: Engine, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.row = row
        self.engine = engine
        session = suite_session(self.config)
        self.settings = session.settings
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
        """Why this row cannot run on this engine, naming what is missing; ``None`` when it can.

        An engine that cannot run here skips (a failure under ``--alkstore-require``, in ``setup``).
        """
        if not self.settings.require:
            unavailable = self.engine.unavailable_reason()
            if unavailable is not None:
                return f"engine '{self.engine.name}' cannot run here: {unavailable}"
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
        if self.row.manual_clock_only and self.engine.clock != "manual":
            return f"row {self.row.name} moves time by hours and runs only on the manual clock (T2); clock=system"
        return None

    def setup(self) -> None:
        reason = self.engine.unavailable_reason()
        if reason is not None:
            pytest.fail(
                f"engine '{self.engine.name}' cannot run here: {reason} (--alkstore-require turns this into a failure)",
                pytrace=False,
            )

    def runtest(self) -> None:
        context = RowContext(
            adapter=self.engine.adapter,
            engine_spec=self.engine.spec,
            manual=self.engine.clock == "manual",
            seed=self.seed,
            tolerance_s=self.settings.tolerance_s,
            examples=self.settings.examples,
        )
        try:
            asyncio.run(_drive(self.row, context))
        finally:
            self.user_properties.append(("alkstore_notes", "\n".join(context.notes)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ContractViolation):
            return (
                f"{excinfo.value}\n\nrow {self.row.name} [{' '.join(self.row.clauses)}] on engine "
                f"'{self.engine.name}' (clock={self.engine.clock}, seed={self.seed})\n{self.row.doc}"
            )
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.name} [{' '.join(self.row.clauses)}]"


async def _drive(contract_row: Row, context: RowContext) -> None:
    await context.setup()
    try:
        await contract_row.body(context)
    finally:
        await context.teardown()
