"""Finding the app a command names: ``package.module:attribute``, imported as the worker's users run it."""

from __future__ import annotations

import importlib
import os
import sys

from alkstore_worker.app import App


class AppNotFound(Exception):
    """The ``MODULE:APP`` argument names nothing usable; the message says which part and why."""


def load_app(target: str) -> App:
    """Import ``target`` (``module:attribute``, the current directory importable first, as ``python -m`` does)."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise AppNotFound(f"app {target!r}: must be MODULE:APP, such as myproject.tasks:app")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AppNotFound(f"app {target!r}: cannot import module {module_name!r}: {exc}") from exc
    app = getattr(module, attribute, None)
    if not isinstance(app, App):
        raise AppNotFound(
            f"app {target!r}: module {module_name!r} has no App named {attribute!r} (found {type(app).__name__})"
        )
    return app
