"""The mark of a test that runs a whole fault against a library's own worker: a minute or more of real time.

The README's test command skips such a test, naming where it runs: ``bash ci/faults.sh full`` (the full matrix,
which installs every runner's language and library) sets ``ALKSTORE_FAULTS_FULL=1`` and runs them. A skip is never a
pass: the reason says which command runs the check.
"""

from __future__ import annotations

import os

import pytest

full_matrix_only = pytest.mark.skipif(
    os.environ.get("ALKSTORE_FAULTS_FULL") != "1",
    reason="a whole kill9 run of a library's worker (a minute or more): bash ci/faults.sh full runs it "
    "(ALKSTORE_FAULTS_FULL=1)",
)
