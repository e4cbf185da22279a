"""A clause passes only on its defining checks (docs/capabilities.md, "What a certificate covers").

Rule ids: every clause (the rule applies to all); H1, H5, C7 and D2 for the rows that showed the gaps.
If one of these fails, check ``count_check`` in alkstore_contract/suite/ledger.py (a check counts as defining only
in a leg declaring its clause), ``clause_verdicts`` in verdicts.py (passed needs a defining check), the
``after=`` of lease_validity's legs (each builds only on its own queue's claims), and ``_judge`` in run.py (an
expected-failure entry covers a clause a failure elsewhere in the row left unexercised).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from alkstore_mem import MemAdapter

from alkstore_contract.suite.checks import expect, expect_stored
from alkstore_contract.suite.clauses import binding
from alkstore_contract.suite.harness import RowContext, UndeclaredClause
from alkstore_contract.suite.ledger import Ledger
from alkstore_contract.suite.row import row
from alkstore_contract.suite.run import _drive
from alkstore_contract.suite.verdicts import Verdict, certify, clause_verdicts
from tests.forked_pytester import runpytest_forked
from tests.row_context import row_context

REPO = Path(__file__).resolve().parents[1]

WRONG_ATTEMPTS_ENGINE = """
import dataclasses

from alkstore_mem import MemAdapter, MemDriver


class WrongAttemptsDriver(MemDriver):
    async def claim(self, queue, worker_id, n, token, now):
        jobs = await super().claim(queue, worker_id, n, token, now)
        return [dataclasses.replace(job, attempts=job.attempts + 1) for job in jobs]


class SystemOnly(MemAdapter):
    name = "wrong-attempts"
    driver_class = WrongAttemptsDriver
    capabilities = frozenset()


adapter = SystemOnly()
"""
"""A claim's handle reports one attempt too many (C3): every lease_validity leg built on a claim is left out."""


class SystemClockMem(MemAdapter):
    """The mem engine without ``injectable_clock``: a ``clock="manual"`` leg is a clock gap on it."""

    capabilities = frozenset()


def _run_row(body: object, clauses: tuple[str, ...], adapter: MemAdapter | None = None) -> Ledger:
    """Run ``body`` as a row on the system clock, on ``adapter`` (the mem engine without ``injectable_clock``)."""
    contract_row = row("defining_probe", clauses)(body)  # type: ignore[arg-type]
    engine = adapter or SystemClockMem()
    with row_context(contract_row.name, engine, "alkstore_mem:adapter", manual=False, tolerance_s=0.05) as ctx:
        asyncio.run(_drive(contract_row, ctx))
    return ctx.ledger


async def _h1_holds(_: RowContext) -> None:
    """A leg body whose one check of H1 passes."""
    expect(True, "H1", did="-", demands="-")


async def _c7_breaks(_: RowContext) -> None:
    """A leg body whose one check of C7 fails: the failure a later leg builds on (``after=``)."""
    expect(False, "C7", did="broke an unrelated clause", demands="it kept")


async def _probe(ctx: RowContext) -> None:
    store = await ctx.open_store()
    queue = store.queue("probe")

    async def set_up(_: RowContext) -> None:
        job_id = await queue.enqueue({"leg": "set up"})
        await expect_stored(queue, job_id, "H1")  # incidental: the set-up leg declares C3 only
        await expect_stored(queue, job_id, "C3")

    await ctx.leg("set up", ("C3",), set_up)
    await ctx.leg("unrelated", ("C7",), _c7_breaks)
    await ctx.leg("fence after the failure", ("H1",), _h1_holds, after=("unrelated",))
    await ctx.leg("fence at the boundary", ("H1",), _h1_holds, clock="manual")


def test_incidental_checks_never_pass_a_clause_whose_defining_legs_were_left_out() -> None:
    """H1: checked only by a set-up leg that cites it; both legs that define it skipped (dependency, clock)."""
    ledger = _run_row(_probe, ("C3", "C7", "H1"))
    assert ledger.incidental == {"H1": 1}
    verdicts = clause_verdicts([ledger], {})
    h1 = verdicts["H1"]
    assert (h1.verdict, h1.checks, h1.gap) == (Verdict.NOT_EXERCISED, 0, "dependency")
    assert h1.legs_not_run == [
        "defining_probe: leg 'fence after the failure' (dependency): leg 'fence after the failure' builds on "
        "leg(s) ['unrelated'], which did not pass",
        "defining_probe: leg 'fence at the boundary' (clock): leg 'fence at the boundary' needs exact instants "
        "(the manual clock, T2) and the engine does not declare injectable_clock",
    ]
    assert verdicts["C3"].verdict is Verdict.PASSED
    blockers = certify(verdicts, [ledger], frozenset()).blockers
    assert any(line.startswith("H1 not exercised: leg 'fence after the failure' builds on") for line in blockers)


def test_a_passed_clause_with_a_defining_leg_left_out_by_a_failure_blocks_the_certificate() -> None:
    """Every clause: the only check of a behaviour never goes missing silently."""

    async def body(ctx: RowContext) -> None:
        await ctx.leg("one H1 leg", ("H1",), _h1_holds)
        await ctx.leg("broken", ("C7",), _c7_breaks)
        await ctx.leg("another H1 leg", ("H1",), _h1_holds, after=("broken",))

    ledger = _run_row(body, ("H1", "C7"))
    verdicts = clause_verdicts([ledger], {})
    assert verdicts["H1"].verdict is Verdict.PASSED
    blockers = certify(verdicts, [ledger], frozenset()).blockers
    assert "H1 passed without its leg 'another H1 leg' (defining_probe, dependency): " in "\n".join(blockers)


def test_a_leg_may_declare_only_clauses_its_row_defines() -> None:
    """Every clause: a leg's clauses are a subset of its row's, so the rows table stays true."""

    async def body(ctx: RowContext) -> None:
        async def anything(_: RowContext) -> None:
            return None

        await ctx.leg("strays", ("H1", "R1"), anything)

    with pytest.raises(UndeclaredClause, match=r"leg 'strays' declares \['R1'\]"):
        _run_row(body, ("H1",))


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("PYTHONPATH", f"{pytester.path}:{REPO}")
    monkeypatch.delenv("ALKSTORE_REQUIRE", raising=False)

    def go(*args: str) -> pytest.RunResult:
        return runpytest_forked(pytester, "-p", "no:cacheprovider", *args)

    return go


def _clauses(report_path: Path) -> dict[str, dict[str, object]]:
    engine = json.loads(report_path.read_text(encoding="utf-8"))["engines"][0]
    return {c["clause"]: c for c in engine["clauses"]}


def test_an_engine_whose_fence_legs_are_all_left_out_never_shows_h1_passed(
    pytester: pytest.Pytester, run: object
) -> None:
    """H1 on the system clock: every claim fails C3, so no leg that tests the fence runs."""
    pytester.makepyfile(wrong_attempts=WRONG_ATTEMPTS_ENGINE)
    report_path = pytester.path / "report.json"
    result = run(  # type: ignore[operator]
        "--alkstore-engine=wrong_attempts:adapter",
        "--alkstore-clock=system",
        "-k",
        "lease_validity",
        f"--alkstore-report={report_path}",
    )
    result.assert_outcomes(failed=1)
    assert "H1 passed" not in result.stdout.str()
    h1 = _clauses(report_path)["H1"]
    assert (h1["verdict"], h1["checks"]) == ("not exercised", 0)
    left_out = "\n".join(str(leg) for leg in h1["legs_not_run"])  # type: ignore[attr-defined]
    for leg in ("'expired but held' (dependency)", "'ops after the deadline' (dependency)", "'H1 boundary' (clock)"):
        assert leg in left_out
    result.stdout.fnmatch_lines(["*leg 'H1 boundary' not run (H1 H3): leg 'H1 boundary' needs exact instants*"])


def test_h5_runs_when_an_unrelated_c7_check_fails(pytester: pytest.Pytester, run: object) -> None:
    """H5, C7: the fence leg builds on its own queue's leases, not on the exhausted-lease queue's reclaim."""
    report_path = pytester.path / "report.json"
    result = run(  # type: ignore[operator]
        "--alkstore-engine=tests.mutants.sqlite_reclaim_exhausted:adapter",
        "-k",
        "lease_validity",
        f"--alkstore-report={report_path}",
    )
    result.assert_outcomes(failed=1)
    clauses = _clauses(report_path)
    assert clauses["C7"]["verdict"] == "failed"
    assert (clauses["H5"]["verdict"], clauses["H1"]["verdict"]) == ("passed", "passed")
    legs = json.loads(report_path.read_text(encoding="utf-8"))["engines"][0]["rows"][0]["legs"]
    assert "fenced after a reclaim: passed" in legs


def test_an_expected_failure_entry_covers_a_clause_a_failure_elsewhere_left_unexercised(
    pytester: pytest.Pytester, run: object
) -> None:
    """D1, D2: 'dead stays dead' builds on the failed 'fail' leg; listing D2 beside D1 is accepted."""
    listing = pytester.path / "xfail.txt"
    listing.write_text(
        "dead_letter[mut-sqlite-fail-without-error] D1 fail() keeps no error\n"
        "dead_letter[mut-sqlite-fail-without-error] D2 left out by the D1 failure\n",
        encoding="utf-8",
    )
    result = run(  # type: ignore[operator]
        "--alkstore-engine=tests.mutants.sqlite_fail_without_error:adapter",
        f"--alkstore-xfail-file={listing}",
        "-k",
        "dead_letter",
    )
    result.assert_outcomes(xfailed=1)
    assert "did not fail" not in result.stdout.str()


def test_a_clause_a_leg_had_not_checked_when_it_failed_is_left_out_by_that_failure() -> None:
    """E7 behind E5: a leg that stops at its failure of E5 leaves E7, which it declares, a dependency gap.

    So an expected-failure entry for E5 accounts for E7 too (the certificate is refused on known differences
    only), instead of E7 reading *not exercised* for whatever unrelated gap another row had. If this fails, check
    ``RowContext._stopped_short`` in suite/harness.py.
    """

    async def body(ctx: RowContext) -> None:
        async def options(_: RowContext) -> None:
            expect(False, "E5", did="refused a retention", demands="it be kept")
            expect(True, "E7", did="-", demands="-")

        await ctx.leg("options", ("E5", "E7"), options)

    ledger = _run_row(body, ("E5", "E7"))
    assert ledger.gaps["E7"] == [("dependency", "leg 'options' stopped at its failure of E5")]
    assert "E5" not in ledger.gaps
    rest = Ledger(row="the rest of the core")
    for known in binding(frozenset()):
        if known.untested is None and known.id not in ("E5", "E7"):
            rest.check(known.id)
    verdicts = clause_verdicts([ledger, rest], {"E5": "a known difference"})
    assert (verdicts["E7"].verdict, verdicts["E7"].gap) == (Verdict.NOT_EXERCISED, "dependency")
    certificate = certify(verdicts, [ledger, rest], frozenset())
    assert not certificate.certified
    assert certificate.expected_only


def test_a_leg_that_stops_at_a_failure_takes_back_its_own_checks_of_its_other_clauses_but_not_its_inner_legs() -> None:
    """R5 behind R2: checks a leg made before it stopped (its set-up) never pass a clause it did not judge to its end.

    An inner leg that ended keeps its checks (C3 here): it judged what it set out to. If this fails, check
    ``RowContext._stopped_short`` and ``RowContext._settle`` in suite/harness.py (and ``SETTLED`` in ledger.py).
    """

    async def body(ctx: RowContext) -> None:
        async def inner(_: RowContext) -> None:
            expect(True, "C3", did="-", demands="-")

        async def spread(inner_ctx: RowContext) -> None:
            await inner_ctx.leg("claims", ("C3",), inner)
            expect(True, "R5", did="handed out every retried job", demands="-")
            expect(False, "R2", did="retried outside the range", demands="within it")
            expect(True, "R5", did="-", demands="the spread, never reached")

        await ctx.leg("jitter", ("C3", "R2", "R5"), spread)

    ledger = _run_row(body, ("C3", "R2", "R5"))
    assert ledger.checks == {"C3": 1, "R2": 1}
    verdicts = clause_verdicts([ledger], {})
    assert (verdicts["R5"].verdict, verdicts["R5"].gap) == (Verdict.NOT_EXERCISED, "dependency")
    assert verdicts["C3"].verdict is Verdict.PASSED
    assert verdicts["R2"].verdict is Verdict.FAILED
