"""An engine's ``error`` reply as the exception the contract names (docs/wire-protocol.md, "Errors").

Part of the wire.
"""

from __future__ import annotations

from typing import Any

from alkstore_contract.errors import (
    HandleSpent,
    InvalidArgument,
    InvalidName,
    PayloadError,
    StoreClosed,
    StoreUnavailable,
)

CONTRACT_CLASSES: dict[str, type[Exception]] = {
    "InvalidName": InvalidName,
    "InvalidArgument": InvalidArgument,
    "PayloadError": PayloadError,
    "StoreClosed": StoreClosed,
    "HandleSpent": HandleSpent,
    "StoreUnavailable": StoreUnavailable,
}


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
