#!/bin/bash
# One boot, busy mode, C1-only, 64 B at 4 KiB: main vs park (the poller parks while a blocking caller spins), 3 interleaved rounds.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ARGS="--sizes 64 --thresholds 4096 --warmup-ms 3000 --measure-ms 6000"
run() { echo "=== $1 $3"; $J --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -cp .cache/ab/$1.jar org.rpcrdma.bench.verbs.LatencyCurve --perftest $2 $ARGS --out .cache/ab/park-$1 2>&1 | grep -E '^\[ *[0-9]+/'; }
run main ib_send_lat r0
for r in 1 2 3; do
  run main none r$r
  run park none r$r
done
