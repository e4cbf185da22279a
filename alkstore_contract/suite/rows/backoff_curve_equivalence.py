"""Row backoff_curve_equivalence (contract R1–R5): where ``retry()`` puts a job, attempt by attempt.

Part of the suite.

Legs, each on a store and location of its own:

- R1 + R2, attempts 1–3 on a small base (the table's least at or above a
  quarter of a row unit): after
  ``retry(error)`` the job is ``ready`` with ``run_at - (the retry's now)`` in
  ``[cap/2, cap]``, ``cap = base · 2^(a−1)``, ``last_error`` set (and kept by a
  later ``retry()`` without an error), lease and claimant cleared, attempts
  unchanged. Runs on both clocks.
- R2 cap, on every clock: jobs on bases 0.5, 2, 5 and 600 s (``max_attempts
  = 100``) spend attempts at once by ``retry(delay=0)`` and take one
  ``retry()`` without a delay at attempts 1, 2, 3, 11 and 12 (bases 0.5 and
  600 also at 40): each delay in the table's range, the capped ones in
  ``[1800, 3600]``, no overflow at 40. Nothing waits for a drawn delay, so it
  runs on the system clock too.
- R3: ``retry(delay=7200)`` is used verbatim (no cap, no jitter), a
  ``timedelta`` delay keeps its microseconds, ``delay=0`` is claimable now.
- R4: ``retry()`` at ``attempts >= max_attempts`` dead-letters with the given
  error, else ``"max attempts exceeded"``, even with an explicit delay.
- R5 + R2: 200 first retries on a base of 600 s land in ``[300, 600]``, and
  at least a quarter of them in each half (``[300, 450)`` and ``[450, 600]``),
  not all equal. Runs on both clocks (nothing waits for the delays); halves
  150 s wide keep a retry's now bracket (milliseconds, seconds on a loaded
  host) from blurring which half a delay is in, and when brackets straddle the
  middle too often to decide, the leg says so (inconclusive), never fails.
- R5 seedable: two stores opened with one seed, each on a fresh location,
  driven through the same claims and retries, draw the same delays; a store
  opened with another seed draws different ones. Both clocks; ``leg_seed``
  says how the system clock is handled and when its brackets are too wide
  to decide.

Every expected range, the cap and ``"max attempts exceeded"`` come from
``alkstore_contract.suite.expected`` (the contract's values typed in), never from
``alkstore_contract.backoff``/``resolution``, the code the engines draw from.

The retry's own ``now`` is not stored. Under the manual clock it is the row's
clock, exactly. On the system clock the row brackets it on the ENGINE's clock,
so no skew between the row's clock and the engine's can blur it: the claim's
``now`` is ``lease_expires_at - visibility_timeout_s`` of the claimed snapshot
(C3), and the retry happened between ``retry_started - claim_done`` and
``retry_done - claim_started`` (monotonic) after it. A delay passes when some
``now`` in that bracket puts it in range, and fails only when none does: the
row judges what the bracket lets it know. A check the brackets leave open (a
half the delay may or may not be in, a draw that may or may not match)
raises ``HostTooSlow`` for R5 with the figures: inconclusive, never a pass.

When it fails, check that ``retry`` calls ``alkstore_contract.resolution.
decide_retry`` (the kit does) with the CLAIMED attempts (after the claim's
increment), the job's stamped base and the store's own ``random.Random`` (not a
fresh or global one); that the driver adds the delay to the op's one ``now`` and
stores ``run_at`` in microseconds, clearing the lease, claimant and token in the
same write.

For a wire engine, check the ``retry`` handler: with no ``delay_s`` the delay
is R2's — ``cap = min(base * 2**(attempts - 1), 3600 s)`` over the claimed
attempts, drawn uniformly on ``[cap/2, cap]`` (equal jitter) from the store's
own generator seeded by ``open_store``'s ``seed`` (R5) — added to the op's one
``now`` and stored in whole microseconds; the Node kit's ``backoffDelayS`` (``engines_under_test/node_kit/src/
backoff.js``) is one such implementation to compare with.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from alkstore_contract.suite.checks import expect, expect_equal, expect_instant, expect_stored
from alkstore_contract.suite.expected import LAST_ERROR_MAX_ATTEMPTS, R2_RANGE_S, r2_range_s
from alkstore_contract.suite.harness import HostTooSlow, RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import Duration, Job, JobId, JobState, QueueOpts

CLOCK_SLACK_S = 0.002
"""Granularity allowance between the monotonic clock and the engine's wall clock (system clock only)."""
POLL_S = 0.01
CURVE_ATTEMPTS = 3
CAP_PAIRS: tuple[tuple[float, int], ...] = (
    *((base, attempts) for base in (0.5, 2.0, 5.0, 600.0) for attempts in (1, 2, 3, 11, 12)),
    (0.5, 40),
    (600.0, 40),
)
"""The cap leg's (base, attempts) pairs, one job each: every base at attempts 1–3, 11 and 12, the two extreme
bases at 40. Each must have a row in ``alkstore_contract.suite.expected.R2_RANGE_S``."""
CAP_MAX_ATTEMPTS = 100
CAP_LEASE_S = 3600.0
"""Long, so a checked job whose short delay has passed (system clock) and that a later round claims stays held."""
SEED_BASE_S = 600.0
"""R5 seed leg: a first retry lands in [300, 600] s, wide against the milliseconds of the retry's now bracket."""
SEED_DRAWS = 8
SEED_OFFSET = 1_000
"""The seed leg's stores take ``ctx.seed + SEED_OFFSET`` (twice) and that plus one: clear of ``ctx.open_store``'s."""
SEED_CHANCE_MAX = 1e-9
"""The seed leg decides a comparison only when independent draws would come out as it did by chance less often
than this; a likelier coincidence (brackets too wide) leaves R5 inconclusive."""
JITTER_BASE_S = 600.0
"""R5 jitter leg: first retries land in [300, 600] s, halves 150 s wide against the retry's now bracket."""
JITTER_DRAWS = 200
JITTER_MIN_SHARE = 0.25
"""Each half of the range must hold at least this share of the draws (a uniform draw: ~100 of 200 each)."""
ONE_ATTEMPT_CASES: tuple[tuple[str | None, Duration | None, str], ...] = (
    (None, None, LAST_ERROR_MAX_ATTEMPTS),
    ("with delay", 0, "with delay"),
)
"""R4 on jobs with max_attempts=1: (error, delay) of the retry, and the last_error it must leave."""
EXPLICIT_DELAY_S = 7200
EXPLICIT_TIMEDELTA = timedelta(seconds=90, microseconds=1)


@dataclass(frozen=True, slots=True)
class Claimed:
    """A claim, timed so the engine's ``now`` of a later op on its handle can be bracketed."""

    handle: JobHandle
    started: float
    done: float

    @property
    def job(self) -> Job:
        return self.handle.job


async def _claim(queue: Queue, worker: str, n: int) -> list[Claimed]:
    started = time.monotonic()
    handles = await queue.claim_batch(worker, n)
    done = time.monotonic()
    return [Claimed(handle, started, done) for handle in handles]


async def _claim_one(queue: Queue, clause: str, what: str) -> Claimed:
    claimed = await _claim(queue, "backoff", 1)
    expect(len(claimed) == 1, clause, did=f"handed out nothing for {what}", demands="a claimable job")
    return claimed[0]


async def _retry(
    ctx: RowContext, claimed: Claimed, clause: str, *, error: str | None = None, delay: Duration | None = None
) -> tuple[datetime, datetime]:
    """Retry the claim; returns the bracket ``(low, high)`` of the engine's ``now`` for that retry."""
    started = time.monotonic()
    try:
        done_ok = await claimed.handle.retry(error=error, delay=delay)
    except Exception as exc:
        expect(
            False,
            clause,
            did=f"raised {type(exc).__name__}({exc}) from retry(error={error!r}, delay={delay!r}) "
            f"at attempt {claimed.job.attempts}",
            demands="the retry to succeed (no overflow at any attempt)",
        )
        raise  # unreachable: expect(False, ...) always raises
    done = time.monotonic()
    expect(done_ok is True, clause, did=f"returned {done_ok!r} from retry() on a held claim", demands="True")
    if ctx.manual:
        now, slack = ctx.now(), timedelta(seconds=ctx.tolerance_s)
        return now - slack, now + slack
    job = claimed.job
    assert job.lease_expires_at is not None
    claim_now = job.lease_expires_at - timedelta(seconds=job.visibility_timeout_s)
    low = claim_now + timedelta(seconds=max(0.0, started - claimed.done) - CLOCK_SLACK_S)
    high = claim_now + timedelta(seconds=done - claimed.started + CLOCK_SLACK_S)
    return low, high


def _expect_delay(
    job: Job, bracket: tuple[datetime, datetime], low_s: float, high_s: float, clause: str, what: str
) -> timedelta:
    """``job.run_at - now`` must lie in ``[low_s, high_s]`` for some ``now`` in the bracket; returns the midpoint."""
    longest = job.run_at - bracket[0]
    shortest = job.run_at - bracket[1]
    expect(
        longest >= timedelta(seconds=low_s) and shortest <= timedelta(seconds=high_s),
        clause,
        did=f"set run_at - now = {shortest.total_seconds()}..{longest.total_seconds()} s for {what}",
        demands=f"a delay in [{low_s}, {high_s}] s",
    )
    return shortest + (longest - shortest) / 2


def _expect_released(job: Job, attempts: int, last_error: str | None, clause: str, what: str) -> None:
    """R1: back to ready, lease and claimant cleared, attempts kept, last_error as given."""
    expect_equal(
        (job.state, job.lease_expires_at, job.claimed_by, job.attempts, job.last_error),
        (JobState.READY, None, None, attempts, last_error),
        clause,
        f"(state, lease_expires_at, claimed_by, attempts, last_error) after {what}",
    )


async def _until_claimable(ctx: RowContext, queue: Queue, job: Job, clause: str) -> Claimed:
    """Let time reach the job's run_at and claim it again: at that very instant under the manual clock;
    on the system clock by polling for up to the tolerance past it (the engine's clock may lag the row's)."""
    await ctx.advance(max(0.0, (job.run_at - ctx.now()).total_seconds()))
    deadline = time.monotonic() + (0.0 if ctx.manual else ctx.tolerance_s)
    claimed = await _claim(queue, "backoff", 1)
    while not claimed and time.monotonic() < deadline:
        await asyncio.sleep(POLL_S)
        claimed = await _claim(queue, "backoff", 1)
    expect(
        len(claimed) == 1 and claimed[0].job.id == job.id,
        clause,
        did=f"handed out {[c.job.id for c in claimed]} once the retried job's run_at {job.run_at} had come",
        demands=f"job {job.id!r} claimable again",
    )
    return claimed[0]


def _curve_base(ctx: RowContext) -> float:
    """The least base the table has attempts 1–3 for that is at least a quarter of the row's unit (the largest if
    none is): small enough that waiting out two delays stays short, large against the host's scheduling noise."""
    bases = sorted({base for base, attempts in R2_RANGE_S if attempts == CURVE_ATTEMPTS})
    return next((base for base in bases if base >= ctx.unit_s / 4), bases[-1])


async def leg_curve(ctx: RowContext) -> None:
    """R1, R2: attempts 1–3 on a small base, both clocks."""
    store = await _leg_store(ctx)
    base = _curve_base(ctx)
    queue = store.queue("backoff-curve", QueueOpts(backoff_base_s=base, max_attempts=CURVE_ATTEMPTS + 2))
    job_id = await queue.enqueue({"leg": "R1"})
    claimed = await _claim_one(queue, "R1", "a fresh job")
    last_error: str | None = None
    for attempts in range(1, CURVE_ATTEMPTS + 1):
        error = None if attempts == CURVE_ATTEMPTS else f"boom-{attempts}"
        last_error = error if error is not None else last_error
        expect_equal(claimed.job.attempts, attempts, "R1", "attempts of the claim being retried")
        bracket = await _retry(ctx, claimed, "R1", error=error)
        job = await expect_stored(queue, job_id, "R1")
        _expect_released(job, attempts, last_error, "R1", f"retry(error={error!r}) at attempt {attempts}")
        low, high = r2_range_s(base, attempts)
        _expect_delay(job, bracket, low, high, "R2", f"retry() at attempt {attempts} with base {base} s")
        if attempts < CURVE_ATTEMPTS:
            claimed = await _until_claimable(ctx, queue, job, "R1")


async def leg_cap(ctx: RowContext) -> None:
    """R2 on every clock: the delay at attempts 1–3, 11, 12 and 40 on bases 0.5 to 600 s; capped at one hour, no
    overflow.

    One queue, one handle per base (E1 stamps each job with its handle's
    base). Each job spends its attempts at once (claim, ``retry(delay=0)``,
    claim again: R3 makes it claimable now) until its claim has made the
    attempts its pair names, then takes one ``retry()`` without a delay and
    is checked against the table. Nothing waits for a drawn delay; one
    ``claim_batch`` per round advances every job still spending.
    """
    store = await _leg_store(ctx)
    handles = {
        base: store.queue(
            "backoff-cap",
            QueueOpts(backoff_base_s=base, max_attempts=CAP_MAX_ATTEMPTS, visibility_timeout_s=CAP_LEASE_S),
        )
        for base in sorted({base for base, _ in CAP_PAIRS})
    }
    pending: dict[JobId, tuple[float, int]] = {}
    for base, attempts in CAP_PAIRS:
        pending[await handles[base].enqueue({"leg": "R2-cap", "base": base, "attempts": attempts})] = (base, attempts)
    queue = handles[CAP_PAIRS[0][0]]
    for attempts in range(1, max(a for _, a in CAP_PAIRS) + 1):
        claims = {c.job.id: c for c in await _claim(queue, "backoff-cap", len(CAP_PAIRS))}
        expect(
            set(pending) <= set(claims),
            "R3",
            did=f"handed out {sorted(claims, key=str)} of the jobs {sorted(pending, key=str)} just retried with "
            "delay=0",
            demands="a job retried with delay=0 claimable at once",
        )
        for job_id, (base, target) in list(pending.items()):
            claimed = claims[job_id]
            expect_equal(claimed.job.attempts, attempts, "R2", f"attempts of a cap-leg claim in round {attempts}")
            if attempts < target:
                await _retry(ctx, claimed, "R2", delay=0)
                continue
            bracket = await _retry(ctx, claimed, "R2")
            job = await expect_stored(queue, job_id, "R2")
            low, high = r2_range_s(base, target)
            _expect_delay(job, bracket, low, high, "R2", f"retry() at attempt {target} with base {base} s")
            del pending[job_id]


async def leg_explicit(ctx: RowContext) -> None:
    """R3: an explicit delay is verbatim, beyond the cap, to the microsecond; 0 is ready now."""
    store = await _leg_store(ctx)
    queue = store.queue("backoff-explicit")
    delays: tuple[tuple[Duration, timedelta], ...] = (
        (EXPLICIT_DELAY_S, timedelta(seconds=EXPLICIT_DELAY_S)),
        (EXPLICIT_TIMEDELTA, EXPLICIT_TIMEDELTA),
        (0, timedelta(0)),
    )
    ids = await queue.enqueue_many([{"leg": "R3", "delay": str(delay)} for delay, _ in delays])
    claims = {claimed.job.id: claimed for claimed in await _claim(queue, "backoff", len(ids))}
    expect_equal(sorted(claims), sorted(ids), "R3", "the ids claimed for the explicit-delay leg")
    for job_id, (delay, exact) in zip(ids, delays, strict=True):
        claimed = claims[job_id]
        bracket = await _retry(ctx, claimed, "R3", error="explicit", delay=delay)
        job = await expect_stored(queue, claimed.job.id, "R3")
        _expect_released(job, 1, "explicit", "R1", f"retry(delay={delay!r})")
        seconds = exact.total_seconds()
        _expect_delay(job, bracket, seconds, seconds, "R3", f"retry(delay={delay!r}) (verbatim: no cap, no jitter)")
        if ctx.manual:
            expect_instant(
                job.run_at, ctx.now() + exact, "R3", f"run_at after retry(delay={delay!r})", tolerance_s=ctx.tolerance_s
            )
    again = await _claim(queue, "backoff", len(ids))
    expect_equal([c.job.id for c in again], ids[-1:], "R3", "the ids claimable right after the explicit retries")


async def leg_dead_letter(ctx: RowContext) -> None:
    """R4: a retry with no attempt left dead-letters, with the given error or the pinned default."""
    store = await _leg_store(ctx)
    queue = store.queue("backoff-exhausted", QueueOpts(max_attempts=2))
    spent_twice = await queue.enqueue({"leg": "R4", "max_attempts": 2})
    first = await _claim_one(queue, "R4", "a fresh job")
    await _retry(ctx, first, "R4", error="first", delay=0)
    second = await _claim_one(queue, "R4", "the job retried with delay 0")
    expect_equal((second.job.id, second.job.attempts), (spent_twice, 2), "R4", "(id, attempts) of the second claim")
    cases: list[tuple[Claimed, str | None, Duration | None, str]] = [(second, "last words", None, "last words")]
    for error, delay, expected in ONE_ATTEMPT_CASES:
        await queue.enqueue({"leg": "R4", "max_attempts": 1}, max_attempts=1)
        cases.append((await _claim_one(queue, "R4", "a fresh job with max_attempts=1"), error, delay, expected))
    for claimed, error, delay, expected in cases:
        low, high = await _retry(ctx, claimed, "R4", error=error, delay=delay)
        job = await expect_stored(queue, claimed.job.id, "R4")
        what = f"retry(error={error!r}, delay={delay!r}) at attempts {job.attempts} of {job.max_attempts}"
        expect_equal(
            (job.state, job.last_error, job.attempts, job.lease_expires_at, job.claimed_by),
            (JobState.DEAD, expected, job.max_attempts, None, None),
            "R4",
            f"(state, last_error, attempts, lease_expires_at, claimed_by) after {what}",
        )
        expect(
            job.died_at is not None and low <= job.died_at <= high,
            "R4",
            did=f"set died_at = {job.died_at!r} for {what}",
            demands=f"died_at = the retry's now ({low} .. {high})",
        )


async def leg_jitter(ctx: RowContext) -> None:
    """R5 (and R2's range): many first retries spread over both halves of [cap/2, cap].

    Each delay is known within its retry's now bracket (``judge_spread`` says
    what that decides); R2's range checks, decided per delay, stand even when
    R5 is left undecided.
    """
    store = await _leg_store(ctx)
    queue = store.queue("backoff-jitter", QueueOpts(backoff_base_s=JITTER_BASE_S))
    ids = await queue.enqueue_many([{"leg": "R5", "n": n} for n in range(JITTER_DRAWS)])
    claims = await _claim(queue, "jitter", JITTER_DRAWS)
    expect_equal(len(claims), JITTER_DRAWS, "R5", "the number of jobs claim_batch handed out")
    brackets = [await _retry(ctx, claimed, "R5") for claimed in claims]
    low, high = r2_range_s(JITTER_BASE_S, 1)
    spans: list[tuple[float, float]] = []
    delays: set[timedelta] = set()
    for job_id, bracket in zip(ids, brackets, strict=True):
        job = await expect_stored(queue, job_id, "R5")
        delays.add(_expect_delay(job, bracket, low, high, "R2", f"a first retry with base {JITTER_BASE_S} s"))
        spans.append(((job.run_at - bracket[1]).total_seconds(), (job.run_at - bracket[0]).total_seconds()))
    judge_spread(spans, low, high)
    if ctx.manual:
        expect(
            len(delays) > JITTER_DRAWS // 2,
            "R5",
            did=f"drew only {len(delays)} distinct delays in {JITTER_DRAWS} retries",
            demands="jittered delays (nearly all distinct)",
        )


def judge_spread(spans: list[tuple[float, float]], low: float, high: float) -> None:
    """R5 on the delays' spans ``(shortest, longest)``: both halves of ``[low, high]`` filled, or undecided.

    A span lies surely in the lower half, surely in the upper one, or straddles
    the middle. R5 fails only when no placing of the straddling ones fills both
    halves to ``JITTER_MIN_SHARE``; it passes only when the sure ones alone do;
    in between, ``HostTooSlow`` for R5 with the figures.
    """
    mid = (low + high) / 2
    lower = sum(longest < mid for _, longest in spans)
    upper = sum(shortest >= mid for shortest, _ in spans)
    either = len(spans) - lower - upper
    least = int(len(spans) * JITTER_MIN_SHARE)
    counts = (
        f"{lower} of {len(spans)} first-retry delays surely in [{low}, {mid}) s and {upper} surely in [{mid}, {high}] s"
    )
    if lower + either >= least and upper + either >= least and not (lower >= least and upper >= least):
        widest = max(longest - shortest for shortest, longest in spans)
        raise HostTooSlow(
            f"R5 undecided: {counts}; {either} straddle the middle within their retry's now bracket (the widest "
            f"{widest:.3f} s): fewer than {least} sure in a half, and enough undecided to fill it; this host is too "
            "slow to tell the halves apart: rerun on a less loaded host",
            clauses=("R5",),
        )
    expect(
        lower >= least and upper >= least,
        "R5",
        did=f"put {counts} ({either} undecided: their retry's now bracket straddles the middle)",
        demands=f"delays uniform over [{low}, {high}] s: at least {least} in each half, for some now in each bracket",
    )


async def _seeded_fractions(ctx: RowContext, seed: int) -> list[tuple[float, float]]:
    """Open a store with ``seed`` on a fresh location and drive it: ``SEED_DRAWS`` jobs, one ``claim_batch``, one
    ``retry()`` each in enqueue order. Returns, per retry, the interval its jitter fraction lies in.

    The fraction is ``(delay - low) / (high - low)``, with ``delay = run_at -
    the retry's now`` and ``(low, high)`` the table's range: the draw itself,
    whatever the base. The interval is a point under the manual clock; on the
    system clock it spans the retry's ``now`` bracket (``_retry``), read on the
    store's own clock, so the two stores' clocks need not agree.
    """
    location = await ctx.new_location()
    store = await ctx.adapter.open_store(location, clock=ctx.clock, seed=seed)
    try:
        queue = store.queue("backoff-seed", QueueOpts(backoff_base_s=SEED_BASE_S))
        ids = await queue.enqueue_many([{"leg": "R5-seed", "n": n} for n in range(SEED_DRAWS)])
        claims = {c.job.id: c for c in await _claim(queue, "seeded", SEED_DRAWS)}
        expect_equal(sorted(claims, key=str), sorted(ids, key=str), "R5", "the ids claimed for the seed leg")
        low, high = r2_range_s(SEED_BASE_S, 1)
        fractions: list[tuple[float, float]] = []
        for job_id in ids:
            bracket = await _retry(ctx, claims[job_id], "R5")
            job = await expect_stored(queue, job_id, "R5")
            _expect_delay(job, bracket, low, high, "R2", f"a first retry with base {SEED_BASE_S} s")
            shortest = (job.run_at - bracket[1]).total_seconds()
            longest = (job.run_at - bracket[0]).total_seconds()
            fractions.append(((shortest - low) / (high - low), (longest - low) / (high - low)))
    finally:
        await store.close()
    return fractions


def _same_draw(one: tuple[float, float], other: tuple[float, float]) -> bool:
    """Whether two fraction intervals can hold one and the same draw."""
    return one[0] <= other[1] and other[0] <= one[1]


def _coincidence_chance(one: list[tuple[float, float]], other: list[tuple[float, float]]) -> float:
    """A bound on the chance that independent uniform draws would meet within these intervals at every retry.

    Two draws' intervals meet when the draws lie within the intervals' joined width of each other: for
    independent uniform draws a chance below that width (at most 1) per retry, multiplied over the retries.
    """
    return math.prod(min(1.0, (a[1] - a[0]) + (b[1] - b[0])) for a, b in zip(one, other, strict=True))


def _undecided_seed(what: str, one: list[tuple[float, float]], other: list[tuple[float, float]]) -> HostTooSlow:
    chance = _coincidence_chance(one, other)
    widest = max(hi - lo for lo, hi in one + other)
    return HostTooSlow(
        f"R5 undecided: {what}, but within brackets so wide (the widest {widest:.3g} of the jitter range) that "
        f"unrelated draws would agree so by a chance up to {chance:.3g}, above {SEED_CHANCE_MAX:g}: this host is "
        "too slow to tell a seeded draw from a coincidence: rerun on a less loaded host",
        clauses=("R5",),
    )


async def leg_seed(ctx: RowContext) -> None:
    """R5 seedable: one seed, the same delays; another seed, other delays.

    Three stores on fresh locations, opened with seeds ``s``, ``s`` and ``s +
    1``, each driven through the same ``SEED_DRAWS`` first retries on a base of
    600 s. The two stores seeded ``s`` must give every retry the same jitter
    fraction (their intervals meet); the store seeded ``s + 1`` must differ
    from them in at least one.

    Comparing fractions rather than ``run_at`` keeps the stores' own clocks
    out of it. The same-seed check cannot fail falsely: equal draws lie in
    both intervals. Meeting intervals prove little when they are wide: with
    intervals under ``w`` wide, independent draws meet at all 8 retries by a
    chance below ``(2w)^8`` (``_coincidence_chance`` computes the bound from
    the intervals themselves). Under the manual clock ``w`` is the microsecond
    of ``run_at`` over the 300 s range (``(7e-9)^8``, about 1e-65); on the
    system clock a retry's now bracket under 0.3 s gives ``w`` < 1e-3 and a
    chance below 3e-22. So each comparison is decided only while that chance
    stays under ``SEED_CHANCE_MAX``: past it, two same-seed stores that agree
    might be an engine ignoring its seed, and a different-seed store that
    agrees might be luck, and R5 is inconclusive (never passed, never failed).
    """
    seed = ctx.seed + SEED_OFFSET
    first = await _seeded_fractions(ctx, seed)
    again = await _seeded_fractions(ctx, seed)
    other = await _seeded_fractions(ctx, seed + 1)
    judge_seeds(seed, first, again, other)


def judge_seeds(
    seed: int, first: list[tuple[float, float]], again: list[tuple[float, float]], other: list[tuple[float, float]]
) -> None:
    """R5 seedable on the fraction intervals of stores seeded ``seed``, ``seed`` again and ``seed + 1``."""
    expect(
        all(_same_draw(a, b) for a, b in zip(first, again, strict=True)),
        "R5",
        did=f"drew jitter fractions {_show(first)} and {_show(again)} in two stores opened with seed={seed} and "
        "driven alike",
        demands="the same delays from the same seed (open_store(seed=) seeds the store's random.Random)",
    )
    if _coincidence_chance(first, again) > SEED_CHANCE_MAX:
        raise _undecided_seed(f"two stores opened with seed={seed} drew alike", first, again)
    alike = all(_same_draw(a, b) for a, b in zip(first, other, strict=True))
    if alike and _coincidence_chance(first, other) > SEED_CHANCE_MAX:
        raise _undecided_seed(f"stores opened with seed={seed} and seed={seed + 1} drew alike", first, other)
    expect(
        not alike,
        "R5",
        did=f"drew the jitter fractions {_show(first)} with seed={seed} and with seed={seed + 1}",
        demands="different delays from different seeds",
    )


def _show(fractions: list[tuple[float, float]]) -> str:
    return "[" + ", ".join(f"{(lo + hi) / 2:.6f}" for lo, hi in fractions) + "]"


async def _leg_store(ctx: RowContext) -> Store:
    """A store of the leg's own, on a fresh location, so no leg depends on another's jobs."""
    return await ctx.open_store(await ctx.new_location())


async def backoff_curve_equivalence(ctx: RowContext) -> None:
    """R1–R5: the backoff curve per attempt, its one-hour cap on every clock, explicit delays, dead-lettering, the
    jitter, and the seed."""
    await ctx.leg("curve, attempts 1-3", ("R1", "R2"), leg_curve)
    await ctx.leg("explicit delays", ("R3", "R1"), leg_explicit)
    await ctx.leg("last attempt dead-letters", ("R4",), leg_dead_letter)
    await ctx.leg("jitter spreads", ("R5", "R2"), leg_jitter)
    await ctx.leg("one-hour cap", ("R2", "R3"), leg_cap)
    await ctx.leg("seeded jitter", ("R5", "R2"), leg_seed)


ROW = row("backoff_curve_equivalence", ("R1", "R2", "R3", "R4", "R5"))(backoff_curve_equivalence)
