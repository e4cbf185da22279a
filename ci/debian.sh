#!/usr/bin/env bash
# Install, in one apt-get run, those of the named Debian packages that dpkg does not have. ci/test.sh's phase 1
# runs it for what the test command needs beyond Python and Node's registries; each script that uses one of
# them (ci/faketime.sh, ci/rust.sh) still installs its own when run alone.
#
#   bash ci/debian.sh PACKAGE...
#
# A fresh machine pays one refresh of the package lists instead of one per script; a machine that has them
# all pays a dpkg query.
set -euo pipefail
log() { echo "ci/debian.sh: $*" >&2; }
case "$0" in */*) ci_dir="${0%/*}" ;; *) ci_dir=. ;; esac
# shellcheck source=ci/as_root.sh
source "$ci_dir/as_root.sh"

missing=()
for package in "$@"; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt_install "${missing[@]}"
fi
