# Sourced by the ci/ scripts that install a Debian package when what they need is missing.
#
#   as_root COMMAND...        run it as root: directly when we are root, else through sudo when there is one
#   apt_install PACKAGE...    Debian's packages, installed as root: the package lists refreshed, then one install
#
# sudo never prompts (-n): a CI runner's sudo needs no password, and a script must not hang on one. Where
# neither works it logs (through the caller's log) what it could not run and ROOT_HINT, what to do by hand.
as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        log "not root and no sudo: cannot run '$*'; ${ROOT_HINT:-run it as root yourself}"
        return 1
    fi
}

# Another apt run (a second job, unattended upgrades) may hold the lock: wait for it up to 10 minutes.
apt_install() {
    ROOT_HINT="apt-get install $*"
    as_root apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
        --no-install-recommends "$@" >/dev/null
}
