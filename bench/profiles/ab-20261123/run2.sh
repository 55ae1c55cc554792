#!/bin/bash
# A/B in one boot: before.jar (main at 33372c8) vs after.jar, event mode, interleaved rounds; C1-only.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ARGS="--sizes 64 --thresholds 4096 --warmup-ms 2000 --measure-ms 6000"
run() { echo "=== $3 ($1 $2)"; $J --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -cp .cache/ab/$1.jar org.rpcrdma.bench.verbs.LatencyCurve $2 --perftest $4 $ARGS --out .cache/ab/out2-$3 2>&1 | grep -E '^\[ *[0-9]+/'; }
run after --event r0-after-event ib_send_lat
for r in 1 2 3; do
  run before --event r$r-before-event none
  run after --event r$r-after-event none
done
echo "=== -e baseline"; ib_send_lat -d "$RDMA_VM_DEV" -s 64 -n 5000 -e -F >/tmp/srv.log 2>&1 & sleep 1; ib_send_lat -d "$RDMA_VM_DEV" -s 64 -n 5000 -e -F "$RDMA_VM_IP" 2>&1 | tail -4; wait
