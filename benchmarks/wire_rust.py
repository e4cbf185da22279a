"""The wire protocol's cost on the Rust engine: benchmarks/wire_protocol.py's measures, against alkstore_rust.

- **no-op round trip**: ``unavailable_reason`` (answered without storage) through the suite's wire
  adapter, one at a time: median and p90.
- **each op**: ``enqueue``, ``get_job``, ``claim_one``, ``heartbeat`` and ``ack`` through the wire
  against the same requests handed to the engine's ``Engine::handle`` in-process
  (``engines_under_test/alkstore_rust/examples/inprocess.rs``); the difference is the protocol's cost.
- ``--certify``: the wall time of ``pytest --alkstore-engine=...`` on the Rust engine beside the SQLite
  reference, on the manual and the system clock.

Build first (``bash ci/rust.sh install``). Figures are only for orientation when other work loads the
machine; the script prints ``uptime``'s load average beside them.

Run: ``python benchmarks/wire_rust.py [--n 2000] [--runs 3] [--certify]``.
"""

from __future__ import annotations

import json
import subprocess

from benchmarks.wire_protocol import REPO, measure

ENGINE_DIR = REPO / "engines_under_test" / "alkstore_rust"
MANIFEST = ENGINE_DIR / "alkstore-engine.toml"


def in_process_us(n: int, runs: int) -> dict[str, list[float]]:
    command = ["cargo", "run", "--release", "--offline", "--quiet", "--example", "inprocess", "--", str(n), str(runs)]
    done = subprocess.run(command, cwd=ENGINE_DIR, capture_output=True, text=True, check=True)
    loaded: dict[str, list[float]] = json.loads(done.stdout)
    return loaded


def main() -> None:
    measure(MANIFEST, "rust", in_process_us, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
