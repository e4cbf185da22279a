"""Our own SQLite engine's side of its runner: ``alkstore_faults.ours``'s app on a file in the run's directory."""

from __future__ import annotations

import os
from pathlib import Path

from alkstore_sqlite import SqliteSource

from alkstore_faults.ours import app_over

app, run_job = app_over(SqliteSource(Path(os.environ.get("ALKSTORE_FAULTS_BROKER", ".")) / "alkstore.sqlite3"))
