#!/usr/bin/env bash
# The runtime-faults mode (docs/runtime-faults.md): judge queue libraries through their own workers.
#
#   ci/faults.sh install   the runners' libraries: the '.[faults]' extra in the venv (RQ, huey, Dramatiq, arq),
#                          Celery in .venv-celery (celery[redis] needs redis>=6.4, arq needs redis<6, so they
#                          cannot share a venv; the Celery manifests name it as {python:celery}), and
#                          the Node runners' npm packages (npm ci in ecosystem/{bullmq,pgboss,graphile_worker}/runner)
#   ci/faults.sh short     each fault once on huey (a Redis library: a throwaway redis-server of its own) and on
#                          our SQLite engine through `alkstore worker`, both at once (they mostly wait)
#   ci/faults.sh full      the whole matrix, every fault three times per library, reports in reports/faults/;
#                          then the schedule workload of the runners that serve it (reports/faults/schedule/)
#
# Needs redis-server and rabbitmq-server on the machine (short installs Debian's redis-server when missing):
# the harness starts throwaway ones of its own and never touches the shared services.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ALKSTORE_VENV:-.venv}"
CELERY_VENV=".venv-celery"
SCHEDULES=(alkstore_sqlite alkstore_postgres arq procrastinate celery_redis)
LIBRARIES=(alkstore_sqlite alkstore_postgres huey rq dramatiq arq celery_redis celery_rabbitmq bullmq procrastinate pgqueuer pgboss graphile_worker)
case "${1:-}" in
install)
    "$VENV/bin/python" -m pip install --quiet --no-compile -e '.[test,faults,ecosystem]'
    if [ ! -x "$CELERY_VENV/bin/python" ]; then
        python3 -m venv "$CELERY_VENV"
    fi
    "$CELERY_VENV/bin/python" -m pip install --quiet --no-compile -e '.[faults-celery]'
    for runner in bullmq pgboss graphile_worker; do
        (cd "ecosystem/$runner/runner" && npm ci --no-audit --no-fund --loglevel=error)
    done
    ;;
short)
    if ! command -v redis-server >/dev/null 2>&1; then # huey's throwaway broker: Debian's redis-server
        log() { echo "ci/faults.sh: $*" >&2; }
        ROOT_HINT="apt-get install redis-server"
        # shellcheck source=ci/as_root.sh
        source ci/as_root.sh
        as_root apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
        as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
            --no-install-recommends redis-server >/dev/null
    fi
    "$VENV/bin/alkstore" faults alkstore_sqlite --short --report reports/faults/alkstore_sqlite-short.json 2>&1 |
        sed -u 's/^/[alkstore_sqlite] /' &
    sqlite_run=$!
    status=0
    "$VENV/bin/alkstore" faults huey --short --report reports/faults/huey-short.json 2>&1 | sed -u 's/^/[huey] /' ||
        status=1
    wait "$sqlite_run" || status=1
    exit "$status"
    ;;
full)
    status=0
    for library in "${LIBRARIES[@]}"; do
        "$VENV/bin/alkstore" faults "$library" --report "reports/faults/$library.json" || status=1
    done
    for library in "${SCHEDULES[@]}"; do
        "$VENV/bin/alkstore" faults "$library" --workload schedule --report "reports/faults/schedule/$library.json" ||
            status=1
    done
    exit "$status"
    ;;
*)
    echo "usage: ci/faults.sh install|short|full" >&2
    exit 2
    ;;
esac
