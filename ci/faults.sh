#!/usr/bin/env bash
# The runtime-faults mode (docs/runtime-faults.md): judge queue libraries through their own workers.
#
#   ci/faults.sh install   the runners' libraries: the '.[faults]' extra in the venv (RQ, huey, Dramatiq, arq, saq,
#                          greenstalk), Celery in .venv-celery (celery[redis] needs redis>=6.4, arq needs redis<6, so
#                          they cannot share a venv; the Celery manifests name it as {python:celery}), taskiq in
#                          .venv-taskiq (taskiq-redis needs redis>=8; {python:taskiq}), Debian's beanstalkd, chancy in
#                          .venv-chancy and oban in .venv-oban (psycopg 3 and its pool, pinned apart from the ecosystem
#                          extra; oban needs Python 3.12 or later, found by python_for_oban),
#                          the Node runners' npm packages (npm ci in ecosystem/{bullmq,pgboss,graphile_worker}/runner),
#                          and the Ruby runners' Debian packages (RUBY_PACKAGES: Ruby 3.1, Sidekiq, gitlab-sidekiq-fetcher,
#                          delayed_job with ActiveRecord on Postgres; no gem repository is needed),
#                          and Quartz's runner: Debian's JDK and jars by package name (no Maven repository is
#                          reached), then its classes compiled with javac (ecosystem/quartz/runner/build.sh)
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
LIBRARIES=(alkstore_sqlite alkstore_postgres huey rq dramatiq arq celery_redis celery_rabbitmq bullmq procrastinate pgqueuer pgboss graphile_worker
    sidekiq sidekiq_reliable_fetch delayed_job chancy oban quartz beanstalkd saq taskiq)
RUBY_PACKAGES=(ruby ruby-sidekiq ruby-gitlab-sidekiq-fetcher ruby-delayed-job ruby-delayed-job-active-record ruby-activerecord
    ruby-pg)
JAVA_PACKAGES=(default-jdk-headless libquartz2-java libpostgresql-jdbc-java)
log() { echo "ci/faults.sh: $*" >&2; }
# shellcheck source=ci/as_root.sh
source ci/as_root.sh # apt_install PACKAGE...: Debian's packages, as root

# oban's Requires-Python is >=3.12: $ALKSTORE_OBAN_PYTHON, else the first python3.13/python3.12 that runs, else one
# of pyenv's versions 3.12 and later (Debian 12's own python3 is 3.11 and it packages no newer one).
python_for_oban() {
    local candidate pyenv_root
    pyenv_root="$(pyenv root 2>/dev/null || true)"
    for candidate in "${ALKSTORE_OBAN_PYTHON:-}" python3.13 python3.12 ${pyenv_root:+"$pyenv_root"/versions/3.1[2-9]*/bin/python}; do
        [ -n "$candidate" ] || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
case "${1:-}" in
install)
    "$VENV/bin/python" -m pip install --quiet --no-compile -e '.[test,faults,ecosystem]'
    if [ ! -x "$CELERY_VENV/bin/python" ]; then
        python3 -m venv "$CELERY_VENV"
    fi
    "$CELERY_VENV/bin/python" -m pip install --quiet --no-compile -e '.[faults-celery]'
    if [ ! -x .venv-chancy/bin/python ]; then
        python3 -m venv .venv-chancy
    fi
    .venv-chancy/bin/python -m pip install --quiet --no-compile -e '.[faults-chancy]'
    if [ ! -x .venv-oban/bin/python ]; then
        if ! oban_python="$(python_for_oban)"; then
            echo "ci/faults.sh: oban needs Python 3.12 or later, none found (set ALKSTORE_OBAN_PYTHON)" >&2
            exit 1
        fi
        "$oban_python" -m venv .venv-oban
    fi
    .venv-oban/bin/python -m pip install --quiet --no-compile -e '.[faults-oban]'
    if [ ! -x .venv-taskiq/bin/python ]; then
        python3 -m venv .venv-taskiq
    fi
    .venv-taskiq/bin/python -m pip install --quiet --no-compile -e '.[faults-taskiq]'
    for runner in bullmq pgboss graphile_worker; do
        (cd "ecosystem/$runner/runner" && npm ci --no-audit --no-fund --loglevel=error)
    done
    # The Ruby runners (ecosystem/sidekiq, ecosystem/delayed_job), the beanstalkd runner's throwaway server
    # (ecosystem/beanstalkd), Quartz's runner (ecosystem/quartz; its classes are compiled below): one apt-get run.
    apt_install "${RUBY_PACKAGES[@]}" beanstalkd "${JAVA_PACKAGES[@]}"
    bash ecosystem/quartz/runner/build.sh
    ;;
short)
    if ! command -v redis-server >/dev/null 2>&1; then # huey's throwaway broker: Debian's redis-server
        apt_install redis-server
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
    # The broken copies of runners whose check is a whole kill9 run (tests/full_matrix.py): the test command skips them.
    ALKSTORE_FAULTS_FULL=1 "$VENV/bin/pytest" -q -p no:cacheprovider tests/test_faults_ruby_runners.py \
        tests/test_faults_java_runners.py || status=1
    exit "$status"
    ;;
*)
    echo "usage: ci/faults.sh install|short|full" >&2
    exit 2
    ;;
esac
