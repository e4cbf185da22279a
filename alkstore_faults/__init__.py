"""Runtime faults: judge a queue library through its own worker runtime (workload, nemesis, checker).

Beside ``alkstore_contract`` rather than inside it: this mode drives whole programs (a library's runner, its
workers, a throwaway broker), never an adapter, so it is none of the parts an engine author imports. The
runner protocol, the faults and the checker's outcomes are specified in docs/runtime-faults.md.
"""

from __future__ import annotations

PROTOCOL = 2
"""The runner protocol's version (docs/runtime-faults.md): version 2 adds ``inspect``."""
PROTOCOLS = (1, 2)
"""The versions a manifest may name: a version-1 runner still runs, its cells saying "final state not read"."""
