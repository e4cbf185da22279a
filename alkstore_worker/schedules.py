"""When a periodic task's ticks fall: a fixed interval (``Every``) or a 5-field cron expression (``Cron``), in UTC.

Every worker computes the same ticks without talking to another: ``Every`` counts whole intervals from the Unix
epoch (in microseconds, so no float rounding can make two processes disagree), and ``Cron`` asks croniter for the
next match. A tick's time is part of its unique key (``alkstore_worker.periodic``), so agreeing on it is what lets
any number of workers schedule one task.

Cron expressions are parsed by croniter (the ``cron`` extra, ``pip install 'alkstore[cron]'``), the most used cron
library on PyPI and the one rq already pulls in: a parser of our own would be one more thing to get wrong (day of
month *or* day of week, ranges, steps, names). What croniter accepts inside five fields is accepted; a sixth
field (seconds, years) and ``@hourly``-style macros are refused, so every expression reads the same in a crontab.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from datetime import UTC, datetime, timedelta

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.validation import describe_value

CRON_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
CRON_RULE = "a cron expression has 5 fields: minute hour day-of-month month day-of-week (*, lists, ranges, steps)"
CRON_INSTALL = "cron= needs croniter: pip install 'alkstore[cron]'"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


class Schedule(ABC):
    """The ticks of a periodic task: instants in UTC, strictly increasing, with no last one."""

    @abstractmethod
    def next_after(self, instant: datetime) -> datetime:
        """The first tick strictly after ``instant`` (an aware datetime)."""

    @abstractmethod
    def previous(self, tick: datetime) -> datetime:
        """The tick before ``tick`` (itself a tick)."""

    @abstractmethod
    def describe(self) -> str:
        """The schedule as its argument was given (``every=60`` or ``cron='*/5 * * * *'``), for logs and errors."""

    def ticks_between(self, start: datetime, end: datetime) -> list[datetime]:
        """Every tick in ``(start, end]``: what a checker expects to have run over a window."""
        ticks: list[datetime] = []
        tick = self.next_after(start)
        while tick <= end:
            ticks.append(tick)
            tick = self.next_after(tick)
        return ticks


class Every(Schedule):
    """A tick every ``seconds`` (a number or a ``timedelta``), at whole multiples of it since 1970-01-01 UTC."""

    def __init__(self, every: float | timedelta) -> None:
        if isinstance(every, timedelta):
            micros = every // MICROSECOND
        elif isinstance(every, int | float) and not isinstance(every, bool) and math.isfinite(every):
            micros = round(every * 1_000_000)
        else:
            micros = 0
        if micros < 1:
            raise InvalidArgument(
                f"every={describe_value(every)}: must be a finite number of seconds > 0 (at least 1 µs) "
                "or a timedelta > 0"
            )
        self.interval = timedelta(microseconds=micros)
        self._given = every

    def next_after(self, instant: datetime) -> datetime:
        elapsed = (instant - EPOCH) // MICROSECOND
        step = self.interval // MICROSECOND
        return EPOCH + timedelta(microseconds=(elapsed // step + 1) * step)

    def previous(self, tick: datetime) -> datetime:
        return tick - self.interval

    def describe(self) -> str:
        return f"every={describe_value(self._given)}"


class Cron(Schedule):
    """The minutes a 5-field cron expression matches, in UTC (croniter's reading: day of month *or* day of week
    when both are restricted, as Vixie cron does)."""

    def __init__(self, expression: str) -> None:
        if not isinstance(expression, str):
            raise InvalidArgument(f"cron={describe_value(expression)}: must be a str; {CRON_RULE}")
        try:
            from croniter import CroniterError, croniter
        except ModuleNotFoundError:
            raise ModuleNotFoundError(CRON_INSTALL) from None
        fields = expression.split()
        if len(fields) != len(CRON_FIELDS) or expression.lstrip().startswith("@"):
            count = f"{len(fields)} field" + ("" if len(fields) == 1 else "s")
            raise InvalidArgument(f"cron={expression!r}: has {count}; {CRON_RULE}")
        for index, (name, field) in enumerate(zip(CRON_FIELDS, fields, strict=True)):
            alone = ["*"] * len(CRON_FIELDS)
            alone[index] = field
            try:
                croniter(" ".join(alone), EPOCH)
            except (CroniterError, ValueError, KeyError) as exc:
                raise InvalidArgument(
                    f"cron={expression!r}: field {index + 1} ({name}) {field!r} is not valid ({exc}); {CRON_RULE}"
                ) from None
        try:
            croniter(expression, EPOCH).get_next(datetime)
        except (CroniterError, ValueError, KeyError) as exc:
            raise InvalidArgument(f"cron={expression!r}: matches no time ({exc}); {CRON_RULE}") from None
        self.expression = expression
        self._croniter = croniter

    def next_after(self, instant: datetime) -> datetime:
        found: datetime = self._croniter(self.expression, instant.astimezone(UTC)).get_next(datetime)
        return found.astimezone(UTC)

    def previous(self, tick: datetime) -> datetime:
        found: datetime = self._croniter(self.expression, tick.astimezone(UTC)).get_prev(datetime)
        return found.astimezone(UTC)

    def describe(self) -> str:
        return f"cron={self.expression!r}"


def schedule_of(every: float | timedelta | None, cron: str | None) -> Schedule:
    """The schedule ``@app.periodic`` was given: exactly one of ``every`` and ``cron``."""
    if every is not None and cron is not None:
        raise InvalidArgument(
            f"every={describe_value(every)} and cron={describe_value(cron)}: give one of them, not both "
            "(every is a fixed interval, cron a calendar)"
        )
    if every is not None:
        return Every(every)
    if cron is not None:
        return Cron(cron)
    raise InvalidArgument(
        "every=None and cron=None: a periodic task needs one of them (every=SECONDS or a timedelta, "
        "cron='MIN HOUR DOM MON DOW')"
    )
