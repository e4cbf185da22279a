#!/usr/bin/env bash
# Print the path of libfaketime, installing Debian's faketime package when it is missing.
#
#   ci/faketime.sh      print the library's path (stdout carries only the path; logs go to stderr)
#
# The Postgres adapter's skewed-server hook (engines_under_test/alkstore_postgres/provision_skewed.py) starts a
# throwaway cluster with this library preloaded (FAKETIME=+7200), so the server's clock runs two hours
# ahead of the client's: the suite's server_clock row (contract T3) and tests/test_postgres_server_clock.py
# use it; without it that row is "not run here", and a failure under --alkstore-require. The
# package is installed with apt-get as root, or through sudo -n when not root. Typical use:
#   export ALKSTORE_FAKETIME_LIB="$(bash ci/faketime.sh)"
set -euo pipefail

exec 3>&1 1>&2 # fd 3 is the real stdout, for the path alone

log() { echo "ci/faketime.sh: $*" >&2; }

find_lib() {
    local lib
    for lib in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
        if [ -f "$lib" ]; then
            echo "$lib"
            return
        fi
    done
}

ROOT_HINT="install Debian's faketime package yourself"
case "$0" in */*) ci_dir="${0%/*}" ;; *) ci_dir=. ;; esac # builtins only: PATH may hold nothing else
# shellcheck source=ci/as_root.sh
source "$ci_dir/as_root.sh"

lib="$(find_lib)"
if [ -z "$lib" ]; then
    log "libfaketime not found: installing Debian's faketime package"
    apt_install faketime
    lib="$(find_lib)"
fi
[ -n "$lib" ] || { log "no libfaketime even after installing faketime"; exit 1; }
log "using $lib"
echo "$lib" >&3
