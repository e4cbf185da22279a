#!/usr/bin/env bash
# The Node.js engine (engines_under_test/alkstore_node) and the Node kit it shares with the Node ecosystem
# adapters (ecosystem/node_kit): install the engine's npm packages when they are missing, check the syntax
# of both, run their unit tests. ci/test.sh calls it; its certification runs with the suite's phases.
#
#   ci/node.sh install    npm ci, unless node_modules already holds the built better-sqlite3
#   ci/node.sh check      node --check on every source and test file, then node --test
#
# better-sqlite3 12 (not 13, which needs Node 22 and crashes on Node 20) is built from source by npm when
# no prebuilt binary can be fetched: about a minute of CPU once, then kept in node_modules.
set -euo pipefail
cd "$(dirname "$0")/../engines_under_test/alkstore_node"
case "${1:-}" in
install)
    if [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ] ||
        ! cmp -s package-lock.json node_modules/.package-lock.json.ci 2>/dev/null; then
        npm ci --no-audit --no-fund --loglevel=error
        cp package-lock.json node_modules/.package-lock.json.ci
    fi
    node -e "require('better-sqlite3')" # a binary built for another Node fails here, not in the suite
    (cd ../../ecosystem/alkstore_pgboss && npm ci --no-audit --no-fund --loglevel=error) # pure JS: seconds
    ;;
check)
    for file in src/*.js test/*.js ../../tests/mutants/node_*.js ../../ecosystem/node_kit/src/*.js ../../ecosystem/node_kit/test/*.js \
        ../../ecosystem/alkstore_pgboss/src/*.js ../../ecosystem/alkstore_pgboss/test/*.js ../../ecosystem/alkstore_pgboss/reproduce.js; do
        node --check "$file"
    done
    node --test test/ ../../ecosystem/node_kit/test/ ../../ecosystem/alkstore_pgboss/test/
    ;;
*)
    echo "usage: ci/node.sh install|check" >&2
    exit 2
    ;;
esac
