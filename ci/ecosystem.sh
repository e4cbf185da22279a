#!/usr/bin/env bash
# The ecosystem matrix, rerun: every engine of docs/ecosystem/notes.json certified 3 times into
# docs/ecosystem/reports/ (ENGINE-RUN.json), the libraries with their expected-failures files, then
# docs/ecosystem.md and docs/ecosystem.html rebuilt by `alkstore matrix`. Not part of ci/test.sh: it
# takes a quarter of an hour on a quiet machine. The scheduled workflow (.github/workflows/ecosystem.yml)
# runs it; a library upgrade that changes a verdict makes its certify runs exit 1 and the job red.
#
#   ALKSTORE_PG_DSN=postgresql://postgres@127.0.0.1:5432/postgres bash ci/ecosystem.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export ALKSTORE_PG_DSN="${ALKSTORE_PG_DSN:-postgresql://postgres@127.0.0.1:5432/postgres}"
out=docs/ecosystem/reports
node_manifest="$PWD/engines_under_test/alkstore_node/alkstore-engine.toml"
rust_manifest="$PWD/engines_under_test/alkstore_rust/alkstore-engine.toml"
graphile_manifest="$PWD/ecosystem/alkstore_graphile/alkstore-engine.toml"
pgboss_manifest="$PWD/ecosystem/alkstore_pgboss/alkstore-engine.toml"
status=0
bash ci/node.sh install
bash ci/rust.sh install
# postgres's T3 (row server_clock) runs on a throwaway cluster under libfaketime; without it, "not run here".
ALKSTORE_FAKETIME_LIB="$(bash ci/faketime.sh)" && export ALKSTORE_FAKETIME_LIB
for run in 1 2 3; do
    for engine in sqlite mem postgres node-sqlite rust-sqlite pgqueuer procrastinate pg-boss graphile-worker; do
        spec=$engine
        extra=()
        pytest_args=()
        [ "$engine" = node-sqlite ] && spec=$node_manifest
        [ "$engine" = rust-sqlite ] && spec=$rust_manifest
        case $engine in pgqueuer | procrastinate | pg-boss)
            extra=(--xfail-file "ecosystem/alkstore_${engine//-/}/expected-failures.txt") ;;
        graphile-worker)
            spec=$graphile_manifest
            extra=(--xfail-file ecosystem/alkstore_graphile/expected-failures.txt) ;;
        esac
        # pg-boss's leases, delays and retentions are whole seconds: its expected failures hold at a 1 s tick.
        [ "$engine" = pg-boss ] && spec=$pgboss_manifest && pytest_args=(-- --alkstore-tick=1.0)
        alkstore certify "$spec" "${extra[@]}" --report "$out/$engine-$run.json" "${pytest_args[@]}" > /dev/null || {
            echo "ci/ecosystem.sh: $engine run $run exited $? (see $out/$engine-$run.json)" >&2
            status=1
        }
    done
done
alkstore matrix || status=1
bash ci/faults.sh install && bash ci/faults.sh full || status=1 # runtime faults (docs/runtime-faults.md)
exit $status
