"""Shared-code mutants: break ``alkstore_contract.backoff``/``resolution`` themselves, for every engine at once.

Not a mutant itself (it defines no ``MUTANT``); the ``shared_*`` modules use it.

A shared-code mutant stands for a wrong line in the source the engines share,
so it must not be applied by importing its module (the catalog may import
it, and so may anything listing mutants): ``shared_code_mutant`` returns an
SQLite adapter whose FIRST ``open_store`` applies the patch, before the
store exists. It is never undone: each mutant runs in a pytest process of its
own, so no other engine's run sees it.

Where to patch: a name is looked up where its caller finds it.

- ``backoff_cap_s`` reads ``BACKOFF_CAP_S`` from ``alkstore_contract.backoff``'s
  globals at each call, and ``backoff_range_s`` reads ``backoff_cap_s`` there
  too: those two are patched in ``alkstore_contract.backoff``.
- ``resolution`` does ``from alkstore_contract.backoff import
  backoff_delay_s``: its own binding is the one ``decide_retry`` (the kit's
  retry) calls, so a replaced ``backoff_delay_s`` goes into
  ``alkstore_contract.resolution``.
- The ``LAST_ERROR_*`` strings: ``decide_retry`` (R4) and ``fail_error`` (D1)
  read ``resolution``'s globals, but the kit's front imports
  ``LAST_ERROR_EXPIRED`` and ``LAST_ERROR_MAX_ATTEMPTS`` by name and passes
  them into each driver's ``sweep`` (X2): ``rebind`` sets a string in
  ``resolution`` and in every module of ``ENGINE_STRING_HOLDERS`` that has it,
  as if the shared source had said it.
- A wrong line inside a function (an off-by-one in ``validation``, a test of
  truth for ``is not None`` in ``resolution``): ``edit_function`` recompiles
  that function with the line changed and swaps its code in place, so every
  module that imported the function by name runs the changed line too.

No row reads any of these: the rows take their expected values from
``alkstore_contract.suite.expected``, which this module never touches.
"""

from __future__ import annotations
import __future__

import importlib
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store

ENGINE_STRING_HOLDERS = ("alkstore_contract.kit.front",)
"""The modules besides ``resolution`` that import ``LAST_ERROR_*`` strings by name (grep ``LAST_ERROR_``).

Only the kit's front: it hands them to every driver's ``sweep``, so no engine holds one.
"""


def patch(module_name: str, attr: str, value: object) -> None:
    """Set ``module.attr``; refuses a stale patch, when the module no longer has ``attr``."""
    module = importlib.import_module(module_name)
    if not hasattr(module, attr):
        raise RuntimeError(f"mutant is stale: {module_name} no longer defines {attr}")
    setattr(module, attr, value)


def edit_function(module_name: str, function: str, old: str, new: str) -> None:
    """Recompile ``module.function`` with ``old`` replaced by ``new`` in its source, in place.

    The function object keeps its identity and only its code changes, so every
    module that imported it by name (``types`` imports ``validate_max_attempts``,
    the kit's front ``validate_worker_id``) runs the edited line too, exactly as
    if the shared source said so. Refuses a stale edit, when the source no
    longer holds ``old`` exactly once.
    """
    module = importlib.import_module(module_name)
    target = getattr(module, function, None)
    if not inspect.isfunction(target):
        raise RuntimeError(f"mutant is stale: {module_name} no longer defines the function {function}")
    source = textwrap.dedent(inspect.getsource(target))
    if source.count(old) != 1:
        raise RuntimeError(f"mutant is stale: {old!r} is not in {module_name}.{function} exactly once")
    code = compile(
        source.replace(old, new),
        inspect.getfile(target),
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    defined: dict[str, Any] = {}
    exec(code, vars(module), defined)  # the edited definition, bound to the module's own globals
    target.__code__ = defined[function].__code__


def rebind(attr: str, value: str) -> None:
    """Change the ``LAST_ERROR_*`` string ``attr`` in ``resolution`` and in every module that holds it by name."""
    patch("alkstore_contract.resolution", attr, value)
    for module_name in ENGINE_STRING_HOLDERS:
        module = importlib.import_module(module_name)
        if hasattr(module, attr):
            setattr(module, attr, value)


def shared_code_mutant(name: str, apply: Callable[[], None]) -> Any:
    """An SQLite adapter named ``name`` whose first ``open_store`` calls ``apply`` (the patch), once."""
    from alkstore_sqlite import SqliteAdapter

    class SharedCodeMutantAdapter(SqliteAdapter):
        applied = False

        async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
            if not SharedCodeMutantAdapter.applied:
                apply()
                SharedCodeMutantAdapter.applied = True
            return await super().open_store(location, clock=clock, seed=seed)

    SharedCodeMutantAdapter.name = name
    return SharedCodeMutantAdapter()
