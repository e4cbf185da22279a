"""Where a Postgres store lives: a DSN plus a schema, and how that travels as a string.

A location is a ``str`` so it can be handed to a worker in another OS process
(the contract's multi-process rows do that). JSON keeps both parts intact
whatever characters the DSN holds.

A location may also carry the timeouts its stores use (``op_timeout_s``,
``connect_timeout_s``): the adapter's ``location_via`` sets short ones for the
suite's network-fault rows; a location without them gets the engine's
defaults.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from alkstore_contract.errors import InvalidArgument
from alkstore_contract.validation import describe_value

DEFAULT_OP_TIMEOUT_S = 10.0
"""How long one statement may run before a store gives up on it (after 0.9 to 1 times this: ``deadlines``)."""
DEFAULT_CONNECT_TIMEOUT_S = 5.0
"""How long acquiring a pooled connection (and opening one) may take."""
MAX_IDENTIFIER_BYTES = 63
"""Postgres silently truncates longer identifiers (NAMEDATALEN - 1), which would alias two schemas."""
LOCATION_SCHEMA_PREFIX = "alk_"


def validate_schema_name(schema: object) -> str:
    """A schema name Postgres stores as given: a non-empty str of at most 63 UTF-8 bytes, no NUL."""
    if not isinstance(schema, str) or not schema:
        raise InvalidArgument(f"schema={describe_value(schema)}: must be a non-empty str")
    if "\x00" in schema:
        raise InvalidArgument(f"schema={describe_value(schema)}: must not contain NUL")
    try:
        size = len(schema.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"schema={describe_value(schema)}: must be encodable as UTF-8") from exc
    if size > MAX_IDENTIFIER_BYTES:
        raise InvalidArgument(
            f"schema={describe_value(schema)}: at most {MAX_IDENTIFIER_BYTES} bytes "
            f"(Postgres would truncate it), got {size}"
        )
    return schema


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier, so any schema name is safe to splice into SQL text."""
    return '"' + name.replace('"', '""') + '"'


def new_schema_name() -> str:
    """A schema name no other test or worker uses (random, so pytest-xdist workers never collide)."""
    return LOCATION_SCHEMA_PREFIX + uuid.uuid4().hex


def redact_dsn(dsn: str) -> str:
    """``dsn`` with its password masked, for messages and report headers."""
    try:
        parts = urlsplit(dsn)
    except ValueError:
        return "<unparsable DSN>"
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def outage_bound_s(op_timeout_s: float, connect_timeout_s: float) -> float:
    """N1: the longest an operation takes to raise ``StoreUnavailable`` during an outage.

    Acquiring a connection (``connect_timeout_s``), then the statement
    (``op_timeout_s``), then releasing it, which waits at most
    ``connect_timeout_s`` for asyncpg's cancel request (see store.py).
    """
    return 2 * connect_timeout_s + op_timeout_s


def _optional_seconds(text: str, data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidArgument(
            f"location={describe_value(text)}: {key} must be a positive number of seconds, got {describe_value(value)}"
        )
    return float(value)


@dataclass(frozen=True, slots=True)
class Location:
    """A DSN and a schema inside that database, and optionally the timeouts of the stores opened on it."""

    dsn: str
    schema: str
    op_timeout_s: float | None = None
    connect_timeout_s: float | None = None

    def encode(self) -> str:
        data: dict[str, object] = {"dsn": self.dsn, "schema": self.schema}
        if self.op_timeout_s is not None:
            data["op_timeout_s"] = self.op_timeout_s
        if self.connect_timeout_s is not None:
            data["connect_timeout_s"] = self.connect_timeout_s
        return json.dumps(data, sort_keys=True)

    @classmethod
    def decode(cls, text: object) -> Location:
        """Parse what ``encode`` wrote; anything else is an ``InvalidArgument`` naming ``location``."""
        if not isinstance(text, str):
            raise InvalidArgument(f"location={describe_value(text)}: a Postgres location is a JSON str")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidArgument(f"location={describe_value(text)}: not JSON ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("dsn"), str):
            raise InvalidArgument(f'location={describe_value(text)}: expected {{"dsn": str, "schema": str}}')
        return cls(
            dsn=data["dsn"],
            schema=validate_schema_name(data.get("schema")),
            op_timeout_s=_optional_seconds(text, data, "op_timeout_s"),
            connect_timeout_s=_optional_seconds(text, data, "connect_timeout_s"),
        )
