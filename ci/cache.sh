# Sourced by the ci/ scripts that keep builds outside the checkout, for the next clone on the same machine.
#
#   ALKSTORE_CACHE    where: the caller's value, else $XDG_CACHE_HOME/alkstore, else ~/.cache/alkstore
#
# ci/test.sh keeps mypy's cache there, ci/node.sh the Node engine's better-sqlite3 build (under its lock file and
# Node version), ci/rust.sh the Rust engine's builds. Each entry is checked against its sources by its own tool
# (mypy's hashes, the lock file's hash, cargo's fingerprints), so a stale one is rebuilt, never used.
ALKSTORE_CACHE="${ALKSTORE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/alkstore}"
