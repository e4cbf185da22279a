"""The suite's knobs, resolved once: command-line option, then ini key, then environment, then default.

Part of the suite.

Every knob is echoed in the report header and the JSON report, so a
certification run can be reproduced and no setting is silently ignored.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

ClockMode = Literal["manual", "system"]

DEFAULT_TOLERANCE_S = 0.5
DEFAULT_EXAMPLES = 60
MIN_TICK_S = 0.05
MAX_TICK_S = 10.0


@dataclass(frozen=True, slots=True)
class SuiteSettings:
    """What the user asked the suite to do."""

    engines: tuple[str, ...]
    require: bool
    clock: ClockMode | None
    tolerance_s: float
    seed: int
    report: Path | None
    xfail_file: Path | None
    examples: int
    tick_s: float | None = None
    """The real-clock tick asked for with ``--alkstore-tick``; ``None``: measured on this host."""
    full_trace: bool = False

    @property
    def active(self) -> bool:
        """The plugin adds rows only when at least one engine was selected."""
        return bool(self.engines)

    def echo(self) -> dict[str, object]:
        """The knobs as they took effect, for the report."""
        return {
            "engines": list(self.engines),
            "require": self.require,
            "clock": self.clock or "default (manual where the engine declares injectable_clock)",
            "tolerance_s": self.tolerance_s,
            "seed": self.seed,
            "report": str(self.report) if self.report else None,
            "xfail_file": str(self.xfail_file) if self.xfail_file else None,
            "examples": self.examples,
            "tick_s": self.tick_s if self.tick_s is not None else "default (measured for the system clock)",
            "full_trace": self.full_trace,
        }


def _pick(config: pytest.Config, option: str, ini: str, env: str | None = None) -> str | None:
    value = config.getoption(option)
    if value not in (None, [], ""):
        return str(value)
    ini_value = config.getini(ini)
    if ini_value not in (None, [], ""):
        return str(ini_value)
    if env is not None and os.environ.get(env):
        return os.environ[env]
    return None


def _engines(config: pytest.Config) -> tuple[str, ...]:
    raw: list[str] = list(config.getoption("alkstore_engine") or []) or list(config.getini("alkstore_engines") or [])
    if not raw and os.environ.get("ALKSTORE_ENGINES"):
        raw = [os.environ["ALKSTORE_ENGINES"]]
    names: list[str] = []
    for chunk in raw:
        for name in chunk.split(","):
            name = name.strip()
            if name and name not in names:
                names.append(name)
    return tuple(names)


def _truthy(text: str | None) -> bool:
    return (text or "").strip().lower() in {"1", "true", "yes", "on"}


def load_settings(config: pytest.Config) -> SuiteSettings:
    """Resolve every knob; a bad value is a usage error naming the knob."""
    clock = _pick(config, "alkstore_clock", "alkstore_clock", "ALKSTORE_CLOCK")
    if clock not in (None, "manual", "system"):
        raise pytest.UsageError(f"--alkstore-clock={clock!r}: choose 'manual' or 'system'")
    tolerance = _pick(config, "alkstore_tolerance", "alkstore_tolerance", "ALKSTORE_TOLERANCE")
    seed = _pick(config, "alkstore_seed", "alkstore_seed", "ALKSTORE_SEED")
    examples = _pick(config, "alkstore_examples", "alkstore_examples", "ALKSTORE_EXAMPLES")
    report = _pick(config, "alkstore_report", "alkstore_report", "ALKSTORE_REPORT")
    xfail_file = _pick(config, "alkstore_xfail_file", "alkstore_xfail_file", "ALKSTORE_XFAIL_FILE")
    tick = _pick(config, "alkstore_tick", "alkstore_tick", "ALKSTORE_TICK")
    full_trace = bool(config.getoption("alkstore_full_trace")) or bool(config.getini("alkstore_full_trace"))
    require_opt = config.getoption("alkstore_require")
    require = (
        bool(require_opt) or bool(config.getini("alkstore_require")) or _truthy(os.environ.get("ALKSTORE_REQUIRE"))
    )
    try:
        tolerance_s = DEFAULT_TOLERANCE_S if tolerance is None else float(tolerance)
        seed_value = random.SystemRandom().randrange(2**32) if seed is None else int(seed)
        examples_value = DEFAULT_EXAMPLES if examples is None else int(examples)
        tick_s = None if tick is None else float(tick)
    except ValueError as exc:
        raise pytest.UsageError(f"an --alkstore-* number could not be read: {exc}") from exc
    if tolerance_s < 0 or examples_value < 1:
        raise pytest.UsageError("--alkstore-tolerance must be ≥ 0 and --alkstore-examples ≥ 1")
    if tick_s is not None and not MIN_TICK_S <= tick_s <= MAX_TICK_S:
        raise pytest.UsageError(
            f"--alkstore-tick={tick}: a tick is between {MIN_TICK_S} and {MAX_TICK_S} seconds (the real clock's "
            "unit of row time)"
        )
    return SuiteSettings(
        engines=_engines(config),
        require=require,
        clock=clock,  # type: ignore[arg-type]
        tolerance_s=tolerance_s,
        seed=seed_value,
        report=Path(report) if report else None,
        xfail_file=Path(xfail_file) if xfail_file else None,
        examples=examples_value,
        tick_s=tick_s,
        full_trace=full_trace,
    )


def _text_option(parser: pytest.Parser, group: pytest.OptionGroup, name: str, help: str, **extra: object) -> None:
    """``--alkstore-NAME`` (its text, ``None`` when not given) and its ini twin ``alkstore_NAME`` (``""`` when not set).

    Most options are text that ``load_settings`` parses (``_pick``), the command line
    winning over the ini file; one declaration keeps the pair's names in step.
    """
    dest = "alkstore_" + name.replace("-", "_")
    group.addoption(f"--alkstore-{name}", dest=dest, default=None, help=help, **extra)
    parser.addini(dest, default="", help=f"as --alkstore-{name}")


def _flag_option(parser: pytest.Parser, group: pytest.OptionGroup, name: str, help: str) -> None:
    """``--alkstore-NAME``, a switch, and its boolean ini twin ``alkstore_NAME``, declared in step."""
    dest = "alkstore_" + name.replace("-", "_")
    group.addoption(f"--alkstore-{name}", action="store_true", dest=dest, default=False, help=help)
    parser.addini(dest, type="bool", default=False, help=f"as --alkstore-{name}")


def add_options(parser: pytest.Parser) -> None:
    """Declare every option with its ini twin (the pytest-postgresql convention)."""
    group = parser.getgroup("alkstore", "alkstore conformance suite")
    group.addoption(
        "--alkstore-engine",
        action="append",
        dest="alkstore_engine",
        default=[],
        metavar="NAME",
        help="certify engine NAME (an installed alkstore.engines entry point, or package.module:attr); "
        "repeatable, comma-separated",
    )
    parser.addini("alkstore_engines", type="args", default=[], help="engines to certify (as --alkstore-engine)")
    _flag_option(
        parser,
        group,
        "require",
        help="an engine that cannot run here fails its rows instead of skipping them (env ALKSTORE_REQUIRE=1)",
    )
    _text_option(
        parser,
        group,
        "clock",
        choices=("manual", "system"),
        help="manual: an injected ManualClock that rows move without sleeping (default where the engine "
        "declares injectable_clock); system: the engine's production clock, rows sleep",
    )
    _text_option(
        parser,
        group,
        "tolerance",
        metavar="SECONDS",
        help=f"slack for instants on the system clock (default {DEFAULT_TOLERANCE_S})",
    )
    _text_option(parser, group, "seed", help="seed of every random choice")
    _text_option(parser, group, "report", metavar="PATH", help="write the JSON report")
    _text_option(
        parser,
        group,
        "xfail-file",
        metavar="PATH",
        help="clauses expected to fail, one 'row[engine] CLAUSE reason' a line; strict",
    )
    _text_option(
        parser,
        group,
        "examples",
        metavar="N",
        help=f"Hypothesis examples of the model_based row (default {DEFAULT_EXAMPLES})",
    )
    _text_option(
        parser,
        group,
        "tick",
        metavar="SECONDS",
        help="the real clock's unit of row time (default: measured on this host when the session starts, "
        "at least 0.4 s; shown in the header)",
    )
    _flag_option(
        parser,
        group,
        "full-trace",
        help="show the suite's frames too in the traceback of an exception the engine raised",
    )
