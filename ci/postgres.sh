#!/usr/bin/env bash
# Print the DSN of a Postgres server that answers, starting a throwaway one when none does.
#
#   ci/postgres.sh          print a DSN (stdout carries only the DSN; logs go to stderr)
#   ci/postgres.sh stop     stop and delete the throwaway cluster this script started, if any
#
# Order: $ALKSTORE_PG_DSN if it answers; else postgresql://postgres@127.0.0.1:$PORT/postgres
# ($ALKSTORE_PG_PROBE_PORT, default 5432) if it answers; else a throwaway cluster this script
# started earlier, if it still answers; else install Debian's postgresql package when initdb is
# missing (as root, or through sudo when not root), initdb a cluster in a temp dir (trust auth,
# superuser "postgres"), start it with pg_ctl on a free loopback port and print its DSN. psql is
# needed to probe a server, so a machine without it gets the package first. Typical use:
#   export ALKSTORE_PG_DSN="$(ci/postgres.sh)"
#
# Knobs: ALKSTORE_PG_PROBE_PORT (the default port probed), ALKSTORE_PG_STATE_DIR (where the
# throwaway cluster is recorded; default ${TMPDIR:-/tmp}/alkstore-postgres).
set -euo pipefail

exec 3>&1 1>&2 # fd 3 is the real stdout, for the DSN alone; everything else goes to stderr

PROBE_PORT="${ALKSTORE_PG_PROBE_PORT:-5432}"
STATE_DIR="${ALKSTORE_PG_STATE_DIR:-${TMPDIR:-/tmp}/alkstore-postgres}"
STATE_FILE="$STATE_DIR/cluster"
CONNECT_TIMEOUT=5

log() { echo "ci/postgres.sh: $*" >&2; }

emit() {
    log "using $1"
    echo "$1" >&3
}

answers() {
    [ -n "$1" ] && command -v psql >/dev/null 2>&1 &&
        PGCONNECT_TIMEOUT="$CONNECT_TIMEOUT" psql "$1" -XAtqw -c 'select 1' >/dev/null 2>&1
}

pg_bindir() {
    local dir
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir
        return
    fi
    dir="$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
    fi
}

ROOT_HINT="install Debian's postgresql package (psql, initdb) yourself"
case "$0" in */*) ci_dir="${0%/*}" ;; *) ci_dir=. ;; esac # builtins only: PATH may hold nothing else
# shellcheck source=ci/as_root.sh
source "$ci_dir/as_root.sh"

install_postgres() {
    log "$1: installing Debian's postgresql package"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
}

port_is_free() {
    ! (exec 9<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
    local port tries
    for tries in $(seq 1 200); do
        port=$((20000 + RANDOM % 40000))
        if port_is_free "$port"; then
            echo "$port"
            return
        fi
    done
    log "no free loopback port found after $tries tries"
    return 1
}

# Run a server binary as the cluster's owner: initdb and postgres refuse to run as root.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start_throwaway() {
    local bindir base port dsn
    bindir="$(pg_bindir)"
    if [ -z "$bindir" ]; then
        install_postgres "initdb not found"
        bindir="$(pg_bindir)"
    fi
    [ -n "$bindir" ] || { log "no initdb even after installing postgresql"; return 1; }
    base="$(mktemp -d "${TMPDIR:-/tmp}/alkstore-pg.XXXXXX")"
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$base"
    fi
    port="$(free_port)"
    log "initdb in $base/data ($bindir)"
    as_owner "$bindir/initdb" -D "$base/data" -U postgres --auth=trust -E UTF8 --no-locale
    log "starting a throwaway server on 127.0.0.1:$port"
    # fd 3 closed and stdin from /dev/null: the server outlives this script and must not hold the
    # caller's pipes open, or "$(ci/postgres.sh)" would wait for it forever.
    as_owner "$bindir/pg_ctl" -D "$base/data" -l "$base/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $base -c max_connections=300" start 3>&- </dev/null
    dsn="postgresql://postgres@127.0.0.1:$port/postgres"
    mkdir -p "$STATE_DIR"
    printf '%s\n%s\n%s\n' "$base" "$bindir" "$dsn" >"$STATE_FILE"
    for _ in $(seq 1 30); do
        if answers "$dsn"; then
            emit "$dsn"
            return
        fi
        sleep 1
    done
    log "the throwaway server does not answer; its log:"
    cat "$base/server.log" >&2 || true
    return 1
}

recorded() {
    # Line $1 of the state file: 1 the cluster's base dir, 2 the bin dir, 3 the DSN.
    [ -f "$STATE_FILE" ] && sed -n "${1}p" "$STATE_FILE"
}

stop_throwaway() {
    local base bindir
    if [ ! -f "$STATE_FILE" ]; then
        log "no throwaway cluster recorded in $STATE_FILE: nothing to stop"
        return
    fi
    base="$(recorded 1)"
    bindir="$(recorded 2)"
    if [ -d "$base/data" ]; then
        log "stopping the throwaway server in $base"
        as_owner "$bindir/pg_ctl" -D "$base/data" -m fast -w stop || true
    fi
    case "$base" in
    */alkstore-pg.*) rm -rf "$base" ;;
    *) log "not deleting unexpected directory $base" ;;
    esac
    rm -f "$STATE_FILE"
}

main() {
    local default_dsn="postgresql://postgres@127.0.0.1:$PROBE_PORT/postgres"
    if [ "${1:-}" = stop ]; then
        stop_throwaway
        return
    fi
    if [ -n "${1:-}" ]; then
        log "unknown argument $1 (usage: ci/postgres.sh [stop])"
        return 2
    fi
    if ! command -v psql >/dev/null 2>&1; then
        install_postgres "psql not found (needed to probe servers)"
    fi
    if [ -n "${ALKSTORE_PG_DSN:-}" ]; then
        if answers "$ALKSTORE_PG_DSN"; then
            emit "$ALKSTORE_PG_DSN"
            return
        fi
        log "\$ALKSTORE_PG_DSN does not answer: $ALKSTORE_PG_DSN"
    fi
    if answers "$default_dsn"; then
        emit "$default_dsn"
        return
    fi
    log "$default_dsn does not answer"
    if [ -f "$STATE_FILE" ]; then
        if answers "$(recorded 3)"; then
            log "reusing the throwaway server started earlier"
            emit "$(recorded 3)"
            return
        fi
        log "the throwaway server recorded in $STATE_FILE is gone: cleaning it up"
        stop_throwaway
    fi
    start_throwaway
}

main "$@"
