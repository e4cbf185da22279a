"""R5 judged on what a retry's now bracket lets the suite know (backoff_curve_equivalence's jitter and seed legs).

Rule ids: R5 (the jitter spreads, a seed replays it), R2 (its range checks stand when R5 is undecided).
If one of these fails, check ``judge_spread`` and ``judge_seeds`` in
alkstore_contract/suite/rows/backoff_curve_equivalence.py (a check fails only when no instant of the brackets
passes it, passes only when every instant does, and is inconclusive in between) and the ``clauses`` of
``HostTooSlow`` in alkstore_contract/suite/harness.py (only the clauses it names are left undecided).
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from alkstore_mem import MemDriver

from alkstore_contract.suite.checks import ContractViolation, expect
from alkstore_contract.suite.harness import HostTooSlow, RowContext
from alkstore_contract.suite.rows import backoff_curve_equivalence
from alkstore_contract.suite.rows.backoff_curve_equivalence import judge_seeds, judge_spread, leg_jitter
from alkstore_contract.suite.verdicts import Verdict, clause_verdicts
from alkstore_contract.types import Job
from tests.test_defining_checks import SystemClockMem, _run_row

LOW, HIGH = 300.0, 600.0
LOWER_HALF, UPPER_HALF = (320.0, 321.0), (560.0, 561.0)
STRADDLING = (440.0, 460.0)


def test_sure_delays_in_both_halves_pass() -> None:
    """R5: 60 delays surely low, 60 surely high, 80 undecided: both halves hold their 50."""
    judge_spread([LOWER_HALF] * 60 + [UPPER_HALF] * 60 + [STRADDLING] * 80, LOW, HIGH)


def test_brackets_that_could_fill_a_half_leave_r5_undecided() -> None:
    """R5: 0 surely low but 115 that may be: the host's brackets, not the engine, leave it open."""
    with pytest.raises(HostTooSlow, match=r"R5 undecided: 0 of 200 .* 115 straddle the middle .*widest 20\.000 s"):
        judge_spread([UPPER_HALF] * 85 + [STRADDLING] * 115, LOW, HIGH)


def test_delays_no_bracket_can_put_in_a_half_fail() -> None:
    """R5: every delay surely in the upper half (no jitter below the middle) fails, whatever the brackets."""
    with pytest.raises(ContractViolation, match=r"\[R5\] .*0 of 200 first-retry delays surely in \[300.0, 450.0\)"):
        judge_spread([UPPER_HALF] * 170 + [STRADDLING] * 30, LOW, HIGH)


def _points(*draws: float) -> list[tuple[float, float]]:
    return [(draw, draw) for draw in draws]


def test_seeds_decided_on_narrow_intervals() -> None:
    """R5: one seed draws alike, another differs; the same draw under both seeds fails, a different one fails."""
    one, two = _points(*(n / 10 for n in range(8))), _points(*(n / 10 + 0.05 for n in range(8)))
    judge_seeds(7, one, one, two)
    with pytest.raises(ContractViolation, match="different delays from different seeds"):
        judge_seeds(7, one, one, one)
    with pytest.raises(ContractViolation, match="the same delays from the same seed"):
        judge_seeds(7, one, two, two)


def test_wide_seed_intervals_that_meet_decide_nothing() -> None:
    """R5: intervals a fifth of the range wide meet by chance too often to prove a seed replayed."""
    wide = [(n / 10, n / 10 + 0.2) for n in range(8)]
    with pytest.raises(HostTooSlow, match=r"two stores opened with seed=7 drew alike.*chance up to 0\.000655"):
        judge_seeds(7, wide, wide, _points(*(0.95,) * 8))


def test_a_leg_undecided_for_one_clause_keeps_the_other_clauses_checks() -> None:
    """R2 passes on the range checks the jitter leg made; R5, which it left undecided, is inconclusive."""

    async def body(ctx: RowContext) -> None:
        async def jitter(_: RowContext) -> None:
            expect(True, "R2", did="-", demands="-")
            raise HostTooSlow("brackets too wide", clauses=("R5",))

        await ctx.leg("jitter spreads", ("R5", "R2"), jitter)

    verdicts = clause_verdicts([_run_row(body, ("R2", "R5"))], {})
    assert (verdicts["R2"].verdict, verdicts["R5"].verdict) == (Verdict.PASSED, Verdict.INCONCLUSIVE)


CLAIM_TAIL_S = 2.5
"""How long the slow engine's claim goes on after it read its clock: every retry's now bracket is wider than this,
so on a 10 s base no delay (at least 5 s) is surely below the middle (7.5 s)."""


class SlowClaimDriver(MemDriver):
    """The mem engine whose claim answers ``CLAIM_TAIL_S`` after it took its jobs, as on a crawling host."""

    async def claim(self, queue: str, worker_id: str, n: int, token: str, now: datetime | None) -> list[Job]:
        jobs = await super().claim(queue, worker_id, n, token, now)
        await asyncio.sleep(CLAIM_TAIL_S)
        return jobs


class SlowClaimMem(SystemClockMem):
    driver_class = SlowClaimDriver


def _jitter_verdicts() -> dict[str, Verdict]:
    async def body(ctx: RowContext) -> None:
        await ctx.leg("jitter spreads", ("R5", "R2"), leg_jitter)

    verdicts = clause_verdicts([_run_row(body, ("R2", "R5"), SlowClaimMem())], {})
    return {clause: verdicts[clause].verdict for clause in ("R2", "R5")}


def test_brackets_seconds_wide_still_decide_r5_on_its_600_s_base() -> None:
    """R5, R2: a claim 2.5 s slow (every bracket wider than that) leaves the halves of [300, 600] s decided."""
    assert _jitter_verdicts() == {"R2": Verdict.PASSED, "R5": Verdict.PASSED}


def test_brackets_wider_than_a_half_can_decide_leave_r5_inconclusive(monkeypatch: pytest.MonkeyPatch) -> None:
    """R5, R2: on a 10 s base (the leg's old one), 2.5 s brackets hide the lower half: inconclusive, not failed."""
    monkeypatch.setattr(backoff_curve_equivalence, "JITTER_BASE_S", 10.0)
    assert _jitter_verdicts() == {"R2": Verdict.PASSED, "R5": Verdict.INCONCLUSIVE}
