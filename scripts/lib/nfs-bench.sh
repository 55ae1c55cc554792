#!/usr/bin/env bash
# nfs-bench.sh OUT - run by `scripts/bench --nfs` inside a guest booted with
# `scripts/rdma-vm run --nfsd`: the kernel's NFS client (vers=4.1,proto=rdma) against the
# kernel's nfsd (port 20049, /export) and then against our server (scripts/nfs-server,
# port 20050, its own tmpfs), same device, same boot. Per server: a 16 MiB warm-up write and
# read, then a 256 MiB sequential write (dd bs=1M conv=fsync), a read of it through a fresh
# mount with the page cache dropped, and a cold `ls -l` of a directory of 1,000 files
# (created on the server's disk, listed through a fresh mount). Writes OUT/table.txt.
set -euo pipefail
OUT=${1:?usage: nfs-bench.sh OUT}
[[ -n ${RDMA_VM:-} && -n ${RDMA_VM_NFS_PORT:-} ]] || { echo "nfs-bench.sh: run it through scripts/bench --nfs" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MIB=${RPCRDMA_NFS_BENCH_MIB:-256} FILES=1000 OURS_PORT=20050
OURS_EXPORT=/srv/nfsbench MNT=/mnt/nfsbench LOG=$OUT/nfs-server.log
ts() { echo "[t=$(cut -d' ' -f1 /proc/uptime)s] $*"; }
fail() { ts "nfs-bench: FAILED: $*"; tail -20 "$LOG" 2>/dev/null; dmesg | grep -iE 'nfs|rpcrdma' | tail -10; exit 1; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
mkdir -p "$OUT" "$OURS_EXPORT" "$MNT"

# /export is 256 MiB (scripts/lib/rdma-vm-guest.sh): room for the file, the warm-up and the directory
mount -o remount,size=$((MIB + 128))m "$RDMA_VM_NFS_EXPORT" || fail "remount $RDMA_VM_NFS_EXPORT larger"
mount -t tmpfs -o size=$((MIB + 128))m nfsbench "$OURS_EXPORT"

cold_mount() {   # cold_mount PORT: a fresh mount and no cached pages
  umount "$MNT" 2>/dev/null || true
  echo 3 >/proc/sys/vm/drop_caches
  timeout 300 mount -t nfs -o "vers=4.1,proto=rdma,port=$1" "$RDMA_VM_IP:/" "$MNT" || fail "mount port $1"
}

# measure NAME PORT EXPORT: sets W_MS, R_MS, LS_MS and records the mount's options
declare -A W_MS R_MS LS_MS OPTS
measure() {
  local name=$1 port=$2 export=$3 t0
  ts "$name: mount port $port"
  cold_mount "$port"
  OPTS[$name]=$(awk -v m="$MNT" '$2 == m { print $4 }' /proc/mounts | tr ',' '\n' | grep -E '^(rsize|wsize|proto|vers)=' | paste -sd,)
  ts "$name: warm-up 16 MiB write and read (${OPTS[$name]})"
  dd if=/dev/zero of="$MNT/warm" bs=1M count=16 conv=fsync status=none || fail "$name: warm-up write"
  cold_mount "$port"
  dd if="$MNT/warm" of=/dev/null bs=1M status=none || fail "$name: warm-up read"
  rm -f "$MNT/warm"
  t0=$(date +%s%N)
  dd if=/dev/zero of="$MNT/big" bs=1M count="$MIB" conv=fsync status=none || fail "$name: write"
  W_MS[$name]=$(ms_since "$t0")
  [[ $(stat -c %s "$export/big") -eq $((MIB * 1048576)) ]] || fail "$name: the file on disk is not $MIB MiB"
  ts "$name: wrote $MIB MiB in ${W_MS[$name]} ms"
  cold_mount "$port"
  t0=$(date +%s%N)
  dd if="$MNT/big" of=/dev/null bs=1M status=none || fail "$name: read"
  R_MS[$name]=$(ms_since "$t0")
  ts "$name: read $MIB MiB in ${R_MS[$name]} ms"
  rm -f "$export/big"
  mkdir "$export/many"
  for ((i = 0; i < FILES; i++)); do : >"$export/many/f$i"; done
  cold_mount "$port"
  t0=$(date +%s%N)
  local n
  n=$(ls -l "$MNT/many" | wc -l) || fail "$name: ls -l"
  LS_MS[$name]=$(ms_since "$t0")
  [[ $n -eq $((FILES + 1)) ]] || fail "$name: ls -l listed $((n - 1)) of $FILES files"
  ts "$name: ls -l of $FILES files in ${LS_MS[$name]} ms"
  umount "$MNT" || fail "$name: umount"
  rm -rf "$export/many"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date +%s)
measure nfsd "$RDMA_VM_NFS_PORT" "$RDMA_VM_NFS_EXPORT"

ts "ours: scripts/nfs-server $OURS_EXPORT on $RDMA_VM_IP:$OURS_PORT (C1 only: tiered JVMs crash under TCG)"
RPCRDMA_JVM_OPTS="-XX:TieredStopAtLevel=1" "$ROOT/scripts/nfs-server" "$OURS_EXPORT" \
  --address "$RDMA_VM_IP" --port $OURS_PORT >"$LOG" 2>&1 &
server=$!
for _ in $(seq 3000); do grep -q 'nfs-server: serving' "$LOG" && break; sleep 0.1; done   # after its warm-up
grep -q 'nfs-server: serving' "$LOG" || fail "our server did not start"
measure ours $OURS_PORT "$OURS_EXPORT"
kill -TERM "$server"
wait "$server" || true
grep 'nfs-server: st' "$LOG" || true
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

mbs() { awk -v b=$((MIB * 1048576)) -v ms="$1" 'BEGIN { printf "%.1f", b / (ms / 1000) / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
{
  echo "NFSv4.1 over RPC-over-RDMA: the kernel's client against the kernel's nfsd and against ours"
  echo "($RDMA_VM_DEV in one guest boot, $(nproc) vCPUs, $(uname -r); dd bs=1M, a 16 MiB warm-up first)"
  echo
  printf "%-30s %10s %10s %10s\n" "" nfsd ours ours/nfsd
  wn=$(mbs "${W_MS[nfsd]}") wo=$(mbs "${W_MS[ours]}")
  rn=$(mbs "${R_MS[nfsd]}") ro=$(mbs "${R_MS[ours]}")
  printf "%-30s %10s %10s %10s\n" "write $MIB MiB, fsync (MB/s)" "$wn" "$wo" "$(ratio "$wo" "$wn")"
  printf "%-30s %10s %10s %10s\n" "read $MIB MiB, cold (MB/s)" "$rn" "$ro" "$(ratio "$ro" "$rn")"
  printf "%-30s %10s %10s %10s\n" "ls -l $FILES files, cold (ms)" "${LS_MS[nfsd]}" "${LS_MS[ours]}" \
    "$(ratio "${LS_MS[ours]}" "${LS_MS[nfsd]}")"
  echo
  echo "MB/s = 10^6 bytes/s; ours/nfsd > 1 is faster for MB/s, slower for ms."
  echo "mount: nfsd ${OPTS[nfsd]}; ours ${OPTS[ours]}"
  echo "load average (1/5/15 min) before: $LOAD0, after: $LOAD1; took $(( $(date +%s) - T0 )) s"
  echo "Under TCG the absolute numbers are the emulator's; read the ratios."
} | tee "$OUT/table.txt"
