#!/usr/bin/env bash
# The Rust engine (engines_under_test/alkstore_rust): install its toolchain and crates when they are missing,
# build it, check it. ci/test.sh calls it; its certification runs with the suite's phases.
#
#   ci/rust.sh install    apt-get install Debian's crates (and cargo) when missing, then cargo build --release
#   ci/rust.sh check      cargo fmt --check and cargo clippy (when installed), then cargo test
#
# crates.io is never asked: Debian packages every crate the engine uses as librust-*-dev under
# /usr/share/cargo/registry, and the engine's .cargo/config.toml points cargo there, offline. Any cargo
# from Rust 1.63 (Debian 12's own, installed here when there is none) builds it. The build directories stay
# between runs under $ALKSTORE_CACHE (default ~/.cache/alkstore): a build with nothing changed takes under a second.
set -euo pipefail
cd "$(dirname "$0")/../engines_under_test/alkstore_rust"
REGISTRY=/usr/share/cargo/registry
# shellcheck source=ci/cache.sh
source ../../ci/cache.sh # ALKSTORE_CACHE: where the builds stay between clones
CRATES=(librust-rusqlite-dev librust-serde-json-dev)

log() { echo "ci/rust.sh: $*" >&2; }
# shellcheck source=ci/as_root.sh
source ../../ci/as_root.sh # apt_install PACKAGE...: Debian's packages, as root

case "${1:-}" in
install)
    missing=()
    compgen -G "$REGISTRY/rusqlite-0.28*" >/dev/null || missing+=(librust-rusqlite-dev)
    compgen -G "$REGISTRY/serde_json-1.*" >/dev/null || missing+=(librust-serde-json-dev)
    command -v cargo >/dev/null || missing+=(cargo)
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]} (of ${CRATES[*]} cargo)"
        apt_install "${missing[@]}"
    fi
    # Built outside the checkout, so a fresh clone on a machine that built it before builds nothing again; the
    # binary is then copied where the engine's manifest (alkstore-engine.toml) runs it, target/release/.
    CARGO_TARGET_DIR="$ALKSTORE_CACHE/rust-target" cargo build --release --offline --quiet
    install -D "$ALKSTORE_CACHE/rust-target/release/alkstore-rust" target/release/alkstore-rust
    ;;
check)
    # clippy's and the tests' builds go outside the checkout too, apart from the engine's own build.
    export CARGO_TARGET_DIR="$ALKSTORE_CACHE/rust-check-target"
    if cargo fmt --version >/dev/null 2>&1; then cargo fmt --check; fi
    if cargo clippy --version >/dev/null 2>&1; then
        cargo clippy --release --offline --quiet --all-targets -- -D warnings
    fi
    cargo test --release --offline --quiet
    ;;
*)
    echo "usage: ci/rust.sh install|check" >&2
    exit 2
    ;;
esac
