"""An engine's ``error`` reply as the exception the contract names (docs/wire-protocol.md, "Errors").

Part of the wire.
"""

from __future__ import annotations

from typing import Any

from alkstore_contract import errors

CONTRACT_CLASSES: dict[str, type[Exception]] = {
    cls.__name__: cls
    for cls in (
        errors.InvalidName,
        errors.InvalidArgument,
        errors.PayloadError,
        errors.StoreClosed,
        errors.HandleSpent,
        errors.StoreUnavailable,
    )
}
"""The contract's errors by the name an ``error`` reply gives as its ``class``: each class's own name."""


class EngineError(Exception):
    """An error the engine raised that is none of the contract's: charged to the clause under check."""


def contract_error(error: dict[str, Any]) -> Exception:
    """The exception for an ``error`` object: the contract's class with the engine's message, or ``EngineError``."""
    message = str(error["message"])
    cls = CONTRACT_CLASSES.get(str(error["class"]))
    if cls is not None:
        return cls(message)
    stack = error.get("stack")
    return EngineError(message + (f"\n\nThe engine's stack:\n{stack}" if stack else ""))
