"""Row validation_and_closed_store (contract S1, S2, S3, E8, E9, E10): bad input, payloads, ids, a closed store.

Part of the suite.

Legs: ``queue()`` refuses bad names with ``InvalidName`` (empty, 201
characters, control characters, the ``__`` prefix, not a str), accepts 200
characters (ASCII or emoji) and does no I/O (S1); ``QueueOpts`` and
``queue(opts=…)`` refuse bad options with ``InvalidArgument`` (S2) — for a
wire engine, whose ``QueueOpts`` check is the suite's, bad options are also
sent to the engine unchecked and its refusal judged; payloads
read back equal — same types, same float bits, ``-0.0`` keeps its sign —
through ``get_job`` and a claim, and non-JSON payloads raise ``PayloadError``
storing nothing (E8); bad enqueue options and bad ``retry``/``fail``/
``heartbeat`` arguments raise ``InvalidArgument`` naming the argument and the
value, store nothing and leave the handle usable (E9); ids are unique across
queues (and stores on one location), hashable and survive a JSON round trip
(E10); a closed store refuses ``queue()``, every queue op and every handle op
with ``StoreClosed`` — a spent handle too — and writes nothing: the oracle's
count and a reopened store show every job exactly as it was (S3).

When it fails, check that every entry point calls the shared helpers of
``alkstore_contract.validation``/``resolution`` BEFORE any I/O, in the order
DEC-order-of-checks gives (``raise_if_closed`` first, then the arguments), that payloads are stored
as the text ``encode_payload`` returns (TEXT or ``json``, not a type that
normalises numbers or rejects ``\\u0000`` such as ``jsonb``), and that ``close()``
flips ``closed`` before anything else and is idempotent.

For a wire engine, check each handler against docs/wire-protocol.md, "Argument
checks": every rule of the table that says "the engine", the error class it
names, a message holding the argument's name and the value as sent, the
closed store refused before any argument, and nothing stored when it refuses;
payloads are stored as the JSON text received, never re-serialised.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from alkstore_contract.adapter import Capability
from alkstore_contract.errors import InvalidArgument, InvalidName, PayloadError, StoreClosed
from alkstore_contract.suite.checks import expect, expect_equal, expect_message_names, expect_raises
from alkstore_contract.suite.harness import RowContext
from alkstore_contract.suite.row import row
from alkstore_contract.surface import Store
from alkstore_contract.types import JobId, QueueOpts
from alkstore_contract.wire.adapter import WireAdapter

T = TypeVar("T")

BAD_NAMES: tuple[object, ...] = ("", "q" * 201, "a\x00b", "a\nb", "\x7f", "tab\there", "__reserved", None, 5, b"q")
GOOD_NAMES = ("q" * 200, "📬" * 200, "with space", "émail-queue.v2")

BAD_QUEUE_OPTS: tuple[tuple[str, object], ...] = (
    ("visibility_timeout_s", 0),
    ("visibility_timeout_s", -1),
    ("visibility_timeout_s", math.nan),
    ("visibility_timeout_s", math.inf),
    ("visibility_timeout_s", "30"),
    ("max_attempts", 0),
    ("max_attempts", 1.5),
    ("max_attempts", True),
    ("backoff_base_s", -1),
    ("backoff_base_s", math.nan),
    ("dead_letter_retention_s", -1),
    ("dead_letter_retention_s", math.inf),
)


def _nested(depth: int) -> object:
    """A list nested ``depth`` levels deep around one string."""
    value: object = "deep"
    for _ in range(depth):
        value = [value]
    return value


WIRE_BAD_QUEUE_OPTS: tuple[tuple[str, object], ...] = (
    ("visibility_timeout_s", 0),
    ("visibility_timeout_s", -1),
    ("visibility_timeout_s", 3_155_760_001),
    ("max_attempts", 0),
    ("max_attempts", 2**31),
    ("backoff_base_s", -1),
    ("backoff_base_s", 3_155_760_001),
    ("dead_letter_retention_s", -1),
)
"""Bad options a message can carry as its schema types them (numbers; an int for max_attempts): sent to a wire
engine as they are. A NaN, an infinity, a str or a bool has no such form and stays the suite's to refuse."""


def unchecked_queue_opts(field: str, value: object) -> QueueOpts:
    """A ``QueueOpts`` of the defaults with ``field`` set to ``value``, past the constructor's checks (S2).

    Only for a wire engine: the constructor is the suite's check, so this is how a bad option reaches the
    engine, whose own refusal is then judged (docs/wire-protocol.md, "Argument checks")."""
    opts = object.__new__(QueueOpts)
    defaults = QueueOpts()
    for name in ("visibility_timeout_s", "max_attempts", "backoff_base_s", "dead_letter_retention_s"):
        object.__setattr__(opts, name, value if name == field else getattr(defaults, name))
    return opts


GOOD_PAYLOADS: tuple[object, ...] = (
    {"nested": {"list": [1, 2.5, None, True, False, "x", {"deeper": [[], {}]}]}, "n": -7},
    "unicode: é ß 日本語 📬🚀 \u200fRTL mark\u200f \u202eoverride\u202c e\u0301",
    "nul inside: a\x00b",
    'escapes: " \\ / \b \f \n \r \t \x01 \x1f',
    "0123456789abcdef" * 65536,
    0.1,
    0.1 + 0.2,
    math.pi,
    -1 / 3,
    1e308,
    -2.2250738585072014e-308,
    -0.0,
    5e-324,
    1.0,
    2**63,
    -(2**63) - 1,
    0,
    None,
    True,
    False,
    [],
    {},
    "",
    _nested(100),
)

BAD_PAYLOADS: tuple[object, ...] = (
    {1, 2},
    b"bytes",
    object(),
    math.nan,
    math.inf,
    -math.inf,
    (1, 2),
    {1: "int key"},
    {"nested": [1, {2}]},
    [math.nan],
    {"when": datetime(2030, 1, 1, tzinfo=UTC)},
)

BAD_ENQUEUE_OPTIONS: tuple[tuple[str, object], ...] = (
    ("delay", -1),
    ("delay", math.nan),
    ("delay", math.inf),
    ("delay", "5"),
    ("delay", True),
    ("delay", timedelta(seconds=-1)),
    ("run_at", datetime(2030, 1, 1)),
    ("run_at", "2030-01-01T00:00:00+00:00"),
    ("run_at", 1_900_000_000),
    ("expires", -1),
    ("expires", math.nan),
    ("expires", "10"),
    ("max_attempts", 0),
    ("max_attempts", 1.5),
    ("max_attempts", True),
    ("max_attempts", "3"),
    ("priority", 1.5),
    ("priority", "1"),
    ("priority", True),
    ("priority", None),
    ("priority", 2**63),
)

BAD_HANDLE_ARGS: tuple[tuple[str, str, object], ...] = (
    ("retry", "error", 5),
    ("retry", "error", b"boom"),
    ("retry", "delay", -1),
    ("retry", "delay", math.nan),
    ("retry", "delay", "1"),
    ("retry", "delay", True),
    ("fail", "error", 3),
    ("fail", "error", ["boom"]),
    ("heartbeat", "extend", 0),
    ("heartbeat", "extend", -1),
    ("heartbeat", "extend", math.inf),
    ("heartbeat", "extend", "1"),
    ("heartbeat", "extend", False),
)


async def _call(function: Callable[[], T]) -> T:
    """A synchronous call as an awaitable, for ``expect_raises``."""
    return function()


def _names(exc: BaseException, clause: str, argument: str, value: object) -> None:
    """The message must name the argument, and show the value when its repr is short enough to be shown whole."""
    shown = repr(value)
    fragments = (argument, shown) if len(shown) <= 60 else (argument,)
    expect_message_names(exc, clause, *fragments)


def same_json(a: object, b: object) -> bool:
    """Equal as JSON values AND of the same Python types, floats bit for bit (``-0.0`` is not ``0.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        assert isinstance(b, float)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return a.keys() == b.keys() and all(same_json(a[key], b[key]) for key in a)
    return a == b


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 100 else f"{text[:60]}… ({len(text)} characters)"


async def _leg_names(ctx: RowContext, store: Store) -> None:
    """S1: bad names refused, 200 characters accepted and usable, queue() synchronous with no I/O."""
    stored = await ctx.stored_jobs()
    for name in BAD_NAMES:
        attempt = partial(store.queue, name)  # type: ignore[arg-type]
        exc = await expect_raises(_call(attempt), InvalidName, "S1", f"queue({_show(name)})")
        expect_message_names(exc, "S1", "name")
    for name in GOOD_NAMES:
        queue = store.queue(name)
        expect(
            not asyncio.iscoroutine(queue) and not isinstance(queue, Awaitable),
            "S1",
            did=f"returned an awaitable from queue({_show(name)})",
            demands="queue() to be synchronous",
        )
        expect_equal(queue.name, name, "S1", f"queue({_show(name)}).name")
    expect_equal(await ctx.stored_jobs(), stored, "S1", "jobs stored after queue() calls alone (the oracle)")
    for name in GOOD_NAMES[:2]:
        queue = store.queue(name)
        job_id = await queue.enqueue({"name": len(name)})
        job = await queue.get_job(job_id)
        expect(
            job is not None and job.queue == name,
            "S1",
            did=f"stored a job of queue {_show(name)} as {job!r}",
            demands="a 200-character name to be stored and read back whole",
        )


async def _leg_queue_opts(ctx: RowContext, store: Store) -> None:
    """S2: QueueOpts validates itself; queue() refuses opts that are not a QueueOpts; a wire engine its own."""
    for field, value in BAD_QUEUE_OPTS:
        options: dict[str, Any] = {field: value}
        exc = await expect_raises(
            _call(partial(QueueOpts, **options)),
            InvalidArgument,
            "S2",
            f"QueueOpts({field}={value!r})",
        )
        _names(exc, "S2", field, value)
    for opts in ("x", {"max_attempts": 3}, 300):
        exc = await expect_raises(
            _call(partial(store.queue, "opts", opts)),  # type: ignore[arg-type]
            InvalidArgument,
            "S2",
            f"queue('opts', opts={opts!r})",
        )
        expect_message_names(exc, "S2", "opts")
    expect_equal(store.queue("opts", None).opts, QueueOpts(), "S2", "opts of queue('opts', None)")
    if isinstance(ctx.adapter, WireAdapter):
        for field, value in WIRE_BAD_QUEUE_OPTS:
            exc = await expect_raises(
                _call(partial(store.queue, "opts", unchecked_queue_opts(field, value))),
                InvalidArgument,
                "S2",
                f"queue('opts', opts) with {field}={value!r} sent as it is",
            )
            _names(exc, "S2", field, value)


async def _leg_payloads(ctx: RowContext, store: Store) -> None:
    """E8: anything but a JSON value stores nothing; every JSON value reads back the same through get_job and a claim.

    The refused payloads go first, on the fresh queue, so "nothing claimable" needs no clean-up of the good
    ones: the leg makes no call (an ``ack_batch``, say) whose failure would be another clause's, charged to E8.
    """
    queue = store.queue("payloads", QueueOpts(visibility_timeout_s=10 * ctx.unit_s))
    stored = await ctx.stored_jobs()
    for payload in BAD_PAYLOADS:
        await expect_raises(queue.enqueue(payload), PayloadError, "E8", f"enqueue({_show(payload)})")
    expect_equal(await ctx.stored_jobs(), stored, "E8", "jobs stored after refused payloads (the oracle)")
    expect(await queue.claim_one("w") is None, "E8", did="handed out a job after refused payloads", demands="None")

    ids = [await queue.enqueue(payload) for payload in GOOD_PAYLOADS]
    for job_id, payload in zip(ids, GOOD_PAYLOADS, strict=True):
        job = await queue.get_job(job_id)
        got = None if job is None else job.payload
        expect(
            job is not None and same_json(got, payload),
            "E8",
            did=f"read back payload {_show(payload)} as {_show(got)}",
            demands="the same JSON value, of the same types (floats bit for bit, -0.0 keeps its sign)",
        )
    handles = {h.job.id: h for h in await queue.claim_batch("w", len(ids) + 1)}
    expect_equal(sorted(map(str, handles)), sorted(map(str, ids)), "E8", "the ids handed out")
    for job_id, payload in zip(ids, GOOD_PAYLOADS, strict=True):
        got = handles[job_id].job.payload
        expect(
            same_json(got, payload),
            "E8",
            did=f"handed out payload {_show(payload)} as {_show(got)}",
            demands="the claim's handle.job.payload to equal what was enqueued",
        )


async def _leg_options(ctx: RowContext, store: Store) -> None:
    """E9: bad enqueue options and bad handle arguments raise InvalidArgument and change nothing."""
    queue = store.queue("options", QueueOpts(visibility_timeout_s=10 * ctx.unit_s))
    stored = await ctx.stored_jobs()
    for argument, value in BAD_ENQUEUE_OPTIONS:
        options: dict[str, Any] = {argument: value}
        exc = await expect_raises(
            queue.enqueue({"ok": True}, **options), InvalidArgument, "E9", f"enqueue({{…}}, {argument}={value!r})"
        )
        _names(exc, "E9", argument, value)
    expect_equal(await ctx.stored_jobs(), stored, "E9", "jobs stored after refused options (the oracle)")

    job_id = await queue.enqueue({"job": "held while bad arguments are tried"})
    handle = await queue.claim_one("w")
    expect(handle is not None and handle.job.id == job_id, "E9", did="handed out another job", demands=f"{job_id}")
    assert handle is not None
    for op, argument, value in BAD_HANDLE_ARGS:
        exc = await expect_raises(
            getattr(handle, op)(**{argument: value}), InvalidArgument, "E9", f"handle.{op}({argument}={value!r})"
        )
        _names(exc, "E9", argument, value)
    expect_equal(await queue.get_job(job_id), handle.job, "E9", "the held job after refused handle arguments")
    acked = await handle.ack()
    expect(
        acked is True,
        "E9",
        did=f"returned {acked!r} from ack() after refused arguments",
        demands="bad arguments to leave the handle unspent and the claim valid (True)",
    )


def _json_round_trip(job_id: JobId) -> object:
    return json.loads(json.dumps(job_id))


async def _leg_ids(ctx: RowContext, store: Store) -> None:
    """E10: ids unique across queues (and stores on one location), hashable, JSON round trip."""
    ids: list[JobId] = []
    queues = [store.queue(name) for name in ("ids-a", "ids-b", "ids-c")]
    for queue in queues:
        ids += [await queue.enqueue({"q": queue.name, "i": i}) for i in range(3)]
        ids += await queue.enqueue_many([{"q": queue.name, "many": i} for i in range(3)])
    expect_equal(len(set(ids)), len(ids), "E10", f"distinct ids among {len(ids)} enqueued in 3 queues")
    for queue in queues:
        for job_id in ids:
            job = await queue.get_job(job_id)
            if job is not None:
                expect_equal(job.queue, queue.name, "E10", f"queue of job {job_id!r}")
    for index, job_id in enumerate(ids):
        expect(
            isinstance(job_id, int | str) and not isinstance(job_id, bool),
            "E10",
            did=f"returned an id of type {type(job_id).__name__}",
            demands="an int or a str (what get_job, cancel and ack_batch accept)",
        )
        expect_equal({job_id: index}[job_id], index, "E10", f"a dict keyed by id {job_id!r}")
        again = _json_round_trip(job_id)
        expect_equal(again, job_id, "E10", f"id {job_id!r} after json.dumps/json.loads")
        job = await queues[index // 6].get_job(again)  # type: ignore[arg-type]
        expect(
            job is not None and job.id == job_id,
            "E10",
            did=f"did not find job {job_id!r} by its JSON round-tripped id",
            demands="an id that still names its job after a JSON round trip",
        )
    if ctx.has(Capability.SHARED_LOCATION):
        location = await ctx.new_location()
        stores = [await ctx.open_store(location) for _ in range(3)]
        batches = await asyncio.gather(
            *(s.queue("ids-shared").enqueue_many([{"s": n, "i": i} for i in range(10)]) for n, s in enumerate(stores))
        )
        singles = await asyncio.gather(*(s.queue("ids-shared").enqueue({"s": n}) for n, s in enumerate(stores)))
        shared = [job_id for batch in batches for job_id in batch] + list(singles)
        expect_equal(len(set(shared)), len(shared), "E10", "distinct ids from 3 stores on one location")
    else:
        ctx.not_exercised(
            ("E10",), "the engine does not declare shared_location", leg="unique ids across stores on one location"
        )


async def _leg_closed(ctx: RowContext) -> None:
    """S3: a closed store refuses everything with StoreClosed and writes nothing."""
    u = ctx.unit_s
    location = await ctx.new_location()
    store = await ctx.open_store(location)
    queue = store.queue("closing", QueueOpts(visibility_timeout_s=100 * u))
    held_id = await queue.enqueue({"job": "held across close"})
    held = await queue.claim_one("w")
    expect(held is not None and held.job.id == held_id, "S3", did="handed out another job", demands=f"{held_id}")
    assert held is not None
    spent_id = await queue.enqueue({"job": "acked before close"})
    spent = await queue.claim_one("w")
    expect(spent is not None and spent.job.id == spent_id, "S3", did="handed out another job", demands=f"{spent_id}")
    assert spent is not None
    expect_equal(await spent.ack(), True, "S3", "ack() before close")
    ready_id = await queue.enqueue({"job": "ready across close"})
    before = {job_id: await queue.get_job(job_id) for job_id in (held_id, ready_id)}
    stored = await ctx.stored_jobs(location)

    await store.close()
    await store.close()
    expect_equal(store.closed, True, "S3", "store.closed after close()")

    await expect_raises(_call(lambda: store.queue("closing")), StoreClosed, "S3", "queue() on a closed store")
    await expect_raises(_call(lambda: store.queue("other")), StoreClosed, "S3", "queue('other') on a closed store")
    queue_ops: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("enqueue({...})", lambda: queue.enqueue({"job": "after close"})),
        ("enqueue({1, 2}) (a bad payload)", lambda: queue.enqueue({1, 2})),
        ("enqueue_many([...])", lambda: queue.enqueue_many([{"job": "after close"}])),
        ("enqueue_many([])", lambda: queue.enqueue_many([])),
        ("claim_one('w')", lambda: queue.claim_one("w")),
        ("claim_batch('w', 5)", lambda: queue.claim_batch("w", 5)),
        ("claim_batch('w', 0)", lambda: queue.claim_batch("w", 0)),
        (f"ack_batch([{held_id!r}])", lambda: queue.ack_batch([held_id])),
        ("ack_batch([])", lambda: queue.ack_batch([])),
        (f"cancel({ready_id!r})", lambda: queue.cancel(ready_id)),
        (f"get_job({held_id!r})", lambda: queue.get_job(held_id)),
        ("sweep_expired()", lambda: queue.sweep_expired()),
        ("heartbeat() of a held handle", lambda: held.heartbeat()),
        ("heartbeat(extend=...) of a held handle", lambda: held.heartbeat(extend=u)),
        ("retry() of a held handle", lambda: held.retry()),
        ("fail() of a held handle", lambda: held.fail("after close")),
        ("ack() of a held handle", lambda: held.ack()),
        ("ack() of a spent handle", lambda: spent.ack()),
        ("heartbeat() of a spent handle", lambda: spent.heartbeat()),
    ]
    for what, operation in queue_ops:
        await expect_raises(operation(), StoreClosed, "S3", f"{what} on a closed store")

    expect_equal(await ctx.stored_jobs(location), stored, "S3", "jobs stored after ops on a closed store (the oracle)")
    reopened = await ctx.open_store(location)
    again = reopened.queue("closing")
    for job_id, earlier in before.items():
        expect_equal(await again.get_job(job_id), earlier, "S3", f"job {job_id} seen by a store opened after close")
    expect(await again.get_job(spent_id) is None, "S3", did="showed a job acked before close", demands="None")

    async with await ctx.open_store(await ctx.new_location()) as scoped:
        expect_equal(scoped.closed, False, "S3", "closed inside 'async with'")
    expect_equal(scoped.closed, True, "S3", "closed after leaving 'async with'")
    # After every S3 check, and charged to B1, the clause that defines ack_batch: a library whose ack_batch
    # skips held jobs fails B1 here, never S3.
    expect_equal(await again.ack_batch([held_id]), 1, "B1", "the reopened store's ack_batch of the held job")


async def validation_and_closed_store(ctx: RowContext) -> None:
    """S1 names, S2 options, E8 payloads, E9 arguments, E10 ids, S3 a closed store."""
    store = await ctx.open_store()
    await ctx.leg("names", ("S1",), lambda c: _leg_names(c, store))
    await ctx.leg("queue options", ("S2",), lambda c: _leg_queue_opts(c, store))
    await ctx.leg("payloads", ("E8",), lambda c: _leg_payloads(c, store))
    await ctx.leg("enqueue options", ("E9",), lambda c: _leg_options(c, store))
    await ctx.leg("ids", ("E10",), lambda c: _leg_ids(c, store))
    await ctx.leg("closed store", ("S3",), _leg_closed)


ROW = row("validation_and_closed_store", ("S1", "S2", "S3", "E8", "E9", "E10"))(validation_and_closed_store)
