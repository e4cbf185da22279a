"""The pytest plugin (entry point ``pytest11: alkstore``) that turns rows into tests.

Part of the suite.

``pytest --alkstore-engine=NAME`` collects every row for every named engine,
from any directory, with no conftest: the plugin appends an anchor file that
ships in this package to the collection arguments, and a collector for that
file yields one item per row and engine (``test_exactly_once[sqlite]``).
Without an engine the plugin adds nothing, so it stays out of a project's own
tests.

Rows are run with ``asyncio.run`` inside the item, so every store lives and
dies in one event loop whatever the user's pytest-asyncio mode is, and nothing
needs configuring.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("alkstore_contract.suite.rows")

import warnings  # noqa: E402
from typing import Any  # noqa: E402

from alkstore_contract.adapter import Capability, EngineAdapter, time_resolution_us  # noqa: E402
from alkstore_contract.suite.emulation import declared_emulation  # noqa: E402
from alkstore_contract.suite.engine_options import (  # noqa: E402
    add_engine_options,
    configure_adapter,
    configure_installed,
    restore_adapters,
)
from alkstore_contract.suite.harness import SYSTEM_UNIT_S  # noqa: E402
from alkstore_contract.suite.registry import UnknownEngine, load_adapter  # noqa: E402
from alkstore_contract.suite.run import NODE_PREFIX, SESSION_PLUGIN_NAME, Engine, SuiteSession  # noqa: E402
from alkstore_contract.suite.settings import SuiteSettings, add_options, load_settings  # noqa: E402
from alkstore_contract.suite.tick import measure_tick  # noqa: E402

TICK_KEY = "alkstore_tick"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    add_engine_options(parser)


def _clock_mode(settings: SuiteSettings, adapter: EngineAdapter) -> str:
    if settings.clock is not None:
        return settings.clock
    return "manual" if Capability.INJECTABLE_CLOCK in adapter.capabilities else "system"


ASYNCIO_LOOP_SCOPE_UNSET = r"(?s).*asyncio_default_fixture_loop_scope.*is unset"
"""pytest-asyncio's deprecation warning when its ini key is unset, which it raises at configure time."""


@pytest.hookimpl(tryfirst=True, specname="pytest_configure")
def pytest_configure_quiet_asyncio(config: pytest.Config) -> None:
    """A certifying run prints no warning of pytest-asyncio's about a setting the rows never use.

    Rows run their own event loop (``asyncio.run`` in the item), so the fixture loop scope that
    pytest-asyncio asks users to set means nothing to them; a user's first screen should not open on
    it. The filter is added inside pytest's configure-time warning capture, before pytest-asyncio's
    own ``pytest_configure`` runs, and only when engines were selected: a project's own run keeps it.
    """
    if load_settings(config).active:
        warnings.filterwarnings("ignore", message=ASYNCIO_LOOP_SCOPE_UNSET, category=pytest.PytestDeprecationWarning)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "alkstore_row(name, clauses, required): a contract row of the alkstore suite")
    configure_installed(config)
    settings = load_settings(config)
    if not settings.active:
        return
    engines: list[Engine] = []
    for spec in settings.engines:
        try:
            adapter = load_adapter(spec)
        except UnknownEngine as exc:
            raise pytest.UsageError(str(exc)) from exc
        try:
            time_resolution_us(adapter)
            declared_emulation(adapter)
            options = configure_adapter(config, adapter)
        except ValueError as exc:
            raise pytest.UsageError(f"engine {spec!r}: {exc}") from exc
        engines.append(Engine(spec=spec, adapter=adapter, clock=_clock_mode(settings, adapter), options=options))
    names = [engine.name for engine in engines]
    if len(set(names)) != len(names):
        raise pytest.UsageError(f"--alkstore-engine: two engines share a name: {names}")
    tick = _tick(config, settings, engines)
    session = SuiteSession(config, settings, engines, tick)
    config.pluginmanager.register(session, SESSION_PLUGIN_NAME)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_TickToWorkers(tick), "alkstore-tick-to-workers")
    anchor = str(session.anchor)
    prefix = NODE_PREFIX + "::"
    config.args[:] = [anchor + arg[len(NODE_PREFIX) :] if arg.startswith(prefix) else arg for arg in config.args]
    if not any(arg == anchor or arg.startswith(anchor + "::") for arg in config.args):
        config.args.append(anchor)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Hand the adapters back what they had, so a nested in-process session leaves the outer one's settings alone."""
    restore_adapters(config)


def _tick(config: pytest.Config, settings: SuiteSettings, engines: list[Engine]) -> tuple[float, str]:
    """The real-clock tick: asked for, handed down by the xdist controller, or measured once here."""
    handed = getattr(config, "workerinput", {}).get(TICK_KEY)
    if handed is not None:
        return float(handed[0]), str(handed[1])
    if settings.tick_s is not None:
        return settings.tick_s, "--alkstore-tick"
    if all(engine.clock == "manual" for engine in engines):
        return SYSTEM_UNIT_S, "not measured: every engine runs on the manual clock"
    return measure_tick()


class _TickToWorkers:
    """Hands the controller's tick to every xdist worker, so all rows of a run use one tick."""

    def __init__(self, tick: tuple[float, str]) -> None:
        self.tick = tick

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[TICK_KEY] = list(self.tick)
