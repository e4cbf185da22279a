"""Engines' own settings (``AdapterOption``): declared by their adapters, registered and resolved by the plugin.

Part of the suite.

An adapter declares its settings as data (``options``); the plugin turns
each into a command-line option paired with an ini key sharing one help line
(the pytest-postgresql convention, as for the suite's own knobs), resolves
it, and hands the values to the adapter's ``configure``. So an engine
package needs no pytest plugin of its own and imports nothing of the suite.

Resolution: the command-line option, then the environment variable, then the
ini key, then the declared default. The environment beats the ini file,
unlike the suite's own knobs: an engine's setting says where its storage is,
and the ini file is checked in while the environment is the machine's (CI
exports the Postgres DSN it started).

Every installed engine (an ``alkstore.engines`` entry point) is configured
in every session, certifying or not, so a project's own tests of an engine
honour its options too; a nested in-process session hands the adapters back
what the outer one had handed them when it ends. An adapter named as
``module:attr`` is configured when selected; pytest parses the command line
before it knows which engines were selected, so its options come from the
command line only when an installed engine declares them too, else from the
environment or the default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points

import pytest

from alkstore_contract.adapter import AdapterOption, ConfigurableAdapter, declared_options
from alkstore_contract.suite.registry import ENTRY_POINT_GROUP


@dataclass(frozen=True, slots=True)
class ResolvedOption:
    """An option's value for this session and where it came from, for the report header."""

    option: AdapterOption
    value: str | None
    source: str

    def echo(self) -> str:
        """``--flag=value (from source)``, the value as the adapter wants it shown."""
        value = self.value
        if value is None:
            return f"{self.option.flag}: not set (the adapter's own default)"
        shown = value if self.option.redact is None else self.option.redact(value)
        return f"{self.option.flag}={shown} (from {self.source})"


def installed_adapters() -> list[tuple[str, object]]:
    """Every installed engine's adapter, by entry-point name.

    An entry point that fails to load is left out here: its options are not
    registered, and selecting the engine reports the import error itself.
    """
    adapters: list[tuple[str, object]] = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
        try:
            adapters.append((point.name, point.load()))
        except Exception:  # reported by load_adapter when the engine is selected
            continue
    return adapters


def add_engine_options(parser: pytest.Parser) -> None:
    """Register the options of every installed engine, each ``addoption`` paired with its ``addini``."""
    registered: dict[str, AdapterOption] = {}
    for name, adapter in installed_adapters():
        try:
            options = declared_options(adapter)
        except ValueError as exc:
            raise pytest.UsageError(f"engine {name!r}: {exc}") from exc
        for option in options:
            earlier = registered.get(option.flag)
            if earlier == option:
                continue
            if earlier is not None:
                raise pytest.UsageError(f"engine {name!r}: {option.flag} is declared differently by another engine")
            registered[option.flag] = option
            group = parser.getgroup(f"alkstore-{name}", f"alkstore {name} engine")
            sources = f"env {option.env}; " if option.env else ""
            default = f"default {option.default}" if option.default is not None else "default: the engine's own"
            group.addoption(
                option.flag,
                dest=option.ini,
                default=None,
                metavar=option.metavar,
                help=f"{option.help} ({sources}ini {option.ini}; {default})",
            )
            parser.addini(option.ini, default="", help=f"{option.help} (as {option.flag})")


def resolve(config: pytest.Config, option: AdapterOption) -> ResolvedOption:
    """The option's value: command line, then environment, then ini, then default (see the module docstring)."""
    registered = option.ini in vars(config.option)
    from_flag = config.getoption(option.ini) if registered else None
    if from_flag:
        return ResolvedOption(option, str(from_flag), option.flag)
    from_env = os.environ.get(option.env) if option.env else None
    if from_env:
        return ResolvedOption(option, from_env, f"${option.env}")
    from_ini = config.getini(option.ini) if registered else None
    if from_ini:
        return ResolvedOption(option, str(from_ini), f"ini {option.ini}")
    return ResolvedOption(option, option.default, "default")


_HANDED: dict[int, Mapping[str, str | None]] = {}
"""What the latest session handed each adapter (by ``id``), so a nested session can hand it back."""
_RESTORE = pytest.StashKey[dict[int, tuple[ConfigurableAdapter, Mapping[str, str | None]]]]()


def configure_adapter(config: pytest.Config, adapter: object) -> tuple[ResolvedOption, ...]:
    """Hand ``adapter`` its options' values for this session; what was resolved, for the header."""
    options = declared_options(adapter)
    if not options or not isinstance(adapter, ConfigurableAdapter):
        return ()
    resolved = tuple(resolve(config, option) for option in options)
    values = {entry.option.ini: entry.value for entry in resolved}
    restore = config.stash.setdefault(_RESTORE, {})
    if id(adapter) not in restore:
        previous = _HANDED.get(id(adapter), dict.fromkeys(values))
        restore[id(adapter)] = (adapter, previous)
    adapter.configure(values)
    _HANDED[id(adapter)] = values
    return resolved


def configure_installed(config: pytest.Config) -> None:
    """Hand every installed engine's adapter its options' values (a malformed declaration: a usage error)."""
    for name, adapter in installed_adapters():
        try:
            configure_adapter(config, adapter)
        except ValueError as exc:
            raise pytest.UsageError(f"engine {name!r}: {exc}") from exc


def restore_adapters(config: pytest.Config) -> None:
    """Hand every adapter this session configured what it had before the session."""
    for adapter, previous in config.stash.get(_RESTORE, {}).values():
        adapter.configure(previous)
        _HANDED[id(adapter)] = previous
