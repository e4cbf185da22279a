"""A throwaway Postgres cluster whose clock runs ahead of the host's, so the suite can check contract T3.

T3: the Postgres engine's default clock is the server's (``statement_timestamp()``),
so worker hosts with skewed clocks agree. On one machine the client's and the
server's clocks agree and nothing could tell a lease computed on the client from
one computed on the server; a server with a clock of its own can. The server of
a ``ThrowawayCluster`` (``alkstore_postgres.provision``) runs under libfaketime
(Debian's ``faketime`` package; ``ci/faketime.sh`` installs it): ``LD_PRELOAD``
of the library and ``FAKETIME=+OFFSET`` in the server's environment move every
wall-clock read of the postmaster and its backends by the offset, while
``DONT_FAKE_MONOTONIC=1`` leaves the monotonic clock alone (Postgres times its
waits and timeouts by it).

One cluster serves every skewed location of an adapter with the same offset (a
schema each, as on the configured server): ``initdb`` costs seconds, and a
skewed location is only ever read and written, never crashed. The cluster is
stopped when the process exits (``provision``'s exit hook).

Which library: ``$ALKSTORE_FAKETIME_LIB``, else Debian's
``/usr/lib/*/faketime/libfaketime.so.1``.
"""

from __future__ import annotations

import os
from pathlib import Path

from alkstore_postgres.provision import ThrowawayCluster, server_bindir

FAKETIME_ENV = "ALKSTORE_FAKETIME_LIB"
FAKETIME_GLOBS = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1")


def faketime_library() -> Path:
    """libfaketime's path; a ``RuntimeError`` saying how to provide it when it is nowhere."""
    named = os.environ.get(FAKETIME_ENV)
    if named:
        if Path(named).is_file():
            return Path(named)
        raise RuntimeError(f"${FAKETIME_ENV}={named} is not a file (ci/faketime.sh prints the library's path)")
    for pattern in FAKETIME_GLOBS:
        found = sorted(Path("/").glob(pattern.lstrip("/")))
        if found:
            return found[0]
    raise RuntimeError(
        "a skewed server needs libfaketime, to run a throwaway cluster's clock ahead of this host's: not found "
        f"(install Debian's faketime package — ci/faketime.sh does — or set ${FAKETIME_ENV})"
    )


def skewed_unavailable_reason() -> str | None:
    """``None`` when a skewed cluster can be started here, else what is missing (the server binaries, libfaketime)."""
    try:
        server_bindir()
        faketime_library()
    except RuntimeError as exc:
        return str(exc)
    return None


def skewed_environment(offset_s: float) -> dict[str, str]:
    """The server process's environment additions that run its wall clock ``offset_s`` (whole seconds) ahead."""
    return {
        "LD_PRELOAD": str(faketime_library()),
        "FAKETIME": f"{round(offset_s):+d}",
        "DONT_FAKE_MONOTONIC": "1",
    }


async def skewed_cluster(offset_s: float) -> ThrowawayCluster:
    """A fresh throwaway cluster whose server's clock runs ``offset_s`` ahead of the host's."""
    return await ThrowawayCluster.create(skewed_environment(offset_s))
