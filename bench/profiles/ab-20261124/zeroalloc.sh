#!/bin/bash
# One boot, C1-only, 64 B at 4 KiB: before.jar (main at aee8ba5: callAndWait, a handler allocating its
# reply) vs after.jar (callAndRead, an immediate handler: nothing allocated per call), busy-poll then
# events, three interleaved rounds after ib_send_lat. Copy to .cache/ab/ with the two jars.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ARGS="--sizes 64 --thresholds 4096 --warmup-ms 3000 --measure-ms 6000"
run() { echo "=== $1 $2 $4"; $J --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -cp .cache/ab/$1.jar org.rpcrdma.bench.verbs.LatencyCurve --perftest $3 $2 $ARGS --out .cache/ab/za-$1 2>&1 | grep -E '^\[ *[0-9]+/'; }
run before "" ib_send_lat r0
for r in 1 2 3; do
  run before "" none r$r
  run after "" none r$r
done
for r in 1 2; do
  run before --event none r$r
  run after --event none r$r
done
