"""What the programs of ``model_based`` are made of: queues, options, durations, payloads, the mix of steps.

Part of the suite.

Every strategy here shrinks toward the plain case (the first queue, the first
options, no delay, priority 0), so a shrunk program shows only what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from alkstore_contract.types import Duration, QueueOpts

QUEUE_NAMES = ("a", "b", "c")
WORKERS = ("w1", "w2")
OPTS = (
    QueueOpts(visibility_timeout_s=30, max_attempts=3, backoff_base_s=5, dead_letter_retention_s=None),
    QueueOpts(visibility_timeout_s=30, max_attempts=1, backoff_base_s=60, dead_letter_retention_s=0),
    QueueOpts(visibility_timeout_s=12.5, max_attempts=2, backoff_base_s=5, dead_letter_retention_s=600),
)
"""The fixed queue options: short leases, 1–3 attempts, two backoff bases, three retentions.

The first (where shrinking goes) leaves room for reclaims and a second retry. Each program
adds a fourth, drawn (``LONG_HAUL``), where backoff reaches the cap."""
LONG_HAUL = st.builds(
    QueueOpts,
    visibility_timeout_s=st.sampled_from([30, 12.5]),
    max_attempts=st.one_of(st.sampled_from([40, 12, 13]), st.integers(min_value=4, max_value=64)),
    backoff_base_s=st.one_of(
        st.sampled_from([600, 300, 0.5, 2.5]),
        st.integers(min_value=1, max_value=900),
        st.integers(min_value=1, max_value=999_999).map(lambda ms: ms / 1000),
    ),
    dead_letter_retention_s=st.sampled_from([None, 600, 0]),
)
"""The program's own fourth queue options: many attempts and bases up to 900 s.

R2's cap ``min(b·2^(a−1), 3600 s)`` is reached at a = 4 with b = 600 and at a = 13 with b = 0.5,
so the cap and the exponent are both exercised; ``burn`` steps climb the attempts quickly."""
LONG_HAUL_INDEX = len(OPTS)
OPTS_INDEX = st.one_of(st.integers(min_value=0, max_value=LONG_HAUL_INDEX), st.just(LONG_HAUL_INDEX))
"""Which options an enqueue stamps: one of the four, the long-haul ones more often."""
STEPS = 40
"""Operations per program (Hypothesis' ``stateful_step_count``)."""
PICK = st.one_of(st.just(0), st.just(0), st.just(1), st.integers(min_value=0, max_value=63))
"""An index into the handles or jobs a program made so far (taken modulo their number, newest first).

0 (half the time): the newest handle not yet spent; 1: the newest one whose job was reclaimed
since (see ``ModelMachine._handle``)."""
QUEUE = st.one_of(st.just(0), st.just(0), st.integers(min_value=0, max_value=len(QUEUE_NAMES) - 1))
"""Which queue an op addresses: mostly the first, so claims find work; the others test isolation (S4)."""


def _duration(ms: int, form: str) -> Duration:
    """``ms`` milliseconds in one of the three forms the API takes."""
    if form == "timedelta":
        return timedelta(milliseconds=ms)
    if form == "int":
        return ms // 1000
    return ms / 1000


FORMS = st.sampled_from(["float", "timedelta", "int"])
MILLIS = st.one_of(
    st.sampled_from([0, 1, 999, 5_000, 12_500, 30_000, 60_000, 600_000, 3_600_000]),
    st.integers(min_value=0, max_value=60_000),
    st.integers(min_value=0, max_value=7_200_000),
)
DURATIONS = st.builds(_duration, MILLIS, FORMS)
ZERO = st.builds(_duration, st.just(0), FORMS)
"""``delay=0`` in each form: R3's "ready now", which the ``burn`` steps hand back jobs with."""
POSITIVE_DURATIONS = st.builds(
    _duration,
    st.one_of(st.sampled_from([1, 5_000, 45_500, 7_200_000]), st.integers(min_value=1, max_value=7_200_000)),
    st.sampled_from(["float", "timedelta"]),
)
ADVANCES = st.one_of(
    st.sampled_from([0.001, 1.0, 2.5, 5.0, 12.5, 30.0, 60.0]),
    st.integers(min_value=1, max_value=5_000).map(lambda ms: ms / 1000),
    st.integers(min_value=1, max_value=60_000).map(lambda ms: ms / 1000),
    st.one_of(
        st.sampled_from([600.0, 3600.0, 7200.0]),
        st.integers(min_value=1, max_value=7_200_000).map(lambda ms: ms / 1000),
    ),
)
"""Clock moves, 1 ms to 2 h; three in four within a minute (leases are 12.5 s and 30 s, backoffs 2.5 s up)."""
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), max_size=4)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
    _TEXT,
)
PAYLOADS = st.one_of(
    st.integers(min_value=0, max_value=999),
    st.recursive(
        _SCALARS,
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
        max_leaves=4,
    ),
)
"""Small JSON values (E8's edge cases are ``validation_and_closed_store``'s business)."""
FIRST_KEY = "k1"
UNIQUE_KEYS = st.sampled_from([FIRST_KEY, FIRST_KEY, "k2"])
"""The keys ``enqueue_unique`` draws: two, so a key is often held when it comes again (K1) and freed between (K2);
mostly the key of each program's first job (``some_work``), which the first claim takes."""
ENQUEUES = st.sampled_from(["one", "many"])
UNIQUE_ENQUEUES = st.sampled_from(["one", "many", "unique", "unique", "unique", "unique"])
"""The enqueues of an engine declaring ``unique_keys``: two in three ``enqueue_unique`` (contract 2.1, K1, K2)."""
ERRORS = st.sampled_from([None, "boom", "é ✓"])
HANDLE_OPS = st.sampled_from(["ack", "retry", "fail", "heartbeat"])
RELEASING_HANDLE_OPS = st.sampled_from(["ack", "retry", "fail", "heartbeat", "release"])
"""The handle ops of an engine declaring ``release`` (contract 2.1, L1–L4)."""
_MIX = ["handle", "claim", "clock", "handle", "queue", "claim", "clock", "handle", "queue", "add"]
STEP_KINDS = st.sampled_from([*_MIX, *_MIX, *_MIX, *_MIX, "burn"])
"""The mix of a program's steps: 3 handle ops, 2 claims, 2 clock moves, 2 queue ops, 1 enqueue in 10;
and one ``burn`` in 41, about one a program (a burn is many ops: more would cost the run's budget)."""
ROUNDS = st.one_of(st.integers(min_value=1, max_value=3), st.sampled_from([11, 12, 14]))
"""How many times a ``burn`` step claims its job and hands it back with ``retry(delay=0)``: a few, or enough
that the last retry, without delay, is range-checked at a ≥ 12."""
BURN_MAX_ATTEMPTS = st.sampled_from([None, 40, 12])
"""The hot job's per-call ``max_attempts`` (E6): the long-haul stamp, plenty, or one that 12 rounds exhaust."""
EXTENDS = st.one_of(st.none(), POSITIVE_DURATIONS)


@dataclass(frozen=True)
class EnqueueArgs:
    """The options of one ``enqueue``/``enqueue_many`` call, ``run_at`` still relative to the call's now."""

    timing: str
    """``now`` (neither), ``delay``, ``run_at`` or ``both`` (delay and run_at: delay wins, E2)."""
    delay: Duration
    run_at_offset_ms: int
    run_at_zone: timezone
    expires: Duration | None
    max_attempts: int | None
    priority: int

    def resolve(self, now: datetime) -> dict[str, Any]:
        """The keyword arguments of the call made at ``now``."""
        kwargs: dict[str, Any] = {}
        if self.timing in ("delay", "both"):
            kwargs["delay"] = self.delay
        if self.timing in ("run_at", "both"):
            kwargs["run_at"] = (now + timedelta(milliseconds=self.run_at_offset_ms)).astimezone(self.run_at_zone)
        if self.expires is not None:
            kwargs["expires"] = self.expires
        if self.max_attempts is not None:
            kwargs["max_attempts"] = self.max_attempts
        if self.priority != 0:
            kwargs["priority"] = self.priority
        return kwargs


ENQUEUE_ARGS = st.builds(
    EnqueueArgs,
    timing=st.sampled_from(["now", "now", "now", "delay", "run_at", "both"]),
    delay=DURATIONS,
    run_at_offset_ms=st.one_of(st.sampled_from([0, -1, 1]), st.integers(-7_200_000, 7_200_000)),
    run_at_zone=st.sampled_from([UTC, timezone(timedelta(hours=2))]),
    expires=st.one_of(st.none(), st.none(), DURATIONS),
    max_attempts=st.one_of(st.none(), st.integers(min_value=1, max_value=3), st.sampled_from([12, 40])),
    priority=st.integers(min_value=-1, max_value=2),
)
HOT_PRIORITY = 3
"""The priority of a ``burn`` step's job: above every drawn one, so claims hand that job out first (C2)."""
