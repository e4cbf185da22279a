"""Row model_based: random programs of every operation, run on the engine and on the reference model.

Part of the suite.

A Hypothesis ``RuleBasedStateMachine`` applies the same random program to the
engine and to ``alkstore_contract.suite.model``: enqueues with every option (delay,
past and future ``run_at``, expiry, per-call ``max_attempts``, priorities,
``enqueue_many``; ``enqueue_unique`` with one of two keys, where declared),
claims (``n`` ≤ 0 included), ack/retry/fail/heartbeat (and release, where declared) on
fresh, lapsed, reclaimed, dead and spent handles, batch acks with foreign,
unknown and duplicate ids, cancels, reads and sweeps, over three queues and
two workers, and clock moves from a millisecond to two hours — often to
exactly a lease end, ready time, expiry or retention end (or a millisecond
either side), probed there at once; at a lease end, often by claiming up to
that job and then trying the old holder's handle (H5). Every return value is
compared, every ``handle.job``, and the snapshot of every job an op touched
(all ``Job`` fields). After every clock move and every sweep, and at the
end, the whole state is compared: every job the program made, read back on
its queue, and the adapter's oracle count of stored jobs, so a job the model
does not know about (a row an ack only hid, a second row a retry wrote) shows
too.

Each program draws queue options of its own with up to 64 attempts and
backoff bases up to 900 s, and about once a program a ``burn`` step bounces
one job with ``retry(delay=0)`` up to 14 times before retrying it without a
delay: R2's range ``[cap/2, cap]`` with ``cap = min(b·2^(a−1), 3600 s)`` is
checked on every retry without a delay, at the cap and at a ≥ 12 in a typical
run. The row notes how many range checks, cap hits and whole-state
comparisons the run made: a run that never reached the cap proved nothing
about it.

How it runs: Hypothesis is synchronous, so the programs run in a thread of
their own, on an event loop of their own, against a store opened on that loop.
Programs share one store (fresh queue names each, so they never see each
other's jobs; the clock is set back to the same start for each) until one
fails; from then on every program opens its own store with the run's seed, so
the shrunk program replays exactly, backoff jitter included. The row prints
the smallest failing program Hypothesis found as a runnable script against
the public API — engine, seed, queue options, every op and clock move, the
model's answers as asserts — ending at the step where engine and model
parted, with the clause that step broke.

When it fails, run that script. Typical causes: a boundary taken the wrong
way round (``<`` for ``<=`` on a lease, a ready time, an expiry or a
retention), a write that forgets or keeps a field (a retry that keeps the
lease, or drops the old ``last_error``; a heartbeat that adds to the old
deadline), a fence with a condition too many or too few (a handle op refused
because the job expired under a live lease; an old handle acking after a
reclaim), claims that take reclaims and fresh jobs in two passes instead of
one C2 order, or an index (a heap, a cache) that misses a change. An
``enqueue_unique`` that stores a second job while the first still runs, or
refuses a key whose job was acked, cancelled or went dead: the key's holder
test (K1, K2) looks at the wrong states. A count
that differs while every job reads back right: rows an op hid (moved, flagged)
instead of deleting, or wrote twice.

The package, by job: ``strategies`` (what programs are made of), ``script``
(the reproduction a failure prints), ``machine`` (one program, step by step,
against ``alkstore_contract.suite.model``), ``bench`` (what a run's programs share,
and its tally), ``runner`` (Hypothesis in a thread of its own); this module
is the row.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from alkstore_contract.adapter import Capability
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row


async def model_based(ctx: RowContext) -> None:
    """All of E, C, H, R, D, X, B: random programs on the engine and on the reference model must agree exactly."""
    if ctx.clock is None:
        raise RuntimeError("row model_based runs only on the manual clock (manual_clock_only)")
    # Hypothesis is imported when the row runs, not when the suite is collected: a run of other rows
    # (``-k``, a mutant stopped at its first failing row) starts about a third faster without it.
    from alkstore_contract.suite.rows.model_based.runner import run_programs
    from alkstore_contract.suite.rows.model_based.strategies import STEPS

    programs, tally = await asyncio.to_thread(
        run_programs,
        ctx.adapter,
        ctx.engine_spec,
        ctx.location,
        ctx.clock,
        ctx.seed,
        ctx.examples,
        timedelta(seconds=ctx.tolerance_s),
    )
    ctx.note(f"{programs} programs run ({ctx.examples} Hypothesis examples of up to {STEPS} steps), seed {ctx.seed}")
    ctx.note(tally.describe())


ROW = row(
    "model_based",
    (
        "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E10", "E11",
        "C1", "C2", "C3", "C5", "C7",
        "H1", "H2", "H3", "H4", "H5",
        "R1", "R2", "R3", "R4",
        "D1", "D2", "D3",
        "X1", "X2",
        "B1", "B2", "B3",
        "S4",
        "L1", "L2",
        "K1", "K2",
    ),
    requires=(Capability.INJECTABLE_CLOCK,),
    manual_clock_only=True,
)(model_based)  # fmt: skip
