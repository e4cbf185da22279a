#!/usr/bin/env bash
# One cell of the CI matrix: certify ENGINE with every row, under the manual and the system clock
# (mem: the manual clock only).
#
#   ci/suite.sh ENGINE        (run inside an environment where alkstore[test] is installed)
#
# Postgres comes from $ALKSTORE_PG_DSN (a service container in GitHub Actions) or ci/postgres.sh.
# --alkstore-require turns an unreachable server into a failure: CI never skips silently.
set -euo pipefail
cd "$(dirname "$0")/.."
engine="${1:?usage: ci/suite.sh ENGINE}"
if [ "$engine" = postgres ] && [ -z "${ALKSTORE_PG_DSN:-}" ]; then
    ALKSTORE_PG_DSN="$(bash ci/postgres.sh)"
    export ALKSTORE_PG_DSN
fi
mkdir -p reports
pytest -p no:cacheprovider -n 2 --alkstore-require --alkstore-engine="$engine" --alkstore-clock=manual \
    --alkstore-report="reports/$engine-manual.json" alkstore_contract/suite/contract.suite
if [ "$engine" != mem ]; then
    pytest -p no:cacheprovider -n 2 --alkstore-require --alkstore-engine="$engine" --alkstore-clock=system \
        --alkstore-report="reports/$engine-system.json" alkstore_contract/suite/contract.suite
fi
