#!/bin/bash
# host side: one boot default, one boot idle=poll (one JVM each, pin.sh RUNS=none), then the main job
cd /work/main
export RDMA_VM_CACHE=/work/main/.cache/rdma-vm
for a in default poll; do
  echo "##### boot $a $(date -u +%T)"
  if [ $a = poll ]; then RDMA_VM_APPEND="idle=poll" scripts/rdma-vm run --timeout 900 --env RUNS="none" -- bench/profiles/idle-20261127/pin.sh
  else scripts/rdma-vm run --timeout 900 --env RUNS="none" -- bench/profiles/idle-20261127/pin.sh; fi
done
echo "##### scripts/bench $(date -u +%T)"
scripts/bench --out /work/main/.cache/ab21/bench-main > .cache/ab21/bench-main.log 2>&1; echo "scripts/bench rc=$? $(date -u +%T)"
