"""Mutant: ``location_via`` ignores the proxy it is given and connects straight to the server — breaks N1 (the hook).

contract N1–N6 are checked through ``NetworkedAdapter.location_via``: the
stores of the location it returns connect to the host and port the suite gave
(its fault proxy). This adapter keeps the short timeouts but leaves the DSN's
host and port alone, so no fault the suite injects reaches the engine: every
op "survives" every outage. ``network_history`` once passed such an engine
(N1, N2, N4 reported passed on faults that touched nothing); now the wire sees
that not one connection reached the proxy and fails N1, and a leg whose
faults touched none of the connections that did reach it is not exercised.
"""

from __future__ import annotations

from alkstore_postgres import PgAdapter
from alkstore_postgres.adapter import NETWORK_CONNECT_TIMEOUT_S, NETWORK_OP_TIMEOUT_S
from alkstore_postgres.location import Location

from tests.mutants.catalog import Mutant


class BypassingAdapter(PgAdapter):
    @property
    def name(self) -> str:
        return "mut-pg-location-via-bypass"

    def location_via(self, location: str, host: str, port: int) -> str:
        parsed = Location.decode(location)
        return Location(
            dsn=parsed.dsn,
            schema=parsed.schema,
            op_timeout_s=NETWORK_OP_TIMEOUT_S,
            connect_timeout_s=NETWORK_CONNECT_TIMEOUT_S,
        ).encode()


adapter = BypassingAdapter()
MUTANT = Mutant(
    clause="N1",
    rows=("network_history", "network_faults"),
    what="location_via leaves the DSN's host and port alone, so the stores bypass the suite's fault proxy",
)
