"""The pytest plugin as a user meets it: collection, options, skips, xfail, report, xdist."""

from __future__ import annotations

import fnmatch
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from alkstore_contract import CONTRACT_VERSION, __version__
from alkstore_contract.report.build import SCHEMA_PATH
from alkstore_contract.suite.row import ROW_MODULES
from tests.forked_pytester import runpytest_forked

Run = Callable[..., pytest.RunResult]
"""The ``run`` fixture: pytest in a process of its own with these arguments."""

FAKE_ENGINE = """
from alkstore_mem import adapter as _mem


class Unreachable(type(_mem)):
    name = "unreachable"

    async def unavailable_reason(self):
        return "server at 127.0.0.1:1 refused the connection"


adapter = Unreachable()
"""

INT32_ENGINE = """
from alkstore_mem import MemAdapter, MemDriver


class Int32Driver(MemDriver):
    async def insert(self, queue, jobs, now):
        if 2**31 <= abs(jobs.priority) < 2**63:
            raise OverflowError(f"value out of int32 range: {jobs.priority}")
        return await super().insert(queue, jobs, now)


class Int32Adapter(MemAdapter):
    name = "int32"
    driver_class = Int32Driver


adapter = Int32Adapter()
"""
"""A pgqueuer-style engine: a 32-bit priority column raises on a valid 64-bit priority (E7)."""


def _expect(result: pytest.RunResult, lines: list[str], **outcomes: int) -> pytest.RunResult:
    """A run's outcomes, as ``assert_outcomes`` counts them, and lines of its output (fnmatch patterns, in order)."""
    result.assert_outcomes(**outcomes)
    result.stdout.fnmatch_lines(lines)
    return result


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run pytest in a fresh empty directory, in a process of its own (``tests/forked_pytester.py``), as users do."""
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    monkeypatch.delenv("ALKSTORE_REQUIRE", raising=False)

    def go(*args: str) -> pytest.RunResult:
        return runpytest_forked(pytester, "-p", "no:cacheprovider", *args)

    return go


def test_without_an_engine_the_plugin_adds_nothing(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(test_own="def test_mine():\n    pass\n")
    result = run("-v")
    result.assert_outcomes(passed=1)
    assert "contract.suite" not in result.stdout.str()


def test_an_empty_directory_collects_every_row_with_its_clauses(run: Run) -> None:
    result = _expect(
        run("--alkstore-engine=mem", "-v", "-k", "claim_extents or claim_order"),
        [
            "alkstore::claim_extents[[]mem[]] PASSED [[]C5 C6[]]*",
            "*C5 passed (*) · C6 passed (*)",
            "*=> mem: partial run (-k claim_extents or claim_order): no certificate",
        ],
        passed=2,
    )
    assert "did not run" not in result.stdout.str()
    collected = run("--alkstore-engine=mem", "--collect-only", "-q")
    assert collected.stdout.str().count("alkstore::") == len(ROW_MODULES)
    assert "certif" not in collected.stdout.str().lower()


def test_a_test_id_pastes_back_into_pytest(run: Run) -> None:
    test_id = "alkstore::claim_extents[mem]"
    _expect(run("--alkstore-engine=mem", "-v", test_id), ["alkstore::claim_extents[[]mem[]] PASSED*"], passed=1)


def test_an_unknown_engine_is_a_usage_error_listing_the_installed_ones(run: Run) -> None:
    result = run("--alkstore-engine=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*unknown engine 'nope': no alkstore.engines entry point of that name; "
            "installed engines: mem, pgqueuer, postgres, procrastinate, sqlite*"
        ]
    )


UNLOADABLE: dict[str, tuple[str, str, str]] = {
    "ImportError": (
        "from alkstore_contract.wire import open_wire\n",
        "bad_engine:adapter",
        "— alkstore_contract.wire* use alkstore_contract.suite.network*",
    ),
    "AttributeError": (
        "adaptr = None\n",
        "bad_engine:adapter",
        "AttributeError: module 'bad_engine' has no attribute*",
    ),
    "SyntaxError": ("adapter = (\n", "bad_engine:adapter", "SyntaxError: *bad_engine.py, line 1)"),
    "missing entry point": ("", "bad-engine", "unknown engine 'bad-engine': no alkstore.engines entry point*"),
}
"""What an adapter that cannot be loaded is, the engine named, and what its one usage line says."""


@pytest.mark.parametrize("kind", list(UNLOADABLE))
def test_an_adapter_that_cannot_load_is_a_usage_error_not_an_internal_error(
    pytester: pytest.Pytester, run: Run, kind: str
) -> None:
    """API-3: one line naming the engine and the error, exit code 4; if this fails, check registry.load_adapter."""
    source, spec, expected = UNLOADABLE[kind]
    pytester.makepyfile(bad_engine=source)
    result = run(f"--alkstore-engine={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    errors = [line for line in result.stderr.lines if line.startswith("ERROR: ")]
    assert len(errors) == 1, result.stderr.str()
    assert f"'{spec}'" in errors[0]
    assert fnmatch.fnmatch(errors[0], f"ERROR: *{expected}"), errors[0]


def test_an_unavailable_engine_skips_with_its_reason_or_fails_when_required(
    pytester: pytest.Pytester, run: Run
) -> None:
    pytester.makepyfile(fake_engine=FAKE_ENGINE)
    skipped = _expect(
        run("--alkstore-engine=fake_engine:adapter", "-rs"),
        [
            "  => unreachable: not run here: server at 127.0.0.1:1 refused the connection",
            "SKIPPED [[]1[]] alkstore: engine 'unreachable' cannot run here: server at 127.0.0.1:1 refused*"
            "--alkstore-require*",
        ],
        skipped=1,
    )
    assert skipped.stdout.str().count("refused") == 2
    _expect(
        run("--alkstore-engine=fake_engine:adapter", "--alkstore-require", "-k", "claim_extents"),
        ["*--alkstore-require turns this into a failure*"],
        errors=1,
    )


def test_an_adapter_missing_members_is_told_which(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(half_engine="class Half:\n    name = 'half'\n    version = '0'\n\nadapter = Half()\n")
    result = run("--alkstore-engine=half_engine:adapter")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*does not implement*EngineAdapter: it lacks capabilities, unavailable_reason, create_location, "
            "open_store, count_stored_jobs, drop_location*"
        ]
    )


def test_a_missing_capability_is_named_with_its_clause(run: Run) -> None:
    _expect(
        run("--alkstore-engine=mem", "-rs", "-k", "durability or crash_recovery"),
        [
            "*engine 'mem' does not declare 'durable' (P3), which row durability needs*",
            "*engine 'mem' does not declare 'multi_process' (P2), which row crash_recovery needs*",
        ],
        skipped=2,
    )


def test_the_ini_key_selects_engines_like_the_option(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makeini("[pytest]\nalkstore_engines = mem\n")
    run("-k", "claim_extents").assert_outcomes(passed=1)


def test_an_xfail_entry_that_passes_fails_the_run_and_a_stray_entry_is_reported(
    pytester: pytest.Pytester,
    run: Run,
) -> None:
    listing = pytester.path / "xfail.txt"
    listing.write_text("claim_extents[mem] C5 known bad batch sizes\nno_such_row[mem] C5 typo\n", encoding="utf-8")
    _expect(
        run("--alkstore-engine=mem", f"--alkstore-xfail-file={listing}", "-k", "claim_extents"),
        [
            "*[[]C5[]] expected-failure entry (line 1: claim_extents[[]mem[]] C5) did not fail*passed*strict*",
            "*xfail entry matches no row: line 2: no_such_row[[]mem[]] C5*",
        ],
        failed=1,
    )


def test_an_xfail_entry_must_name_a_clause(pytester: pytest.Pytester, run: Run) -> None:
    listing = pytester.path / "xfail.txt"
    listing.write_text("claim_extents[mem] known bad batch sizes\n", encoding="utf-8")
    result = run("--alkstore-engine=mem", f"--alkstore-xfail-file={listing}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*line 1*'known' is not a clause of docs/contract.md*row[[]engine[]] CLAUSE reason*"])


def test_an_engine_exception_is_a_clause_verdict_that_other_legs_survive(pytester: pytest.Pytester, run: Run) -> None:
    pytester.makepyfile(int32_engine=INT32_ENGINE)
    report_path = pytester.path / "report.json"
    failed = run(
        "--alkstore-engine=int32_engine:adapter", "-k", "enqueue_opts_resolution", f"--alkstore-report={report_path}"
    )
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "row enqueue_opts_resolution on engine 'int32' — clause E7 (clock=manual, seed=*",
            "[[]E7[]] the engine raised OverflowError: value out of int32 range: * in leg 'expiry and priority'*",
            "Traceback (the engine's frames):*",
            "*int32_engine.py*",
            "When it fails, check*",
        ]
    )
    failure = failed.stdout.str().partition("short test summary info")[0]  # under CI, the summary repeats it whole
    assert failure.count("When it fails, check") == 1, "the hint's heading is printed once"
    assert len(failed.stdout.lines) < 120, "the traceback is trimmed to the engine's frames"
    verdicts = {c["clause"]: c["verdict"] for c in json.loads(report_path.read_text())["engines"][0]["clauses"]}
    assert (verdicts["E7"], verdicts["E2"], verdicts["T2"]) == ("failed", "passed", "passed")

    listing = pytester.path / "xfail.txt"
    listing.write_text(
        "enqueue_opts_resolution[int32] E7 a 32-bit priority column (upstream issue 12)\n"
        "bounds_at_their_edge[int32] E9 a 32-bit priority column refuses the int64 bounds (upstream issue 12)\n"
    )
    listed = run(
        "--alkstore-engine=int32_engine:adapter", f"--alkstore-xfail-file={listing}", f"--alkstore-report={report_path}"
    )
    listed.assert_outcomes(passed=14, skipped=6, xfailed=2)  # durability, crash_recovery, three server rows, W's
    engine = json.loads(report_path.read_text())["engines"][0]
    assert engine["certified"] is False
    assert engine["not_certified_because"] == [
        "E7 failed as expected (enqueue_opts_resolution[int32] E7: a 32-bit priority column (upstream issue 12))",
        "E9 failed as expected (bounds_at_their_edge[int32] E9: a 32-bit priority column refuses the int64 bounds "
        "(upstream issue 12))",
        "E5 not exercised: leg 'expiry and priority' stopped at its failure of E7",
    ]
    assert engine["known_differences_only"] is True, "a clause left out by a listed failure is a known difference"


def test_the_report_follows_its_schema_and_says_why_not_certified(pytester: pytest.Pytester, run: Run) -> None:
    report_path = pytester.path / "out" / "report.json"
    result = run(
        "--alkstore-engine=mem,sqlite", f"--alkstore-report={report_path}", "-k", "claim_extents or durability"
    )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    jsonschema.validate(report, json.loads(Path(SCHEMA_PATH).read_text(encoding="utf-8")))
    result.stdout.fnmatch_lines([f"alkstore {__version__}, contract {CONTRACT_VERSION}"])
    assert (report["suite_version"], report["contract_version"]) == (__version__, CONTRACT_VERSION)
    assert report["selection"] == {"keyword": "claim_extents or durability", "markexpr": ""}
    mem, sqlite = report["engines"]
    assert (mem["name"], mem["clock"], mem["storage"]) == ("mem", "manual", None)
    assert sqlite["storage"] == f"SQLite {sqlite3.sqlite_version}"
    outcomes = {row["row"]: row["outcome"] for row in mem["rows"]}
    assert outcomes == {"claim_extents": "passed", "durability": "skipped"}
    assert mem["certified"] is False
    assert mem["not_certified_because"] == ["partial run (-k claim_extents or durability): no certificate"]
    clauses = {c["clause"]: c for c in mem["clauses"]}
    assert (clauses["C5"]["verdict"], clauses["C5"]["rows"]) == ("passed", ["claim_extents"])
    assert (clauses["P3"]["verdict"], clauses["P3"]["gap"]) == ("not exercised", "capability")
    assert (clauses["T3"]["verdict"], clauses["T3"]["gap"]) == ("not exercised", "not run")


def test_rows_run_under_pytest_asyncio_auto_mode(run: Run) -> None:
    result = run("-o", "asyncio_mode=auto", "--alkstore-engine=mem", "-k", "claim_extents or lease_validity")
    result.assert_outcomes(passed=2)


def test_xdist_runs_rows_in_parallel_and_the_controller_writes_the_report(
    pytester: pytest.Pytester,
    run: Run,
) -> None:
    report_path = pytester.path / "report.json"
    result = run("-n", "2", "--alkstore-engine=mem,sqlite", f"--alkstore-report={report_path}", "-k", "claim")
    result.assert_outcomes(passed=4)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert sorted(e["name"] for e in report["engines"]) == ["mem", "sqlite"]
    assert all(len(e["rows"]) == 2 for e in report["engines"])


def test_a_partial_run_still_says_why_the_engine_could_not_run(pytester: pytest.Pytester, run: Run) -> None:
    """``-k durability`` deselects the unavailable engine's placeholder; the verdict line still gives the reason."""
    pytester.makepyfile(fake_engine=FAKE_ENGINE)
    result = run("--alkstore-engine=fake_engine:adapter", "-k", "durability")
    result.stdout.fnmatch_lines(["*=> unreachable: not run here: server at 127.0.0.1:1 refused the connection*"])
    assert "partial run" not in result.stdout.str()


def test_a_strict_entry_that_did_not_fail_lists_the_expected_failures_as_xfailed(
    pytester: pytest.Pytester, run: Run
) -> None:
    """E7 listed and failing, E1 listed and passing: the row fails on E1 only, and E7 shows as xfailed."""
    pytester.makepyfile(int32_engine=INT32_ENGINE)
    listing = pytester.path / "xfail.txt"
    listing.write_text(
        "enqueue_opts_resolution[int32] E7 a 32-bit priority column\nenqueue_opts_resolution[int32] E1 not broken\n",
        encoding="utf-8",
    )
    result = run(
        "--alkstore-engine=int32_engine:adapter", f"--alkstore-xfail-file={listing}", "-k", "enqueue_opts", "-rf"
    )
    result.assert_outcomes(failed=1)
    summary = [line for line in result.stdout.lines if line.startswith("FAILED [")]
    assert summary
    assert all("xfailed: E7" in line and "failed: E7" not in line.replace("xfailed", "") for line in summary)


SYSTEM_ONLY_ENGINE = """
from alkstore_mem import MemAdapter


class SystemOnly(MemAdapter):
    name = "system-only"
    capabilities = frozenset()


adapter = SystemOnly()
"""
"""An engine that declares no injectable_clock, as one on a server's clock would."""


def test_an_undeclared_clock_is_refused_with_its_reason_said_once(pytester: pytest.Pytester, run: Run) -> None:
    """T2: ``--alkstore-clock=manual`` on an engine without injectable_clock: one reason, not one a clause."""
    pytester.makepyfile(system_only=SYSTEM_ONLY_ENGINE)
    result = run("--alkstore-engine=system_only:adapter", "--alkstore-clock=manual")
    lines = [line for line in result.stdout.lines if "=> system-only:" in line]
    assert lines
    assert any("does not declare 'injectable_clock'" in line for line in lines)
    for line in lines:
        assert line.count("does not declare 'injectable_clock'") <= 1
        assert len(line) < 600
