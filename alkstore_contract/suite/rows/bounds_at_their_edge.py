"""Row bounds_at_their_edge (contract S1, S2, E8, E9, C6, H3, R1, R4, D1): every bound at its edge.

Part of the suite.

Each bound the contract's decisions fix (``DEC-bounds``, ``DEC-payload-json``,
``DEC-worker-text``, ``DEC-name-encoding``, ``DEC-lease-minimum``) is probed at
the bound itself — accepted, and it reads back as given — and one step past
it on each side it has — refused with the contract's error, nothing stored.
The values come from ``alkstore_contract.suite.expected``, the contract's text typed
in again, never from the shared validation code: an off-by-one there (a
``<`` for a ``<=``) would move a probe built from it along with the engines.
``validation_and_closed_store`` probes values far outside each bound; this row
probes the bound and its neighbour, where an off-by-one lives.

Legs, one bound each: queue names at 200 characters and at the edges of the
control-character ranges and of the reserved prefix (S1); lone surrogates in a
name (S1, ``DEC-name-encoding``); ``QueueOpts`` durations and ``max_attempts``
at their bounds, stamped on a job and read back (S2); enqueue ``delay``,
``expires``, ``max_attempts``, ``priority`` and ``run_at`` at their bounds
(E9); payloads nested 500 levels and ints of 4300 digits (E8,
``DEC-payload-json``); worker ids with NUL, a lone surrogate or another control
character (C6, ``DEC-worker-text``); a heartbeat's ``extend`` of 1 µs and of
100 years (H3, ``DEC-lease-minimum``); and ``""`` as the error of ``fail``,
``retry`` and a last ``retry``, stored as given (D1, R1, R4: ``""`` is an
error given, only ``None`` is none).

When it fails, check the comparison at the bound the message names in
``alkstore_contract.validation`` (or the engine's own validation): ``<`` where
the contract says "at most", ``<=`` where it says "at least", a range that
stops one short (``2**31 - 1`` is a valid ``max_attempts``, ``-2**63`` a valid
priority, 1 µs a valid lease, 500 levels and 4300 digits valid payloads), a
control-character test that stops at ASCII (U+0080–U+009F are control
characters too), a NUL test skipped for worker ids, and ``if error:`` where
``if error is not None:`` is meant (an empty error is an error given).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from typing import Any, TypeVar

from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError
from alkstore_contract.suite.checks import (
    expect,
    expect_equal,
    expect_handed_out,
    expect_left_as,
    expect_raises,
    expect_stored,
)
from alkstore_contract.suite.expected import (
    CONTROL_CHARACTER_RANGES,
    MAX_ATTEMPTS_RANGE,
    MAX_DURATION_S,
    MIN_LEASE_S,
    PAYLOAD_INT_MAX_DIGITS,
    PAYLOAD_MAX_DEPTH,
    PRIORITY_RANGE,
    QUEUE_NAME_MAX_CHARS,
    RESERVED_NAME_PREFIX,
    SURROGATE_RANGE,
)
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import JobHandle, Queue, Store
from alkstore_contract.types import Duration, JobState, QueueOpts

T = TypeVar("T")

BELOW_ZERO = math.nextafter(0.0, -math.inf)
"""The float next below 0 (−5e−324): one step past "≥ 0"."""
PAST_MAX_DURATION: tuple[Duration, ...] = (
    MAX_DURATION_S + 1,
    math.nextafter(float(MAX_DURATION_S), math.inf),
    timedelta(seconds=MAX_DURATION_S, microseconds=1),
)
"""One step past "at most 100 years", as an int, a float and a timedelta."""
AT_MAX_DURATION: tuple[Duration, ...] = (MAX_DURATION_S, float(MAX_DURATION_S), timedelta(seconds=MAX_DURATION_S))
BELOW_ZERO_DURATION: tuple[Duration, ...] = (BELOW_ZERO, timedelta(microseconds=-1))
AT_MIN_LEASE: tuple[Duration, ...] = (MIN_LEASE_S, timedelta(microseconds=1))
BELOW_MIN_LEASE: tuple[Duration, ...] = (math.nextafter(MIN_LEASE_S, 0.0), timedelta(0))
"""One step short of "at least 1 µs": the float next below 1e−6, and a timedelta of 0."""


def _chars(*code_points: int) -> list[str]:
    return [chr(code_point) for code_point in code_points]


_CC_EDGES = [edge for low, high in CONTROL_CHARACTER_RANGES for edge in (low, high)]
CONTROL_EDGES = _chars(*_CC_EDGES)
"""The first and last character of each control range (U+0000, U+001F, U+007F, U+009F): refused in names."""
BESIDE_CONTROL = _chars(
    *(edge + step for edge, step in zip(_CC_EDGES, (-1, 1, -1, 1), strict=True) if edge + step >= 0)
)
"""The characters just outside each control range (U+0020, U+007E, U+00A0; U+0000 has no neighbour below)."""
SURROGATE_EDGES = _chars(*SURROGATE_RANGE)
BESIDE_SURROGATES = _chars(SURROGATE_RANGE[0] - 1, SURROGATE_RANGE[1] + 1)


async def _call(function: Callable[[], T]) -> T:
    """A synchronous call as an awaitable, for ``expect_raises``."""
    return function()


def _nested_lists(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def _nested_objects(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"d": value}
    return value


def _show(value: object) -> str:
    text = ascii(value)
    return text if len(text) <= 80 else f"{text[:50]}… ({len(text)} characters)"


def _same_instant(ctx: RowContext, got: datetime | None, want: datetime) -> bool:
    """Equal to within the engine's declared resolution (exactly, at 1 µs)."""
    return got is not None and abs(got - want) < ctx.resolution


async def _expect_nothing_stored(ctx: RowContext, before: int, clause: str, what: str) -> None:
    expect_equal(await ctx.stored_jobs(), before, clause, f"jobs stored after {what} (the oracle)")


async def _claim_only(queue: Queue, clause: str, why: str) -> JobHandle:
    handle = await queue.claim_one("edge")
    expect(handle is not None, clause, did=f"handed out no job {why}", demands="the job just enqueued")
    assert handle is not None
    return handle


async def _leg_name_lengths_and_controls(ctx: RowContext, store: Store) -> None:
    """S1: 200 characters, the characters beside each control range and a single ``_`` are names; one more is not."""
    longest = "q" * QUEUE_NAME_MAX_CHARS
    refused = [
        longest + "q",
        *(f"ctl{ch}name" for ch in CONTROL_EDGES),
        RESERVED_NAME_PREFIX,
        RESERVED_NAME_PREFIX + "edge",
    ]
    accepted = [
        longest,
        "q",
        *(f"beside{ch}control" for ch in BESIDE_CONTROL),
        RESERVED_NAME_PREFIX[0],
        RESERVED_NAME_PREFIX[0] + "edge" + RESERVED_NAME_PREFIX,
    ]
    stored = await ctx.stored_jobs()
    for name in refused:
        await expect_raises(_call(partial(store.queue, name)), InvalidName, "S1", f"queue({_show(name)})")
    await _expect_nothing_stored(ctx, stored, "S1", "refused names")
    for name in accepted:
        queue = store.queue(name)
        job_id = await queue.enqueue({"name": name})
        job = await expect_stored(queue, job_id, "S1")
        expect_equal(job.queue, name, "S1", f"the queue of a job enqueued on {_show(name)}")


async def _leg_name_surrogates(ctx: RowContext, store: Store) -> None:
    """S1 (DEC-name-encoding): a lone surrogate at either end of U+D800–U+DFFF is refused; its neighbours are names."""
    stored = await ctx.stored_jobs()
    for ch in SURROGATE_EDGES:
        name = f"lone{ch}surrogate"
        await expect_raises(_call(partial(store.queue, name)), InvalidName, "S1", f"queue({_show(name)})")
    await _expect_nothing_stored(ctx, stored, "S1", "names holding a lone surrogate")
    for ch in BESIDE_SURROGATES:
        name = f"beside{ch}surrogates"
        queue = store.queue(name)
        job = await expect_stored(queue, await queue.enqueue({"beside": ch}), "S1")
        expect_equal(job.queue, name, "S1", f"the queue of a job enqueued on {_show(name)}")


def _queue_opts_at_bounds() -> list[dict[str, Any]]:
    low_attempts, high_attempts = MAX_ATTEMPTS_RANGE
    return [
        *({"visibility_timeout_s": lease} for lease in AT_MIN_LEASE),
        *({"visibility_timeout_s": longest} for longest in AT_MAX_DURATION),
        {"max_attempts": low_attempts},
        {"max_attempts": high_attempts},
        {"backoff_base_s": 0},
        *({"backoff_base_s": longest} for longest in AT_MAX_DURATION),
        {"dead_letter_retention_s": 0},
        *({"dead_letter_retention_s": longest} for longest in AT_MAX_DURATION),
    ]


def _queue_opts_past_bounds() -> list[tuple[str, object]]:
    low_attempts, high_attempts = MAX_ATTEMPTS_RANGE
    return [
        *(("visibility_timeout_s", short) for short in BELOW_MIN_LEASE),
        *(("visibility_timeout_s", long) for long in PAST_MAX_DURATION),
        ("max_attempts", low_attempts - 1),
        ("max_attempts", high_attempts + 1),
        *(("backoff_base_s", value) for value in (*BELOW_ZERO_DURATION, *PAST_MAX_DURATION)),
        *(("dead_letter_retention_s", value) for value in (*BELOW_ZERO_DURATION, *PAST_MAX_DURATION)),
    ]


def _seconds(value: object) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)  # type: ignore[arg-type]


async def _leg_queue_opts(ctx: RowContext, store: Store) -> None:
    """S2: every QueueOpts field at its bound is accepted and stamped as given; one step past is InvalidArgument."""
    for field, value in _queue_opts_past_bounds():
        options: dict[str, Any] = {field: value}
        await expect_raises(
            _call(partial(QueueOpts, **options)), InvalidArgument, "S2", f"QueueOpts({field}={value!r})"
        )
    for number, options in enumerate(_queue_opts_at_bounds()):
        ((field, value),) = options.items()
        made = await _call(partial(QueueOpts, **options))
        queue = store.queue(f"opts-at-bound-{number}", made)
        job = await expect_stored(queue, await queue.enqueue({"opts": number}), "S2")
        want = value if field == "max_attempts" else _seconds(value)
        expect_equal(getattr(job, field), want, "S2", f"{field} stamped on a job by QueueOpts({field}={value!r})")


async def _leg_enqueue_options(ctx: RowContext, store: Store) -> None:
    """E9: delay, expires, max_attempts, priority and run_at at their bounds are stored as given, one step past not."""
    queue = store.queue("enqueue-at-bounds")
    low_attempts, high_attempts = MAX_ATTEMPTS_RANGE
    low_priority, high_priority = PRIORITY_RANGE
    just_after_utc = timezone(timedelta(microseconds=1))
    just_before_utc = timezone(timedelta(microseconds=-1))
    past: list[tuple[str, object]] = [
        *(("delay", value) for value in (*BELOW_ZERO_DURATION, *PAST_MAX_DURATION)),
        *(("expires", value) for value in (*BELOW_ZERO_DURATION, *PAST_MAX_DURATION)),
        ("max_attempts", low_attempts - 1),
        ("max_attempts", high_attempts + 1),
        ("priority", low_priority - 1),
        ("priority", high_priority + 1),
        ("run_at", datetime.min.replace(tzinfo=just_after_utc)),
        ("run_at", datetime.max.replace(tzinfo=just_before_utc)),
    ]
    stored = await ctx.stored_jobs()
    for argument, value in past:
        options: dict[str, Any] = {argument: value}
        await expect_raises(
            queue.enqueue({"past": argument}, **options), InvalidArgument, "E9", f"enqueue({{…}}, {argument}={value!r})"
        )
    await _expect_nothing_stored(ctx, stored, "E9", "enqueues with options one step past their bounds")

    for argument, field in (("delay", "run_at"), ("expires", "expires_at")):
        for duration in (0.0, *AT_MAX_DURATION):
            options = {argument: duration}
            job = await expect_stored(queue, await queue.enqueue({argument: str(duration)}, **options), "E9")
            stamped: datetime | None = getattr(job, field)
            want = timedelta(seconds=_seconds(duration))
            expect(
                job.enqueued_at is not None and _same_instant(ctx, stamped, job.enqueued_at + want),
                "E9",
                did=f"stored {field} {stamped!r} for enqueued_at {job.enqueued_at!r} and {argument}={duration!r}",
                demands=f"{field} = enqueued_at + {want}",
            )
    for attempts in MAX_ATTEMPTS_RANGE:
        job = await expect_stored(queue, await queue.enqueue({"max": attempts}, max_attempts=attempts), "E9")
        expect_equal(job.max_attempts, attempts, "E9", f"max_attempts of a job enqueued with max_attempts={attempts}")
    for priority in PRIORITY_RANGE:
        job = await expect_stored(queue, await queue.enqueue({"priority": str(priority)}, priority=priority), "E9")
        expect_equal(job.priority, priority, "E9", f"priority of a job enqueued with priority={priority}")
    for run_at in (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)):
        job = await expect_stored(queue, await queue.enqueue({"run_at": run_at.isoformat()}, run_at=run_at), "E9")
        expect(
            _same_instant(ctx, job.run_at, run_at),
            "E9",
            did=f"stored run_at {job.run_at!r} for run_at={run_at!r}",
            demands="the edge of datetime's range stored verbatim (E3)",
        )


async def _leg_payloads(ctx: RowContext, store: Store) -> None:
    """E8 (DEC-payload-json): 500 levels and 4300-digit ints read back equal; 501 levels and 4301 digits are refused."""
    queue = store.queue("payloads-at-bounds")
    largest = 10**PAYLOAD_INT_MAX_DIGITS - 1
    depth, digits = PAYLOAD_MAX_DEPTH, PAYLOAD_INT_MAX_DIGITS
    at_bound: list[tuple[str, object]] = [
        (f"a list nested {depth} levels", _nested_lists(depth)),
        (f"an object nested {depth} levels", _nested_objects(depth)),
        (f"an int of {digits} digits", largest),
        (f"a negative int of {digits} digits", -largest),
        (f"a list holding an int of {digits} digits", [largest]),
    ]
    past_bound: list[tuple[str, object]] = [
        (f"a list nested {depth + 1} levels", _nested_lists(depth + 1)),
        (f"an object nested {depth + 1} levels", _nested_objects(depth + 1)),
        (f"an int of {digits + 1} digits", largest + 1),
        (f"a negative int of {digits + 1} digits", -largest - 1),
        (f"an object holding an int of {digits + 1} digits", {"n": largest + 1}),
    ]
    stored = await ctx.stored_jobs()
    for what, payload in past_bound:
        await expect_raises(queue.enqueue(payload), PayloadError, "E8", f"enqueue({what})")
    await _expect_nothing_stored(ctx, stored, "E8", "payloads one step past their bounds")
    for what, payload in at_bound:
        job = await expect_stored(queue, await queue.enqueue(payload), "E8")
        expect(
            job.payload == payload,
            "E8",
            did=f"read back {what} as something else",
            demands="a payload at the bound to read back equal",
        )
        handle = await _claim_only(queue, "E8", f"after enqueueing {what}")
        expect(
            handle.job.payload == payload,
            "E8",
            did=f"handed out {what} as something else",
            demands="a payload at the bound to be handed out equal",
        )
        expect_equal(await handle.ack(), True, "E8", "ack() of the payload at its bound")


async def _leg_worker_ids(ctx: RowContext, store: Store) -> None:
    """C6 (DEC-worker-text): NUL or a lone surrogate in a worker id is InvalidName; other control characters are ids."""
    queue = store.queue("worker-ids", QueueOpts(visibility_timeout_s=100 * ctx.unit_s))
    refused = ["", "\x00", "w\x00", "\x00w", *(f"w{ch}" for ch in SURROGATE_EDGES)]
    accepted = ["w", "\x01", "w\x1f\x7f\x9f", *(f"w{ch}" for ch in BESIDE_SURROGATES)]
    waiting = await queue.enqueue({"waits": "while bad worker ids are refused"})
    for worker in refused:
        await expect_raises(queue.claim_one(worker), InvalidName, "C6", f"claim_one(worker_id={_show(worker)})")
        await expect_raises(queue.claim_batch(worker, 1), InvalidName, "C6", f"claim_batch({_show(worker)}, 1)")
    await expect_left_as(queue, waiting, JobState.READY, 0, "C6", "claims (bad worker ids)")
    expect_equal(await queue.cancel(waiting), True, "C6", "cancel() of the job that waited")
    for worker in accepted:
        job_id = await queue.enqueue({"worker": worker})
        handle = expect_handed_out(
            await queue.claim_one(worker),
            job_id,
            "C6",
            when=f"from claim_one({_show(worker)})",
            demands=f"a claim of job {job_id!r} by that worker id",
        )
        expect_equal(handle.job.claimed_by, worker, "C6", f"claimed_by of the handle claim_one({_show(worker)}) gave")
        stored = await expect_stored(queue, job_id, "C6")
        expect_equal(stored.claimed_by, worker, "C6", f"claimed_by of job {job_id!r} read back")
        expect_equal(await handle.ack(), True, "C6", f"ack() of the job {_show(worker)} claimed")


async def _leg_extend(ctx: RowContext, store: Store) -> None:
    """H3 (DEC-lease-minimum): extending by 1 µs or by 100 years sets that lease; one step past is refused."""
    queue = store.queue("extend-at-bounds", QueueOpts(visibility_timeout_s=100 * ctx.unit_s))
    job_id = await queue.enqueue({"extend": "at its bounds"})
    handle = await _claim_only(queue, "H3", "to heartbeat")
    for value in (*BELOW_MIN_LEASE, *PAST_MAX_DURATION):
        await expect_raises(handle.heartbeat(extend=value), InvalidArgument, "H3", f"heartbeat(extend={value!r})")
    for value in (*AT_MAX_DURATION, *AT_MIN_LEASE):
        beat, before, after = await ctx.timed(handle.heartbeat(extend=value))
        expect_equal(beat, True, "H3", f"heartbeat(extend={value!r}) under a live lease")
        job = await expect_stored(queue, job_id, "H3")
        ctx.expect_during(
            None if job.lease_expires_at is None else job.lease_expires_at - timedelta(seconds=_seconds(value)),
            before,
            after,
            "H3",
            f"lease_expires_at − {value!r} after heartbeat(extend={value!r})",
        )
        if value == MIN_LEASE_S:
            break  # the lease now ends 1 µs after the heartbeat; the timedelta of 1 µs goes on a fresh claim
    await queue.cancel(job_id)
    job_id = await queue.enqueue({"extend": "1 µs as a timedelta"})
    handle = await _claim_only(queue, "H3", "to heartbeat by a timedelta of 1 µs")
    beat, before, after = await ctx.timed(handle.heartbeat(extend=timedelta(microseconds=1)))
    expect_equal(beat, True, "H3", "heartbeat(extend=timedelta(microseconds=1)) under a live lease")
    job = await expect_stored(queue, job_id, "H3")
    ctx.expect_during(
        None if job.lease_expires_at is None else job.lease_expires_at - timedelta(microseconds=1),
        before,
        after,
        "H3",
        "lease_expires_at − 1 µs after heartbeat(extend=timedelta(microseconds=1))",
    )


async def _last_error(ctx: RowContext, queue: Queue, job_id: object, clause: str, want: str, what: str) -> None:
    job = await expect_stored(queue, job_id, clause)  # type: ignore[arg-type]
    expect_equal(job.last_error, want, clause, f"last_error after {what}")


async def _leg_fail_empty_error(ctx: RowContext, store: Store) -> None:
    """D1 (DEC-worker-text): ``fail(error="")`` stores ``""``; an error holding NUL is refused and spends nothing."""
    queue = store.queue("fail-empty-error", QueueOpts(visibility_timeout_s=100 * ctx.unit_s))
    job_id = await queue.enqueue({"fail": "with an empty error"})
    handle = await _claim_only(queue, "D1", "to fail")
    for bad in ("\x00", "boom\x00", f"boom{SURROGATE_EDGES[0]}"):
        await expect_raises(handle.fail(error=bad), InvalidArgument, "D1", f"fail(error={_show(bad)})")
    expect_equal(await handle.fail(error=""), True, "D1", "fail(error='') after refused errors")
    job = await expect_stored(queue, job_id, "D1")
    expect_equal(job.state, JobState.DEAD, "D1", "the state after fail(error='')")
    await _last_error(ctx, queue, job_id, "D1", "", "fail(error='') (an empty error is an error given)")


async def _leg_retry_empty_error(ctx: RowContext, store: Store) -> None:
    """R1 (DEC-worker-text): ``retry(error="")`` replaces the previous error with ``""``; only ``None`` keeps it."""
    queue = store.queue("retry-empty-error", QueueOpts(visibility_timeout_s=100 * ctx.unit_s, max_attempts=5))
    job_id = await queue.enqueue({"retry": "with an empty error"})
    first = await _claim_only(queue, "R1", "to retry")
    await expect_raises(first.retry(error="boom\x00", delay=0), InvalidArgument, "R1", "retry(error='boom\\x00')")
    expect_equal(await first.retry(error="boom", delay=0), True, "R1", "retry(error='boom', delay=0)")
    await _last_error(ctx, queue, job_id, "R1", "boom", "retry(error='boom')")
    second = await _claim_only(queue, "R1", "after retry(delay=0)")
    expect_equal(await second.retry(error="", delay=0), True, "R1", "retry(error='', delay=0)")
    await _last_error(ctx, queue, job_id, "R1", "", "retry(error='') after 'boom' (an empty error is an error given)")


async def _leg_last_retry_empty_error(ctx: RowContext, store: Store) -> None:
    """R4 (DEC-worker-text): a retry on the last attempt with ``error=""`` dead-letters with ``""``."""
    queue = store.queue("last-retry-empty-error", QueueOpts(visibility_timeout_s=100 * ctx.unit_s, max_attempts=1))
    job_id = await queue.enqueue({"retry": "on the last attempt, with an empty error"})
    handle = await _claim_only(queue, "R4", "to retry on its last attempt")
    expect_equal(await handle.retry(error=""), True, "R4", "retry(error='') on the last attempt")
    job = await expect_stored(queue, job_id, "R4")
    expect_equal(job.state, JobState.DEAD, "R4", "the state after retry(error='') on the last attempt")
    await _last_error(ctx, queue, job_id, "R4", "", "retry(error='') on the last attempt")


Leg = Callable[[RowContext, Store], Awaitable[None]]
LEGS: tuple[tuple[str, str, Leg], ...] = (
    ("queue names at 200 characters and beside the control ranges", "S1", _leg_name_lengths_and_controls),
    ("queue names beside and at the surrogates", "S1", _leg_name_surrogates),
    ("queue options at their bounds", "S2", _leg_queue_opts),
    ("enqueue options at their bounds", "E9", _leg_enqueue_options),
    ("payloads at 500 levels and 4300 digits", "E8", _leg_payloads),
    ("worker ids with NUL, surrogates and other controls", "C6", _leg_worker_ids),
    ("heartbeat extend at 1 µs and 100 years", "H3", _leg_extend),
    ("fail with an empty error", "D1", _leg_fail_empty_error),
    ("retry with an empty error", "R1", _leg_retry_empty_error),
    ("last retry with an empty error", "R4", _leg_last_retry_empty_error),
)


async def bounds_at_their_edge(ctx: RowContext) -> None:
    """Every bound of DEC-bounds, DEC-payload-json, DEC-worker-text, DEC-name-encoding at its edge and one step past."""
    store = await ctx.open_store()
    for name, clause_id, body in LEGS:
        await ctx.leg(name, (clause_id,), partial(_run, body, store))


async def _run(body: Leg, store: Store, ctx: RowContext) -> None:
    await body(ctx, store)


ROW = row("bounds_at_their_edge", ("S1", "S2", "E8", "E9", "C6", "H3", "R1", "R4", "D1"))(bounds_at_their_edge)
