#!/usr/bin/env bash
# The ecosystem matrix, rerun: every engine of docs/ecosystem/notes.json certified 3 times into
# docs/ecosystem/reports/ (ENGINE-RUN.json), the libraries with their expected-failures files; then each
# library's standalone reproductions (the library's own API in its own language, separate worker processes,
# nothing of alkstore), whose output is checked; then docs/ecosystem.md and docs/ecosystem.html rebuilt by
# `python -m tools.ecosystem_page`. Not part of ci/test.sh: it takes a quarter of an hour on a quiet
# machine. The scheduled workflow (.github/workflows/ecosystem.yml) runs it; a library upgrade that changes a verdict makes its certify
# runs exit 1, and one that changes a reproduced behaviour makes its reproduction fail: the job goes red.
#
#   ALKSTORE_PG_DSN=postgresql://postgres@127.0.0.1:5432/postgres bash ci/ecosystem.sh
#
# ALKSTORE_ECOSYSTEM_ENGINES (default: every engine) and ALKSTORE_ECOSYSTEM_RUNS (default 3; 0 runs only the
# reproductions and the pages) narrow a rerun, e.g. to the libraries after an adapter change;
# ALKSTORE_ECOSYSTEM_FAULTS=0 leaves out the runtime-faults full run at the end (an hour and more on its own).
set -uo pipefail
cd "$(dirname "$0")/.."
export ALKSTORE_PG_DSN="${ALKSTORE_PG_DSN:-postgresql://postgres@127.0.0.1:5432/postgres}"
ENGINES="${ALKSTORE_ECOSYSTEM_ENGINES:-sqlite mem postgres node-sqlite rust-sqlite pgqueuer procrastinate pg-boss graphile-worker}"
RUNS="${ALKSTORE_ECOSYSTEM_RUNS:-3}"
out=docs/ecosystem/reports
node_manifest="$PWD/engines_under_test/alkstore_node/alkstore-engine.toml"
rust_manifest="$PWD/engines_under_test/alkstore_rust/alkstore-engine.toml"
graphile_manifest="$PWD/ecosystem/graphile_worker/adapter/alkstore-engine.toml"
pgboss_manifest="$PWD/ecosystem/pgboss/adapter/alkstore-engine.toml"
# The Python reproductions run with the interpreter of the `alkstore` on PATH (the venv with the ecosystem extra).
python="$(dirname "$(command -v alkstore)")/python"
status=0
# Each toolchain only when an engine of the run needs it (the Rust build is slow).
case " $ENGINES " in *" node-sqlite "* | *" pg-boss "* | *" graphile-worker "*) bash ci/node.sh install ;; esac
case " $ENGINES " in *" rust-sqlite "*) bash ci/rust.sh install ;; esac
# postgres's T3 (row server_clock) runs on a throwaway cluster under libfaketime; without it, "not run here".
ALKSTORE_FAKETIME_LIB="$(bash ci/faketime.sh)" && export ALKSTORE_FAKETIME_LIB
for run in $(seq 1 "$RUNS"); do
    for engine in $ENGINES; do
        spec=$engine
        extra=()
        pytest_args=()
        [ "$engine" = node-sqlite ] && spec=$node_manifest
        [ "$engine" = rust-sqlite ] && spec=$rust_manifest
        case $engine in pgqueuer | procrastinate)
            extra=(--xfail-file "ecosystem/$engine/adapter/alkstore_$engine/expected-failures.txt") ;;
        pg-boss)
            extra=(--xfail-file ecosystem/pgboss/adapter/expected-failures.txt) ;;
        graphile-worker)
            spec=$graphile_manifest
            extra=(--xfail-file ecosystem/graphile_worker/adapter/expected-failures.txt) ;;
        esac
        # pg-boss's leases, delays and retentions are whole seconds: its expected failures hold at a 1 s tick.
        [ "$engine" = pg-boss ] && spec=$pgboss_manifest && pytest_args=(-- --alkstore-tick=1.0)
        alkstore certify "$spec" "${extra[@]}" --report "$out/$engine-$run.json" "${pytest_args[@]}" > /dev/null || {
            echo "ci/ecosystem.sh: $engine run $run exited $? (see $out/$engine-$run.json)" >&2
            status=1
        }
    done
done

# reproduce NAME COUNT COMMAND...: run a library's standalone reproduction (5 minutes at most); it passes when it
# exits 0 and prints exactly COUNT `REPRODUCED:` lines and no `NOT REPRODUCED:` line. Its output is shown.
reproduce() {
    local name=$1 count=$2 output code
    shift 2
    echo "== reproduction: $name ($*)"
    output="$(timeout 300 "$@" 2>&1)"
    code=$?
    echo "$output"
    if [ "$code" -ne 0 ] || [ "$(grep -c '^REPRODUCED: ' <<<"$output")" -ne "$count" ] || grep -q '^NOT REPRODUCED: ' <<<"$output"; then
        echo "ci/ecosystem.sh: $name's reproduction did not show what docs/ecosystem.md says (exit $code)" >&2
        status=1
    fi
}
for engine in $ENGINES; do
    case $engine in
    pgqueuer)
        reproduce pgqueuer 3 "$python" ecosystem/pgqueuer/adapter/alkstore_pgqueuer/reproduce_pause.py
        reproduce pgqueuer 2 "$python" ecosystem/pgqueuer/adapter/alkstore_pgqueuer/reproduce_dedupe.py
        ;;
    procrastinate)
        reproduce procrastinate 3 "$python" ecosystem/procrastinate/adapter/alkstore_procrastinate/reproduce_pause.py
        reproduce procrastinate 1 "$python" ecosystem/procrastinate/adapter/alkstore_procrastinate/reproduce_queueing_lock.py
        reproduce procrastinate 1 "$python" ecosystem/procrastinate/runner/reproduce_periodic.py # schedule workload
        ;;
    pg-boss)
        reproduce pg-boss 4 node ecosystem/pgboss/adapter/reproduce_workers.js
        reproduce pg-boss 1 node ecosystem/pgboss/adapter/reproduce_restart.js # a throwaway cluster of its own
        reproduce pg-boss 2 node ecosystem/pgboss/adapter/reproduce_singleton_key.js
        ;;
    graphile-worker)
        reproduce graphile-worker 1 node ecosystem/graphile_worker/adapter/reproduce.js
        reproduce graphile-worker 2 node ecosystem/graphile_worker/adapter/reproduce_job_key.js
        ;;
    esac
done
"$python" -m tools.ecosystem_page || status=1
if [ "${ALKSTORE_ECOSYSTEM_FAULTS:-1}" != 0 ]; then
    if bash ci/faults.sh install; then # runtime faults (docs/runtime-faults.md)
        # Quartz's reproduction: the JDK and Debian's jars that the install brings, run as one source file
        reproduce quartz 1 java -cp /usr/share/java/quartz2.jar:/usr/share/java/c3p0.jar:/usr/share/java/postgresql.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-simple.jar ecosystem/quartz/ReproduceFirstCheckin.java
        # saq is in the '.[faults]' extra; the reproduction starts a redis-server of its own
        reproduce saq 1 "$python" ecosystem/saq/reproduce_startup_sweep.py
        # taskiq-redis needs redis>=8: .venv-taskiq, made by the install above
        reproduce taskiq 1 .venv-taskiq/bin/python ecosystem/taskiq/reproduce_pending_claim.py
        bash ci/faults.sh full || status=1
    else
        status=1
    fi
fi
exit $status
