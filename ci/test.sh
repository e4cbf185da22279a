#!/usr/bin/env bash
# Set up and run every check of the project: lint, types, the contract suite on every engine in
# both clock modes, the project's own tests, and the mutant catalog. Used by the README and .ci/run.
#
#   ci/test.sh            fresh venv in .venv (reused when present), install, run everything
#
# Each phase prints a header and, when it ends, its time and the time so far; the pytest phases
# longer than a few seconds show which engine, row or mutant is running and how far along they are.
# Phase 2 runs the linters and type checkers at once; phase 3 runs the suite on both clocks, the mutant catalog, the
# runtime-faults short run and the project's tests at once (each line says which run it comes from); three tests
# wait for the manual-clock run's record. Builds a fresh clone can reuse (the Node and Rust engines', mypy's cache)
# are kept under $ALKSTORE_CACHE (ci/cache.sh); a throwaway Postgres cluster copies one initdb'd data directory.
# Postgres: ci/postgres.sh finds a server that answers or starts a throwaway one; the suite runs
# with --alkstore-require, so an unreachable server fails the run instead of skipping it.
# The mutant catalog stops each mutant at its first failing row; ALKSTORE_FULL_CATALOG=1 adds the
# whole-catalog run (every row on every mutant), and `python -m tests.mutants.kill_table` writes
# docs/mutants.md from it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Python may write its bytecode caches: with PYTHONDONTWRITEBYTECODE set (some machines set it), every pytest
# process, each mutant's and each one a test starts, compiles again the modules pytest rewrites for its
# assertions (alkstore's own, hypothesis's): about 2 CPU seconds a process, over a hundred processes.
unset PYTHONDONTWRITEBYTECODE

PYTHON="${PYTHON:-python3}"
VENV="${ALKSTORE_VENV:-.venv}"
STARTED=$SECONDS
PHASE_STARTED=$SECONDS
PHASES=3

PHASE_CPU=0
CPU_MS=0
TIMES="$(mktemp)"
trap 'rm -f "$TIMES"' EXIT

cpu_ms() { # CPU_MS: the CPU time (user + system, ms) of every child this shell has waited for, so far
    times >"$TIMES" # in this shell: a subshell (a pipe, $(...)) would count its own children, none
    CPU_MS=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); total += t[1] * 60 + t[2] }
                            printf "%d\n", total * 1000 }' "$TIMES")
}

phase() { # phase N "what": print the header of phase N
    PHASE_STARTED=$SECONDS
    cpu_ms
    PHASE_CPU=$CPU_MS
    echo "== [$1/$PHASES] $2"
}

phase_done() { # the CPU time lets a run on a busy machine be compared with one on a quiet machine
    cpu_ms
    local cpu=$((CPU_MS - PHASE_CPU))
    echo "== done in $((SECONDS - PHASE_STARTED)) s, CPU $((cpu / 1000)).$((cpu % 1000 / 100)) s" \
        "($((SECONDS - STARTED)) s so far)"
}

phase 1 "venv and install ($VENV)"
# The Node engine's install compiles SQLite for a minute on a machine that has never built it (ci/node.sh keeps the
# build for the next clone): one core does that while the rest of this phase runs.
bash ci/node.sh install &
NODE_INSTALL=$!
# Debian's packages the tests need beyond what the scripts below find: beanstalkd (the beanstalkd runner's
# throwaway server), faketime and the Rust engine's crates, in one apt-get run where any is missing.
bash ci/debian.sh beanstalkd faketime librust-rusqlite-dev librust-serde-json-dev
if [ ! -x "$VENV/bin/python" ]; then
    if "$PYTHON" -m pip --version >/dev/null 2>&1; then
        # The base Python's pip puts the current pip in: venv's own (ensurepip) would be replaced at once.
        "$PYTHON" -m venv --without-pip "$VENV"
        "$PYTHON" -m pip --python "$VENV/bin/python" install --quiet --no-compile --upgrade pip uv
    else
        "$PYTHON" -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --upgrade pip uv
    fi
fi
[ -x "$VENV/bin/uv" ] || "$VENV/bin/python" -m pip install --quiet --no-compile uv
# uv installs what pip would (the same resolution of pyproject's ranges), asking the index for every package at
# once and keeping what it fetched in its cache: 12 s from a cold cache where pip took 36 s on this machine, a few
# seconds warm. pip stays in the venv: tests/test_certify_third_party.py installs an engine with it, as authors do.
# Bytecode is written when a module is first imported (uv compiles none), and most installed modules never are.
"$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" -e '.[test,faults]' # faults: the short run
bash ci/rust.sh install # the Rust engine's crates (Debian's) when missing, and its release build
ALKSTORE_PG_DSN="$(bash ci/postgres.sh)"
export ALKSTORE_PG_DSN ALKSTORE_REQUIRE=1
echo "Postgres: $ALKSTORE_PG_DSN"
ALKSTORE_FAKETIME_LIB="$(bash ci/faketime.sh)" # the skewed server of tests/test_postgres_server_clock.py
export ALKSTORE_FAKETIME_LIB
ALKSTORE_CHROMIUM="$(bash ci/chromium.sh)" # the headless browser of tests/test_ecosystem_page.py
export ALKSTORE_CHROMIUM
wait "$NODE_INSTALL" # the Node.js engine's npm packages, when node_modules lacked them
phase_done

PYTEST=("$VENV/bin/pytest" -p no:cacheprovider)
# mypy's cache outside the checkout (it checks each entry against its file's hash): a fresh clone on a machine that
# ran the checks before spends a second on types instead of ten. ci/node.sh keeps the Node engine's build there too.
# shellcheck source=ci/cache.sh
source ci/cache.sh
export MYPY_CACHE_DIR="$ALKSTORE_CACHE/mypy"

RUNS=() # "name pid", in the order they started: the manual-clock run first, so [after manual] starts when it ends
start() { # start NAME COMMAND...: run COMMAND in the background, each line of its output prefixed with [NAME]
    local name=$1
    shift
    "$@" 2>&1 | sed -u "s/^/[$name] /" &
    RUNS+=("$name $!")
}
wait_runs() { # wait for every run started, in order (after the manual-clock run, [after manual]); exit 1 if any failed
    local run name pid failed=()
    for run in "${RUNS[@]}"; do
        read -r name pid <<<"$run"
        wait "$pid" || failed+=("$name")
        if [ "$name" = manual ]; then
            "$VENV/bin/pytest" -p no:cacheprovider "${AFTER_MANUAL[@]}" 2>&1 | sed -u 's/^/[after manual] /' ||
                failed+=("after manual")
        fi
    done
    RUNS=()
    if [ "${#failed[@]}" -gt 0 ]; then
        echo "== failed: ${failed[*]} (the lines of each run start with its name in brackets)"
        exit 1
    fi
}

phase 2 "at once: ruff, mypy; the Node.js engine's node --check and node --test; the Rust engine's cargo fmt, clippy and test; the project's tests collected"
start node bash ci/node.sh check
start rust bash ci/rust.sh check
start ruff sh -c '"$1" check . && "$1" format --check .' ruff "$VENV/bin/ruff"
# Python writes a module's bytecode the first time it imports it, and phase 3 starts a dozen pytest processes at
# once, each compiling what none has written yet (a fresh venv and a fresh clone have none): five cold collections
# at once took 14.8 CPU-s here, the same five 4.5 once written. One collection of the tests here writes them
# (pytest, Hypothesis, asyncpg, the suite, the tests' assertion-rewritten modules), and a test module that does not
# import fails this phase with pytest's whole output.
start bytecode bash -c 'out=$("$@" 2>&1) || { printf "%s\n" "$out"; exit 1; }; printf "%s\n" "$out" | tail -n 1' \
    bash "${PYTEST[@]}" --collect-only -q tests
# ecosystem/: typed against pgqueuer and procrastinate where the venv has the ecosystem extra; '.[test]' alone
# lacks them, so their imports are Any there (pyproject's mypy overrides) and the adapters' own code is still checked.
start mypy "$VENV/bin/mypy" alkstore_cli alkstore_contract alkstore_worker alkstore_faults reference_engine/alkstore_sqlite engines_under_test/alkstore_mem engines_under_test/alkstore_postgres ecosystem tests tools
wait_runs
phase_done

phase 3 "everything else at once: the contract suite on both clocks ([system] sqlite, postgres (the server's clock), node, rust; [manual] sqlite, mem, postgres, sqlite-ms, postgres-base64, node, rust); [mutants] each mutant in its own pytest process, stopped at its first failing row; [faults] huey and our SQLite worker, each runtime fault once; [tests] the project's tests (tests/, but the mutants)"
# The system-clock run, the runtime-faults run and many of the project's tests mostly wait for real time to pass,
# and the runs need nothing from each other, so the manual-clock run and the mutants use the CPU meanwhile.
# The manual-clock run runs at a lower priority (nice): it never waits for real time, so it loses nothing by
# yielding the CPU to the runs that do, whose waits stretch when they get the CPU late (the system-clock run's
# tick grows with how long a Python child takes to start).
# Three of the project's tests read what the manual-clock run wrote, so they run ([after manual]) once it ends:
# - the sleeps each manual-clock row asked for are recorded: tests/test_manual_clock_does_not_sleep.py reads them
#   instead of running the suite on the manual clock once more, and fails when the record is missing;
# - the manual-clock run also certifies tests/engines/sqlite_milliseconds.py's engine, which declares 1 ms:
#   tests/test_time_resolution.py reads its verdict from the report, and fails when it is missing; so does
#   tests/test_encoded_engine.py for tests/engines/postgres_base64.py's (the Postgres engine sending its payloads
#   base64-encoded).
export ALKSTORE_MANUAL_CLOCK_SLEEPS="$PWD/reports/manual-clock-sleeps.json"
export ALKSTORE_SUITE_MANUAL_REPORT="$PWD/reports/suite-manual.json"
MS_ENGINE="tests.engines.sqlite_milliseconds:adapter"
B64_ENGINE="tests.engines.postgres_base64:adapter"
NODE_ENGINE="engines_under_test/alkstore_node/alkstore-engine.toml" # through the wire protocol (docs/wire-protocol.md)
RUST_ENGINE="engines_under_test/alkstore_rust/alkstore-engine.toml"
AFTER_MANUAL=(tests/test_manual_clock_does_not_sleep.py tests/test_time_resolution.py tests/test_encoded_engine.py)
rm -f "$ALKSTORE_MANUAL_CLOCK_SLEEPS" "$ALKSTORE_SUITE_MANUAL_REPORT"
start manual nice -n 10 "${PYTEST[@]}" -n 2 -v --alkstore-require \
    --alkstore-engine="sqlite,mem,postgres,$MS_ENGINE,$B64_ENGINE,$NODE_ENGINE,$RUST_ENGINE" \
    -p tests.manual_clock_sleeps --alkstore-sleep-record="$ALKSTORE_MANUAL_CLOCK_SLEEPS" \
    --alkstore-report="$ALKSTORE_SUITE_MANUAL_REPORT" alkstore_contract/suite/contract.suite
start system "${PYTEST[@]}" -n 2 -v --alkstore-require --alkstore-clock=system \
    --alkstore-engine="sqlite,postgres,$NODE_ENGINE,$RUST_ENGINE" alkstore_contract/suite/contract.suite
start mutants "${PYTEST[@]}" -n 2 -v --maxschedchunk=1 --durations=5 tests/test_mutants.py
start faults bash ci/faults.sh short # huey, each runtime fault once (docs/runtime-faults.md)
# In collection order, so the tests that mostly wait go first (tests/conftest.py), one test at a time to whichever
# worker is free (--maxschedchunk=1): xdist's load scheduling otherwise hands the first worker the first quarter of
# the list at once, every waiting test with it, and the second worker finished at 113 s while the first ran to 224 s.
start tests "${PYTEST[@]}" -n 2 --maxschedchunk=1 --durations=5 --ignore=tests/test_mutants.py "${AFTER_MANUAL[@]/#/--ignore=}" tests
wait_runs
phase_done
echo "== all checks passed in $((SECONDS - STARTED)) s"
