"""Periodic tasks: every worker schedules them and none is special (docs/worker.md, "Periodic tasks").

A tick is stored ahead of its time, as a job with ``run_at`` = the tick and the unique key
``periodic:<task>:<tick>`` (contract K1–K4): every worker serving the task's queue offers it, and the key lets one
store it. The key is free again once the tick's job finishes (K2), so what keeps a finished tick from being stored
again is *when* schedulers offer it: a tick T is offered only from the time of the tick before it until its guard
before T (half the interval, at most ``GUARD_MAX``), and its job cannot be claimed — so cannot finish and free the
key — before T by the store's clock. A re-offer after it finished would need a call that reached the store more
than a guard after its scheduler read the clock (or a clock that far behind the store's).

Offering one tick ahead also decides the missed-tick policy without any look-back: when the last worker stops, the
next tick is already stored; when one starts again after its time, that job is claimable at once and runs once,
however many ticks passed; ticks after it were never offered, since no scheduler ran in their windows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from alkstore_contract.errors import AlkstoreError, InvalidArgument
from alkstore_contract.surface import Store, UniqueQueue
from alkstore_contract.validation import describe_value
from alkstore_worker.events import emit
from alkstore_worker.schedules import Schedule

if TYPE_CHECKING:
    from alkstore_worker.app import Task

TICK_FIELD = "tick"
"""The payload's one field: the tick's scheduled time, ISO-8601 in UTC (``2026-12-06T04:05:00Z``)."""
KEY_PREFIX = "periodic:"
GUARD_MAX = timedelta(seconds=30)
"""The longest guard: how long before a tick schedulers stop offering it (half the interval when that is shorter)."""
RETRY_PAUSE_S = 0.25
"""How soon a scheduler offers a tick again after the store did not answer (while the tick's window is open)."""
MAX_SLEEP_S = 60.0
"""The longest a scheduler sleeps before reading the wall clock again (a clock that was stepped)."""
CAPABILITY = "unique_keys"


class PeriodicUnsupported(RuntimeError):
    """The app's engine cannot store a tick once (it does not declare ``unique_keys``): the worker refuses to start."""


def tick_text(tick: datetime) -> str:
    """``tick`` as the payload and the key spell it: ISO-8601 in UTC with ``Z``, microseconds only when it has some."""
    moment = tick.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="seconds" if moment.microsecond == 0 else "microseconds") + "Z"


def tick_key(task: str, tick: datetime) -> str:
    """The unique key of one tick of ``task``: ``periodic:<task>:<tick>``."""
    return f"{KEY_PREFIX}{task}:{tick_text(tick)}"


def tick_of(payload: object) -> datetime:
    """The scheduled time of the tick a periodic task's run is for, from its payload (``{"tick": ...}``)."""
    text = payload.get(TICK_FIELD) if isinstance(payload, dict) else None
    if not isinstance(text, str):
        raise InvalidArgument(f"payload={describe_value(payload)}: a periodic tick's payload is {{'tick': ISO-8601}}")
    return datetime.fromisoformat(text)


def guard(schedule: Schedule, tick: datetime) -> timedelta:
    """How long before ``tick`` schedulers stop offering it: half the interval before it, at most ``GUARD_MAX``."""
    return min((tick - schedule.previous(tick)) / 2, GUARD_MAX)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a scheduler does for one task at one instant: the tick to offer (if any), and when to look again."""

    offer: datetime | None
    wake: datetime


def plan(schedule: Schedule, now: datetime, *, starting: bool) -> Plan:
    """The tick to offer at ``now``: the next one T while ``now`` is more than T's guard before it.

    Inside the guard T is not offered (another scheduler offered it at the window's start, or nobody ran then and
    it is missed); at a worker's start the tick after T is offered instead, which is more than a whole interval
    ahead, so the start always stores or finds one tick (and so finds out whether the engine can). The next look is
    at T, when the window of the tick after it opens.
    """
    tick = schedule.next_after(now)
    if now < tick - guard(schedule, tick):
        return Plan(tick, tick)
    if starting:
        return Plan(schedule.next_after(tick), tick)
    return Plan(None, tick)


@dataclass
class _Entry:
    task: Task[Any, Any]
    schedule: Schedule
    offered: datetime | None = None
    """The last tick this scheduler stored or found stored: it is not offered again."""


def _now() -> datetime:
    return datetime.now(UTC)


class Scheduler:
    """One worker's scheduler of the periodic tasks on the queues it serves, through the worker's own store."""

    def __init__(self, store: Store, tasks: Sequence[Task[Any, Any]], now: Callable[[], datetime] = _now) -> None:
        self._store = store
        self._entries = [_Entry(task, task.options.schedule) for task in tasks if task.options.schedule is not None]
        self._now = now

    @property
    def tasks(self) -> dict[str, str]:
        """Each scheduled task's name and schedule, as the log shows them."""
        return {entry.task.name: entry.schedule.describe() for entry in self._entries}

    async def start(self) -> None:
        """The first round, before the worker claims anything: refuse an engine without ``unique_keys``
        (``PeriodicUnsupported``, one line naming the task and the capability), and offer each task a tick."""
        for entry in self._entries:
            task = entry.task
            queue = self._store.queue(task.options.queue, task.options.queue_opts)
            if getattr(queue, "enqueue_unique", None) is None:
                raise PeriodicUnsupported(
                    _unsupported(task.name, f"its queue {task.options.queue!r} has no enqueue_unique")
                )
        await self.round(starting=True)

    async def run(self) -> None:
        """Offer ticks until cancelled: one round, then sleep until a window opens (or a retry is due)."""
        while True:
            wake = await self.round(starting=False)
            pause = (wake - self._now()).total_seconds()
            await asyncio.sleep(min(max(pause, 0.0), MAX_SLEEP_S))

    async def round(self, *, starting: bool) -> datetime:
        """Offer each task its tick where one is due; the instant of the next round."""
        wakes: list[datetime] = []
        for entry in self._entries:
            now = self._now()
            step = plan(entry.schedule, now, starting=starting)
            wakes.append(step.wake)
            if step.offer is None or step.offer == entry.offered:
                continue
            if not await self._offer(entry, step.offer):
                wakes.append(now + timedelta(seconds=RETRY_PAUSE_S))
        return min(wakes)

    async def _offer(self, entry: _Entry, tick: datetime) -> bool:
        """``enqueue_unique`` of one tick; ``False`` when the store did not answer (it is offered again)."""
        task = entry.task
        queue = self._store.queue(task.options.queue, task.options.queue_opts)
        payload = {TICK_FIELD: tick_text(tick)}
        (envelope,) = task.envelopes((payload,), delay=None, run_at=tick, single=True)
        try:
            enqueued = await cast(UniqueQueue, queue).enqueue_unique(
                envelope, tick_key(task.name, tick), run_at=tick, max_attempts=task.options.max_attempts
            )
        except NotImplementedError as exc:
            raise PeriodicUnsupported(_unsupported(task.name, str(exc))) from None
        except (AlkstoreError, OSError, TimeoutError) as exc:
            emit("periodic_error", logging.WARNING, task=task.name, tick=payload[TICK_FIELD], error=repr(exc))
            return False
        entry.offered = tick
        if enqueued.created:
            emit("periodic_enqueued", task=task.name, tick=payload[TICK_FIELD], job=enqueued.id)
            if self._now() >= tick:
                # the call came back after the tick's time: it may have reached the store after the tick's job ran
                emit("periodic_late_enqueue", logging.WARNING, task=task.name, tick=payload[TICK_FIELD])
        return True


def _unsupported(task: str, detail: str) -> str:
    return (
        f"periodic task {task!r} needs an engine declaring the {CAPABILITY!r} capability (contract K1–K4) to store "
        f"each tick once; this one does not ({detail})"
    )
