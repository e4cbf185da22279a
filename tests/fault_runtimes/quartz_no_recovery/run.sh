#!/usr/bin/env bash
# The broken Quartz runner's command: the runner's classes (its build.sh), then this one class on top, in build/.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=ecosystem/quartz/runner/build.sh
source "$here/../../../ecosystem/quartz/runner/build.sh"
classpath="$(quartz_build)"
if [ ! -f "$here/build/QuartzNoRecovery.class" ] || [ "$here/QuartzNoRecovery.java" -nt "$here/build/QuartzNoRecovery.class" ] ||
    [ "$QUARTZ_BUILD/.built" -nt "$here/build/QuartzNoRecovery.class" ]; then
    mkdir -p "$here/build"
    (
        flock 9
        javac -nowarn -d "$here/build" -cp "$classpath" "$here/QuartzNoRecovery.java" >&2
    ) 9>"$here/build/.lock"
fi
exec java -cp "$here/build:$classpath" QuartzNoRecovery "$@"
