"""Periodic tasks (docs/worker.md, "Periodic tasks"): every worker schedules, each tick is stored once, a tick
missed while no worker ran runs once at the next start, and bad input is refused naming the argument.

The guarantee is checked in real ``alkstore worker`` processes on SQLite and on a Postgres server (three workers
scheduling one task every second; one worker stopped, a gap, one started again), counting runs per tick from the
handlers' own ledger (``tests.periodic_app``). What decides it — which tick a scheduler offers when, and the limit
stated in the docs (a scheduler's clock behind the store's by more than the guard) — is checked in-process on a
manual clock, where the instants are exact.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alkstore_mem import MemDriver
from alkstore_mem.space import space_named

from alkstore_contract import InvalidArgument, InvalidName, ManualClock, QueueOpts
from alkstore_contract.kit import KitStore
from alkstore_contract.surface import Store
from alkstore_worker import App, Cron, Every, PeriodicUnsupported, StoreSource, Worker, WorkerOptions, events, tick_of
from alkstore_worker.periodic import GUARD_MAX, Scheduler, plan, tick_key, tick_text
from tests import periodic_app
from tests.test_worker_processes import store_spec
from tests.worker_processes import ROOT, handler_log, wait_until, workers

__all__ = ["store_spec"]
"""The fixture: an SQLite file, and a fresh schema on the Postgres server when one answers."""

APP = "tests.periodic_app:app"
T = datetime(2026, 12, 6, 4, 0, 0, tzinfo=UTC)
"""A tick of ``every=10`` (a multiple of 10 s since the epoch)."""


# bad input


def _app() -> App:
    return App(StoreSource(_mem_store, "mem"))


async def _mem_store() -> Store:
    return KitStore(MemDriver(space_named("periodic-unused")), clock=ManualClock(T), seed=1)


async def _handler(payload: dict[str, str]) -> None:
    return None


@pytest.mark.parametrize(
    ("arguments", "named", "rule"),
    [
        ({"every": 60, "cron": "* * * * *"}, "every=60 and cron='* * * * *'", "not both"),
        ({}, "every=None and cron=None", "needs one of them"),
        ({"every": 0}, "every=0", "> 0"),
        ({"every": -1.5}, "every=-1.5", "> 0"),
        ({"every": timedelta(0)}, "every=datetime.timedelta(0)", "timedelta > 0"),
        ({"every": float("inf")}, "every=inf", "finite"),
        ({"every": float("nan")}, "every=nan", "finite"),
        ({"every": True}, "every=True", "number of seconds"),
        ({"every": "60"}, "every='60'", "number of seconds"),
        ({"every": 1e-9}, "every=1e-09", "at least 1 µs"),
        ({"cron": 5}, "cron=5", "must be a str"),
        ({"cron": "* * * *"}, "cron='* * * *': has 4 fields", "5 fields"),
        ({"cron": "0 * * * * *"}, "cron='0 * * * * *': has 6 fields", "5 fields"),
        ({"cron": "@hourly"}, "cron='@hourly': has 1 field", "5 fields"),
        ({"cron": "61 * * * *"}, "field 1 (minute) '61'", "5 fields"),
        ({"cron": "*/0 * * * *"}, "field 1 (minute) '*/0'", "steps"),
        ({"cron": "* 24 * * *"}, "field 2 (hour) '24'", "5 fields"),
        ({"cron": "* * 0 * *"}, "field 3 (day-of-month) '0'", "5 fields"),
        ({"cron": "* * * 1-13 *"}, "field 4 (month) '1-13'", "5 fields"),
        ({"cron": "* * * * 1,,2"}, "field 5 (day-of-week) '1,,2'", "5 fields"),
        ({"cron": "0 0 31 2 *"}, "cron='0 0 31 2 *': matches no time", "5 fields"),
    ],
)
def test_bad_schedules_are_refused_naming_the_argument_the_value_and_the_rule(
    arguments: dict[str, Any], named: str, rule: str
) -> None:
    app = _app()
    with pytest.raises(InvalidArgument) as refused:
        app.periodic(**arguments)(_handler)
    assert named in str(refused.value)
    assert rule in str(refused.value)
    assert app.tasks == {}, "a refused periodic task is not registered"


def test_a_name_too_long_for_its_ticks_keys_is_refused_naming_the_key_rule() -> None:
    app = _app()
    with pytest.raises(InvalidName, match=r"name='x+\.\.\.: .*'periodic:<name>:<tick>'.*at most 200 characters"):
        app.periodic("x" * 200, every=1)(_handler)
    longest = 200 - len("periodic::9999-12-31T23:59:59.999999Z")
    assert app.periodic("y" * longest, every=1)(_handler).options.schedule is not None


def test_the_other_options_are_checked_as_task_checks_them() -> None:
    with pytest.raises(InvalidArgument, match="timeout=0"):
        _app().periodic(every=1, timeout=0)(_handler)
    with pytest.raises(InvalidArgument, match=r"task .*must be an async def"):
        _app().periodic(every=1)(lambda payload: None)  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="unexpected keyword argument 'queu'"):
        _app().periodic(every=1, queu="ticks")  # type: ignore[call-arg]
    assert _app().periodic(every=1)(_handler).options.queue == "default", "task's defaults"


def test_cron_without_croniter_names_the_command_that_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "croniter", None)  # as if the cron extra were not installed
    with pytest.raises(ModuleNotFoundError, match=r"cron= needs croniter: pip install 'alkstore\[cron\]'"):
        _app().periodic(cron="* * * * *")(_handler)
    assert _app().periodic(every=60)(_handler).options.schedule is not None, "every= needs nothing more"


# the schedules


def test_every_ticks_at_whole_multiples_since_the_epoch() -> None:
    every = Every(timedelta(seconds=10))
    assert every.next_after(T) == T + timedelta(seconds=10), "strictly after"
    assert every.next_after(T - timedelta(microseconds=1)) == T
    assert every.previous(T) == T - timedelta(seconds=10)
    assert Every(1.5).next_after(T) == T + timedelta(seconds=1.5)  # T is a multiple of 1.5 s since 1970 too
    assert Every(7).next_after(T).timestamp() % 7 == 0
    assert every.ticks_between(T, T + timedelta(seconds=30)) == [T + timedelta(seconds=s) for s in (10, 20, 30)]
    assert every.describe() == "every=datetime.timedelta(seconds=10)"


def test_cron_is_five_fields_in_utc_with_lists_ranges_steps_and_day_of_month_or_day_of_week() -> None:
    assert Cron("*/5 * * * *").next_after(T + timedelta(minutes=3)) == T + timedelta(minutes=5)
    assert Cron("*/5 * * * *").previous(T + timedelta(minutes=5)) == T
    assert Cron("0,30 9-10 * * *").ticks_between(T, T + timedelta(hours=7)) == [
        T.replace(hour=9),
        T.replace(hour=9, minute=30),
        T.replace(hour=10),
        T.replace(hour=10, minute=30),
    ]
    # 2026-12-06 is a Sunday: "the 10th or a Monday" fires on Monday the 7th first (Vixie cron's OR)
    assert Cron("0 0 10 * 1").next_after(T) == datetime(2026, 12, 7, tzinfo=UTC)
    assert Cron("0 12 * * MON-FRI").next_after(T) == datetime(2026, 12, 7, 12, tzinfo=UTC)


def test_a_tick_is_spelled_once_in_its_payload_and_its_key() -> None:
    assert tick_text(T) == "2026-12-06T04:00:00Z"
    assert tick_text(T + timedelta(microseconds=5)) == "2026-12-06T04:00:00.000005Z"
    assert tick_key("beat", T) == "periodic:beat:2026-12-06T04:00:00Z"
    assert tick_of({"tick": tick_text(T)}) == T
    with pytest.raises(InvalidArgument, match=r"payload=.*'tick'"):
        tick_of({"when": "now"})


# which tick a scheduler offers, and when


def test_a_tick_is_offered_from_the_tick_before_it_until_its_guard() -> None:
    every = Every(10)  # guard: half the interval, 5 s
    nxt = T + timedelta(seconds=10)
    assert plan(every, T, starting=False).offer == nxt, "the window opens at the tick before"
    assert plan(every, nxt - timedelta(seconds=5, microseconds=1), starting=False).offer == nxt
    closed = plan(every, nxt - timedelta(seconds=5), starting=False)
    assert closed.offer is None, "inside the guard the tick is no longer offered"
    assert closed.wake == nxt, "the next look is when the next window opens"
    assert plan(every, nxt - timedelta(seconds=1), starting=True).offer == nxt + timedelta(seconds=10), (
        "a starting worker inside the guard offers the tick after"
    )
    hourly = Every(3600)
    assert plan(hourly, T + timedelta(seconds=3600 - 31), starting=False).offer is not None
    assert plan(hourly, T + timedelta(seconds=3600) - GUARD_MAX, starting=False).offer is None, "at most 30 s"


class _Clocked:
    """A mem store on a manual clock, and schedulers whose wall clock the test sets apart from the store's."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.clock = ManualClock(T - timedelta(seconds=7))
        self.store = KitStore(MemDriver(space_named(name)), clock=self.clock, seed=1)
        self.app = App(StoreSource(self._open, "mem"))
        self.task = self.app.periodic("beat", every=10, queue="ticks", queue_opts=QueueOpts(visibility_timeout_s=5))(
            _handler
        )

    async def _open(self) -> Store:
        return KitStore(MemDriver(space_named(self.name)), clock=self.clock, seed=1)

    def scheduler(self, behind: timedelta = timedelta(0)) -> Scheduler:
        return Scheduler(self.store, [self.task], now=lambda: self.clock.now() - behind)

    async def run_due(self) -> list[datetime]:
        """Claim and ack every job due by the store's clock; their ticks."""
        ran = []
        queue = self.store.queue("ticks")
        while (handle := await queue.claim_one("w")) is not None:
            ran.append(tick_of(handle.job.payload["payload"]))  # type: ignore[index]
            assert await handle.ack()
        return ran


@pytest.mark.asyncio
async def test_a_finished_tick_is_not_stored_again_unless_a_clock_lags_the_store_by_more_than_the_guard() -> None:
    world = _Clocked("periodic-guard")
    await world.scheduler().round(starting=False)  # 7 s before T: T's window is open
    assert await world.run_due() == []
    world.clock.set(T)
    assert await world.run_due() == [T], "the tick ran at its time; its key is free again (K2)"
    for behind in (timedelta(seconds=5), timedelta(seconds=1)):
        # a worker starting now, its clock behind the store's by at most the guard (5 s): T is inside its guard
        await world.scheduler(behind).round(starting=False)
        await world.scheduler(behind).round(starting=True)
        assert await world.run_due() == [], "T is not offered again"
    world.clock.set(T + timedelta(seconds=10))
    assert await world.run_due() == [T + timedelta(seconds=10)], "the starting schedulers stored the next tick, once"
    world.clock.set(T + timedelta(seconds=11))
    await world.scheduler(timedelta(seconds=17)).round(starting=False)  # 17 s behind: T is 6 s ahead by it
    assert await world.run_due() == [T], (
        "the stated limit: a clock behind the store's by more than the guard stores a finished tick again"
    )
    await world.store.close()


@pytest.mark.asyncio
async def test_a_tick_cancelled_before_its_time_is_stored_again_by_a_scheduler_inside_its_window() -> None:
    world = _Clocked("periodic-cancel")
    first = world.scheduler()
    await first.round(starting=False)
    queue = world.store.queue("ticks")
    stored = await queue.enqueue_unique({"any": 1}, tick_key("beat", T))
    assert not stored.created, "the scheduler stored T under its key"
    assert await queue.cancel(stored.id), "the stated limit: a cancel frees the key early (B2, K2)"
    await first.round(starting=False)
    world.clock.set(T)
    assert await world.run_due() == [], "the scheduler that stored T asks once"
    world.clock.set(T - timedelta(seconds=6))
    await world.scheduler().round(starting=False)  # another scheduler, T's window still open
    world.clock.set(T)
    assert await world.run_due() == [T]
    await world.store.close()


@pytest.mark.asyncio
async def test_a_call_that_stored_a_tick_and_returned_after_its_time_is_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    world = _Clocked("periodic-stall")
    reads = iter([T - timedelta(seconds=7), T + timedelta(milliseconds=1)])  # the call "took" 7 s
    seen: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(events, "OBSERVERS", [lambda event, fields: seen.append((event, dict(fields)))])
    await Scheduler(world.store, [world.task], now=lambda: next(reads)).round(starting=False)
    assert ("periodic_late_enqueue", {"task": "beat", "tick": tick_text(T)}) in seen
    assert [event for event, _ in seen] == ["periodic_enqueued", "periodic_late_enqueue"]
    await world.store.close()


@pytest.mark.asyncio
async def test_ticks_missed_while_no_worker_ran_run_once_at_the_next_start() -> None:
    world = _Clocked("periodic-missed")
    await world.scheduler().round(starting=False)  # stores T; then every worker stops
    world.clock.set(T + timedelta(seconds=37))  # T, T+10, T+20, T+30 passed with no worker
    await world.scheduler().round(starting=True)  # a worker starts
    assert await world.run_due() == [T], "one late run, for the tick stored before the stop"
    world.clock.set(T + timedelta(seconds=50))
    assert await world.run_due() == [T + timedelta(seconds=50)], "then the schedule goes on at its times"
    await world.store.close()


@pytest.mark.asyncio
async def test_a_worker_schedules_only_the_periodic_tasks_of_the_queues_it_serves() -> None:
    world = _Clocked("periodic-served")
    world.app.task(queue="other")(_handler)
    seen: list[str] = []
    events.OBSERVERS.append(lambda event, fields: seen.append(event))
    try:
        for queues, scheduled in ((["other"], False), (["ticks"], True)):
            seen.clear()
            worker = Worker(world.app, WorkerOptions(queues=queues, sweep_interval_s=0, grace_s=0))
            running = asyncio.create_task(worker.run())
            await asyncio.wait_for(worker.started.wait(), 30)
            worker.stop()
            await running
            assert ("periodic_started" in seen) is scheduled, queues
            assert ("periodic_enqueued" in seen) is scheduled, queues
    finally:
        events.OBSERVERS.pop()


# an engine that cannot store a tick once


class _NoUniqueStore:
    """A store whose queues have no ``enqueue_unique`` at all (a third party's engine on contract 2.0)."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner

    def queue(self, name: str, opts: QueueOpts | None = None) -> object:
        inner = self._inner.queue(name, opts)

        class Queue:
            def __getattr__(self, attribute: str) -> object:
                if attribute == "enqueue_unique":
                    raise AttributeError(attribute)
                return getattr(inner, attribute)

        return Queue()

    def __getattr__(self, attribute: str) -> object:
        return getattr(self._inner, attribute)


@pytest.mark.asyncio
@pytest.mark.parametrize("engine", ["kit driver of contract 2.0", "queue without enqueue_unique"])
async def test_an_engine_without_unique_keys_is_refused_at_start_naming_the_task_and_the_capability(
    engine: str,
) -> None:
    if engine == "queue without enqueue_unique":

        async def open_store() -> Store:
            return _NoUniqueStore(await _mem_store())  # type: ignore[return-value]

        app = App(StoreSource(open_store, "mem"))
        app.periodic("beat", every=1)(_handler)
    else:
        app = periodic_app.unsupported
    worker = Worker(app, WorkerOptions(sweep_interval_s=0))
    with pytest.raises(PeriodicUnsupported) as refused:
        await asyncio.wait_for(worker.run(), 30)
    message = str(refused.value)
    assert "periodic task 'beat'" in message
    assert "'unique_keys' capability" in message
    assert "\n" not in message
    assert not worker.started.is_set(), "refused before claiming anything"


def test_the_command_refuses_such_an_engine_in_one_line_with_status_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "alkstore_worker", "worker", "tests.periodic_app:unsupported"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    plain = [line for line in done.stderr.splitlines() if not line.startswith("{")]
    assert len(plain) == 1, done.stderr
    assert plain[0].startswith("alkstore: periodic task 'beat' needs an engine declaring the 'unique_keys'"), plain
    assert "Traceback" not in done.stderr


# real processes


def _ticks(log: Path) -> list[datetime]:
    return [tick_of(line) for line in handler_log(log)]


def _enqueued(worker: Any) -> list[str]:
    return [str(event["tick"]) for event in worker.events() if event["event"] == "periodic_enqueued"]


def test_three_workers_each_scheduling_store_and_run_every_tick_exactly_once(store_spec: str, tmp_path: Path) -> None:
    log = tmp_path / "ledger.jsonl"
    with workers(store_spec, log, "--grace", "5", count=3, app=APP) as processes:
        up = datetime.now(UTC)
        time.sleep(4.5)
        down = datetime.now(UTC)
        for process in processes:
            process.signal(signal.SIGTERM)
        for process in processes:
            assert process.wait() == 0, process.stderr()
        for process in processes:
            assert any(event["event"] == "periodic_started" for event in process.events()), "every worker schedules"
        enqueued = Counter(tick for process in processes for tick in _enqueued(process))
    ran = Counter(_ticks(log))
    assert [tick for tick, runs in ran.items() if runs > 1] == [], f"ticks run more than once: {ran}"
    assert [tick for tick, stored in enqueued.items() if stored > 1] == [], f"ticks stored more than once: {enqueued}"
    expected = Every(1).ticks_between(up + timedelta(seconds=1), down - timedelta(seconds=1))
    assert len(expected) >= 2
    assert [tick for tick in expected if tick not in ran] == [], f"ticks due while all three ran: {expected}; {ran}"
    first, last = min(ran), max(ran)
    assert sorted(ran) == [first, *Every(1).ticks_between(first, last)], "no tick skipped between the first and last"


def _stored_ahead(worker: Any, log: Path) -> datetime | None:
    """The latest tick ``worker`` stored that has not run yet, if there is one."""
    ran = set(_ticks(log))
    ahead = [tick for tick in map(datetime.fromisoformat, _enqueued(worker)) if tick not in ran]
    return max(ahead, default=None)


def test_ticks_missed_while_no_worker_ran_fire_once_when_one_starts(store_spec: str, tmp_path: Path) -> None:
    log = tmp_path / "ledger.jsonl"
    with workers(store_spec, log, app=APP) as (first,):
        first.until(lambda: bool(handler_log(log)) and _stored_ahead(first, log) is not None, "a tick ran, one ahead")
        first.signal(signal.SIGTERM)  # the worker stops with the next tick stored ahead (its log says so)
        assert first.wait() == 0, first.stderr()
        pending = _stored_ahead(first, log)
    assert pending is not None
    ran_before = set(_ticks(log))
    time.sleep(3.0)
    restarted = datetime.now(UTC)
    skipped = Every(1).ticks_between(pending, restarted)
    assert len(skipped) >= 2, "ticks came due while no worker ran, after the one stored ahead"
    with workers(store_spec, log, app=APP) as (second,):
        wait_until(lambda: any(tick > restarted + timedelta(seconds=1) for tick in _ticks(log)), "a tick on time")
        second.signal(signal.SIGTERM)
        assert second.wait() == 0, second.stderr()
    lines = handler_log(log)
    ran = Counter(_ticks(log))
    assert [tick for tick, runs in ran.items() if runs > 1] == [], f"ticks run more than once: {ran}"
    late = [tick for tick in ran if tick < restarted and tick not in ran_before]
    assert late == [pending], f"of the ticks missed while no worker ran, only {pending} runs, once: {sorted(ran)}"
    (late_line,) = [line for line in lines if tick_of(line) == pending]
    assert float(str(late_line["wall"])) >= restarted.timestamp(), "it ran after the restart, late"
    after = sorted(tick for tick in ran if tick > restarted)
    assert after == Every(1).ticks_between(after[0] - timedelta(seconds=1), after[-1]), "then on schedule"


def test_the_ledger_checks_can_fail() -> None:
    """The counting above catches a duplicate and a gap (a check that cannot fail proves nothing)."""
    ticks = [T, T + timedelta(seconds=1), T + timedelta(seconds=1), T + timedelta(seconds=3)]
    ran = Counter(ticks)
    assert [tick for tick, runs in ran.items() if runs > 1] == [T + timedelta(seconds=1)]
    assert sorted(ran) != [T, *Every(1).ticks_between(T, T + timedelta(seconds=3))]
