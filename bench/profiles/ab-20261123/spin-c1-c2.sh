#!/bin/bash
# One boot: busy mode, 64 B, 4 KiB: main vs no-PAUSE spin loops, C1-only vs C2-only; interleaved rounds.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ARGS="--sizes 64 --thresholds 4096 --warmup-ms 3000 --measure-ms 5000"
run() { echo "=== $1 $2 $3"; $J --enable-native-access=ALL-UNNAMED $2 -cp .cache/ab/$1.jar org.rpcrdma.bench.verbs.LatencyCurve --perftest $3 $ARGS --out .cache/ab/spin-$1 2>&1 | grep -E '^\[ *[0-9]+/'; }
run main -XX:TieredStopAtLevel=1 ib_send_lat
for r in 1 2; do
  for jar in main nopause; do
    run $jar -XX:TieredStopAtLevel=1 none
    run $jar -XX:-TieredCompilation none
  done
done
