"""The broken Postgres sweep the two ``pg_sweep_exhausted_first*`` mutants share (one per clock); not a mutant itself.

contract X2 and DEC-sweep-order: a job that is both expired and exhausted
(a lapsed lease with no attempt left) dies as ``"expired"``. The engine's
sweep keeps its steps' row sets disjoint: step (c), exhaustion, excludes what
step (b), expiry, takes. This one drops that exclusion and reads step (c)'s
count first. Postgres runs a data-modifying CTE when the statement first
reads it, and a row two CTEs update is changed by the first only: so the job
dies as ``"max attempts exceeded"``.

(Dropping the exclusion alone changes nothing observable on Postgres 15: the
statement reads step (b) first, so it wins every time. The exclusion is what
keeps the outcome from resting on that order, which Postgres leaves
unspecified; no black-box check can see it.)
"""

from __future__ import annotations

from alkstore_postgres import PgDriver

from tests.mutants.catalog import mutated

_NO_EXCLUSION = mutated(
    PgDriver.SWEEP_SQL, "\n      AND (expires_at IS NULL OR expires_at > (SELECT now FROM clock))", ""
)


class ExhaustedFirstDriver(PgDriver):
    SWEEP_SQL = mutated(
        _NO_EXCLUSION,
        "SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM exhausted)",
        "SELECT (SELECT count(*) FROM exhausted) + (SELECT count(*) FROM expired)",
    )
