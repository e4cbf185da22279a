"""Where a Postgres store lives: a DSN plus a schema, and how that travels as a string.

A location is a ``str`` so it can be handed to a worker in another OS process
(the contract's multi-process rows do that). JSON keeps both parts intact
whatever characters the DSN holds.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from alkstore_contract.errors import InvalidArgument

MAX_IDENTIFIER_BYTES = 63
"""Postgres silently truncates longer identifiers (NAMEDATALEN - 1), which would alias two schemas."""
LOCATION_SCHEMA_PREFIX = "alk_"


def validate_schema_name(schema: object) -> str:
    """A schema name Postgres stores as given: a non-empty str of at most 63 UTF-8 bytes, no NUL."""
    if not isinstance(schema, str) or not schema:
        raise InvalidArgument(f"schema={schema!r}: must be a non-empty str")
    if "\x00" in schema:
        raise InvalidArgument(f"schema={schema!r}: must not contain NUL")
    try:
        size = len(schema.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"schema={schema!r}: must be encodable as UTF-8") from exc
    if size > MAX_IDENTIFIER_BYTES:
        raise InvalidArgument(
            f"schema={schema!r}: at most {MAX_IDENTIFIER_BYTES} bytes (Postgres would truncate it), got {size}"
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


@dataclass(frozen=True, slots=True)
class Location:
    """A DSN and a schema inside that database."""

    dsn: str
    schema: str

    def encode(self) -> str:
        return json.dumps({"dsn": self.dsn, "schema": self.schema}, sort_keys=True)

    @classmethod
    def decode(cls, text: object) -> Location:
        """Parse what ``encode`` wrote; anything else is an ``InvalidArgument`` naming ``location``."""
        if not isinstance(text, str):
            raise InvalidArgument(f"location={text!r}: a Postgres location is a JSON str")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidArgument(f"location={text!r}: not JSON ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("dsn"), str):
            raise InvalidArgument(f'location={text!r}: expected {{"dsn": str, "schema": str}}')
        return cls(dsn=data["dsn"], schema=validate_schema_name(data.get("schema")))
