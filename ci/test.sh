#!/usr/bin/env bash
# Set up and run every check of the project: lint, types, the project's own tests, and the
# contract suite on every engine (Postgres in both clock modes). Used by the README and .ci/run.
#
#   ci/test.sh            fresh venv in .venv (reused when present), install, run everything
#
# Postgres: ci/postgres.sh finds a server that answers or starts a throwaway one; the suite runs
# with --alkstore-require, so an unreachable server fails the run instead of skipping it.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV="${ALKSTORE_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e '.[test]'

ALKSTORE_PG_DSN="$(bash ci/postgres.sh)"
export ALKSTORE_PG_DSN ALKSTORE_REQUIRE=1
echo "== Postgres: $ALKSTORE_PG_DSN"

echo "== ruff, mypy"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
"$VENV/bin/mypy" alkstore_contract reference_engine/alkstore_sqlite engines_under_test/alkstore_mem engines_under_test/alkstore_postgres tests

echo "== the contract suite, system clock (sqlite, postgres on the server's clock)"
"$VENV/bin/pytest" -p no:cacheprovider -n 2 --alkstore-require --alkstore-clock=system \
    --alkstore-engine=sqlite,postgres alkstore_contract/contract.suite

echo "== the project's tests and the contract suite on every engine, manual clock"
"$VENV/bin/pytest" -p no:cacheprovider -n 2 --dist loadgroup --alkstore-require --alkstore-engine=sqlite,mem,postgres \
    --alkstore-report=reports/suite-manual.json tests
