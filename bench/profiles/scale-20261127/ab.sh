#!/usr/bin/env bash
# In one Soft-RoCE guest (scripts/rdma-vm run): the scale bench at 10 and 1,000 clients with
# the clients on shared threads, then with a poller and an rdma_cm thread each (--own-threads),
# same jar (RPCRDMA_BENCH_JAR), one output directory each under OUT.
# usage: ab.sh OUT [SECONDS]
set -u
OUT=$1 S=${2:-10}
for mode in shared own; do
  extra=()
  [[ $mode == own ]] && extra=(--own-threads)
  mkdir -p "$OUT/$mode"
  echo "[ab] $mode $(date -u +%T) guest load: $(cut -d' ' -f1-3 /proc/loadavg)"
  scripts/bench --inside --out "$OUT/$mode" --scale --conns 10,1000 --seconds "$S" "${extra[@]}" > "$OUT/$mode/console.log" 2>&1
  echo "[ab] $mode exit $? $(date -u +%T)"
  grep -E 'connections: connect p50' "$OUT/$mode/console.log"
done
