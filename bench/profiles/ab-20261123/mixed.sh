#!/bin/bash
# One boot, C1-only, 64 B at 4 KiB: the client busy-polls, the server on events (pure, adaptive 20/100 µs); ib_send_lat first.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ARGS="--sizes 64 --thresholds 4096 --warmup-ms 3000 --measure-ms 6000"
run() { echo "=== $*"; $J --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -cp .cache/ab/now.jar org.rpcrdma.bench.verbs.LatencyCurve $ARGS --out .cache/ab/mixed "$@" 2>&1 | grep -E '^\[ *[0-9]+/'; }
run --perftest ib_send_lat
for r in 1 2; do
  run --perftest none --server-spin 0
  run --perftest none --server-spin 20
  run --perftest none --server-spin 100
done
