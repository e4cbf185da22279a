#!/usr/bin/env bash
# Compiles the Quartz runner and the Java side of the runner protocol (../../kit/RunnerProtocol.java) into build/
# (git-ignored) with javac against Debian's jars, since no Maven repository is reachable. Sourced by run.sh, which
# builds when a source is newer than the classes; run alone (bash build.sh) it builds, as ci/faults.sh install does.
# A jar that is missing is named in one line with the Debian package that ships it.
set -euo pipefail
QUARTZ_RUNNER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
QUARTZ_BUILD="$QUARTZ_RUNNER/build"
# Each jar the runner needs, with its Debian package: Quartz, its default connection pool (c3p0), the Postgres
# driver, and SLF4J with its simple binding (Quartz's log on the worker's stderr).
QUARTZ_JARS=(
    /usr/share/java/quartz2.jar:libquartz2-java
    /usr/share/java/c3p0.jar:libc3p0-java
    /usr/share/java/postgresql.jar:libpostgresql-jdbc-java
    /usr/share/java/slf4j-api.jar:libslf4j-java
    /usr/share/java/slf4j-simple.jar:libslf4j-java
)
QUARTZ_SOURCES=("$QUARTZ_RUNNER"/*.java "$QUARTZ_RUNNER/../../kit/RunnerProtocol.java")

quartz_classpath() {
    local entry jar path="$QUARTZ_BUILD"
    for entry in "${QUARTZ_JARS[@]}"; do
        jar="${entry%%:*}"
        if [ ! -f "$jar" ]; then
            echo "runner needs the Debian package ${entry##*:} ($jar is missing): install it (apt-get install -y ${entry##*:})" >&2
            return 1
        fi
        path="$path:$jar"
    done
    echo "$path"
}

quartz_build() {
    local classpath source stale=0
    classpath="$(quartz_classpath)" || return 1
    for program in java javac; do
        if ! command -v "$program" >/dev/null 2>&1; then
            echo "runner needs the Debian package default-jdk-headless ($program is not on PATH): install it (apt-get install -y default-jdk-headless)" >&2
            return 1
        fi
    done
    for source in "${QUARTZ_SOURCES[@]}"; do
        if [ ! -f "$QUARTZ_BUILD/.built" ] || [ "$source" -nt "$QUARTZ_BUILD/.built" ]; then
            stale=1
        fi
    done
    if [ "$stale" = 1 ]; then
        mkdir -p "$QUARTZ_BUILD"
        # one build at a time: the harness may start two workers at once
        (
            flock 9
            javac -nowarn -encoding UTF-8 -d "$QUARTZ_BUILD" -cp "$classpath" "${QUARTZ_SOURCES[@]}" >&2
            touch "$QUARTZ_BUILD/.built"
        ) 9>"$QUARTZ_BUILD/.lock"
    fi
    echo "$classpath"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    quartz_build >/dev/null
fi
