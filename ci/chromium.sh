#!/usr/bin/env bash
# Headless Chromium for the page tests (tests/test_ecosystem_page.py): Debian's `chromium`, installed with
# apt-get when missing (as root directly, else through `sudo -n`, as ci/postgres.sh does), its path printed on
# stdout. ci/test.sh's phase 1 runs it.
#
#   bash ci/chromium.sh                    install when missing, print the binary's path
#   bash ci/chromium.sh screenshot HTML PNG   and write a screenshot of the page HTML to PNG (one launch)
#
# Exits 1, saying why on stderr, when Chromium is missing and cannot be installed.
set -euo pipefail

chromium_path() {
    # Debian's chromium first; a GitHub runner (Ubuntu, where `chromium` is a snap) has Google Chrome instead.
    for candidate in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome /usr/bin/google-chrome-stable; do
        if [ -x "$candidate" ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

if ! chromium_path >/dev/null; then
    log() { echo "ci/chromium.sh: $*" >&2; }
    case "$0" in */*) ci_dir="${0%/*}" ;; *) ci_dir=. ;; esac
    # shellcheck source=ci/as_root.sh
    source "$ci_dir/as_root.sh"
    log "installing chromium (apt-get)"
    apt_install chromium
fi
binary="$(chromium_path)" || { echo "ci/chromium.sh: apt-get ran but no chromium binary is on disk" >&2; exit 1; }

if [ "${1:-}" = screenshot ]; then
    html="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
    png="$3"
    profile="$(mktemp -d)"
    trap 'rm -rf "$profile"' EXIT
    timeout 120 "$binary" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --window-size=1600,1200 --screenshot="$png" "file://$html" >/dev/null 2>&1
    [ -s "$png" ] || { echo "ci/chromium.sh: chromium wrote no screenshot to $png" >&2; exit 1; }
fi
echo "$binary"
