"""Our own Postgres engine's side of its runner: ``alkstore_faults.ours``'s app on the run's throwaway cluster."""

from __future__ import annotations

import os

from alkstore_postgres import PostgresSource

from alkstore_faults.ours import app_over

app, run_job = app_over(PostgresSource(os.environ.get("ALKSTORE_FAULTS_BROKER", ""), schema="alkstore_faults"))
