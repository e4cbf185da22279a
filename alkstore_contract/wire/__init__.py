"""The wire protocol (docs/wire-protocol.md): certifying an engine written in any language.

Part of the wire.

The suite drives such an engine as a process over its stdin and stdout. This
package ships the protocol's JSON Schema and the contract's literal expected
values as JSON, so that engines in other languages read the same files the
suite does, and holds the suite's side of the protocol: the manifest, the
process connection and the adapter that turns the contract's surface into
messages.
"""

from __future__ import annotations

from pathlib import Path

PROTOCOL_VERSION = 1
"""The one protocol version this suite speaks (it offers ``[PROTOCOL_VERSION]`` in ``hello``)."""
SCHEMA_PATH = Path(__file__).with_name("protocol.schema.json")
"""Every message of the protocol, as JSON Schema (2020-12)."""
LITERALS_PATH = Path(__file__).with_name("literals.json")
"""The contract's literal expected values (R2's rows, the three ``last_error`` strings, the bounds)."""
