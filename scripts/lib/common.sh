# shellcheck shell=bash
# Helpers shared by scripts/rdma-vm, scripts/verbs-tests and scripts/test (sourced, not run).
# Callers set PROG (the name put in front of every message) before sourcing.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
: "${PROG:=scripts}"

log() { printf '[%s] %s\n' "$PROG" "$*" >&2; }

# die [STATUS] MESSAGE: the one line that says what failed, then exit (default status 125,
# which callers treat as "the harness failed", not "the tests failed").
die() {
  local rc=125
  if [[ $# -gt 1 && $1 =~ ^[0-9]+$ ]]; then rc=$1; shift; fi
  printf '%s: FAILED: %s\n' "$PROG" "$*" >&2
  exit "$rc"
}

now() { date +%s.%N; }
# elapsed START: seconds since START (a `now` value), one decimal
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# missing_packages PKG...: prints the packages dpkg does not list as installed
missing_packages() {
  local p st
  for p in "$@"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $st == "install ok installed" ]] || printf '%s\n' "$p"
  done
}

# apt_update_once: `apt-get update`, at most once per process tree (the flag is exported
# so scripts/test -> scripts/rdma-vm does not update twice).
apt_update_once() {
  [[ ${RPCRDMA_APT_UPDATED:-} == 1 ]] && return 0
  log "apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -q update >&2 ||
    die "apt-get update failed"
  export RPCRDMA_APT_UPDATED=1
}

# ensure_packages PKG...: installs whatever is missing with apt (no recommends); does
# nothing at all, not even apt-get update, when everything is present.
ensure_packages() {
  local missing
  mapfile -t missing < <(missing_packages "$@")
  [[ ${#missing[@]} -eq 0 ]] && return 0
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
  [[ $(id -u) -eq 0 ]] || die "missing packages (${missing[*]}); run as root or install them"
  apt_update_once
  log "apt-get install ${missing[*]}"
  # Debian images normally ship a policy-rc.d that stops postinst scripts from starting
  # daemons (nfs-kernel-server, rpcbind); where none exists, add one for this install only.
  local policy=/usr/sbin/policy-rc.d added=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && added=1
  fi
  local rc=0
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -q -y \
    install --no-install-recommends "${missing[@]}" >&2 || rc=$?
  [[ $added -eq 1 ]] && rm -f "$policy"
  [[ $rc -eq 0 ]] || die "apt-get install ${missing[*]} failed (exit $rc)"
}
