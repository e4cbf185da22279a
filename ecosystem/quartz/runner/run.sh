#!/usr/bin/env bash
# The Quartz runner's command (runner.json): builds the classes when a source changed (build.sh), then replaces
# itself with the JVM, so the harness's signals reach Quartz's scheduler itself.
set -euo pipefail
# shellcheck source=ecosystem/quartz/runner/build.sh
source "$(dirname "${BASH_SOURCE[0]}")/build.sh"
classpath="$(quartz_build)"
exec java -cp "$classpath" QuartzRunner "$@"
