"""The order the project's tests start in: the ones that mostly wait for real time first.

Why: ``ci/test.sh`` runs these tests beside the contract suite and the mutant
catalog, all sharing two cores. A test that waits on real time (a
runtime-fault run, a soak, worker processes, a venv built from wheels) costs
little CPU and much wall time; run last, the whole command waits for it while
the CPU idles. Started first, its waits overlap the others' work. pytest-xdist
hands out tests in collection order (``load`` scheduling, one test at a time with
``--maxschedchunk=1`` as ci/test.sh runs it: in bigger chunks the first worker
would take every waiting test at once), so moving these modules to the front is
enough; the rest keep pytest's order, and nothing else about collection changes.
"""

from __future__ import annotations

import pytest

WAIT_FIRST = (
    "test_faults_runtimes.py",
    "test_faults_schedule.py",
    "test_certify_third_party.py",
    "test_worker_periodic.py",
    "test_faults_python_runners.py",
    "test_worker_processes.py",
    "test_postgres_upkeep.py",
    "test_soak_quick.py",
    "test_faults_loopback.py",
    "test_postgres_faults.py",
    "test_backoff_brackets.py",
    "test_worker_prefetch.py",
    "test_worker_lease.py",
    "test_postgres_deadlines.py",
)
"""Modules whose tests spend most of their time waiting, longest wait first (per-test CPU and wall, measured)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move ``WAIT_FIRST``'s tests to the front, in that order; a stable sort keeps each module's own order."""
    rank = {name: position for position, name in enumerate(WAIT_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
