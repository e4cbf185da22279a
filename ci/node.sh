#!/usr/bin/env bash
# The Node.js engine (engines_under_test/alkstore_node) and the Node kit it shares with the Node ecosystem
# adapters (engines_under_test/node_kit): install the engine's npm packages when they are missing, check the syntax
# of both, run their unit tests. ci/test.sh calls it; its certification runs with the suite's phases.
#
#   ci/node.sh install    npm ci (or a copy of the last build for the same lock file and Node), unless node_modules
#                         already holds the built better-sqlite3; npm ci in each
#                         Node ecosystem adapter (ADAPTERS) whose node_modules is not from its lock file
#   ci/node.sh check      node --check on every source and test file, then node --test (an adapter's Postgres
#                         tests run on $ALKSTORE_PG_DSN and skip when no server answers)
#
# better-sqlite3 12 (not 13, which needs Node 22 and crashes on Node 20) is built from source by npm when
# no prebuilt binary can be fetched: about a minute of CPU once, then kept in node_modules and in the cache.
set -euo pipefail
cd "$(dirname "$0")/../engines_under_test/alkstore_node"
ADAPTERS=(../../ecosystem/graphile_worker/adapter ../../ecosystem/pgboss/adapter) # pure JS: npm ci takes seconds
case "${1:-}" in
install)
    if [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ] ||
        ! cmp -s package-lock.json node_modules/.package-lock.json.ci 2>/dev/null; then
        # The build is kept outside the checkout too, under the lock file, this Node and this machine's kind: a
        # fresh clone on the same machine copies it in a second instead of compiling SQLite for a minute.
        key="$({ cat package-lock.json; node --version; uname -m; } | sha256sum | cut -c1-16)"
        # shellcheck source=ci/cache.sh
        source ../../ci/cache.sh
        cached="$ALKSTORE_CACHE/node-engine/$key"
        rm -rf node_modules
        if [ -f "$cached/node_modules/.package-lock.json.ci" ]; then
            cp -a "$cached/node_modules" node_modules
        else
            npm ci --no-audit --no-fund --loglevel=error
            cp package-lock.json node_modules/.package-lock.json.ci
            mkdir -p "$cached"
            rm -rf "$cached/node_modules.partial"
            cp -a node_modules "$cached/node_modules.partial" && mv "$cached/node_modules.partial" "$cached/node_modules"
        fi
    fi
    node -e "require('better-sqlite3')" # a binary built for another Node fails here, not in the suite
    for adapter in "${ADAPTERS[@]}"; do
        if ! cmp -s "$adapter/package-lock.json" "$adapter/node_modules/.package-lock.json.ci" 2>/dev/null; then
            (cd "$adapter" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.package-lock.json.ci)
        fi
    done
    ;;
check)
    shopt -s nullglob # an adapter without top-level .js files (a reproduce.js) adds none
    adapter_files=()
    adapter_tests=()
    for adapter in "${ADAPTERS[@]}"; do
        adapter_files+=("$adapter"/*.js "$adapter"/src/*.js "$adapter"/test/*.js)
        adapter_tests+=("$adapter/test/")
    done
    # The engine's in-process users (a test fixture, a benchmark) too: they drive it through its handlers.
    for file in src/*.js test/*.js ../../ecosystem/kit/*.js ../../ecosystem/*/runner*/*.js ../../tests/mutants/node_*.js ../../tests/wire_testees/*.js ../../benchmarks/*.js \
        ../node_kit/src/*.js ../node_kit/test/*.js "${adapter_files[@]}"; do
        node --check "$file"
    done
    node --test test/ ../node_kit/test/ "${adapter_tests[@]}"
    ;;
*)
    echo "usage: ci/node.sh install|check" >&2
    exit 2
    ;;
esac
