#!/bin/bash
# One boot: the busy call path without its per-call clock reads (CompletionDriver: no
# System.nanoTime at a blocking call's end, the deadline checked every 1,024 spins, not 64)
# against main, interleaved twice; each a C2 LatencyCurve at 64 B / 4 KiB with 3 goal rounds.
cd "$(dirname "$0")/../../.."
. bench/profiles/ab-20261124/lib.sh
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
A="--sizes 64 --thresholds 4096 --perftest ib_send_lat --warmup-ms 1000 --measure-ms 2000 --prewarm-ms 5000 --rounds 3"
for v in old new old new; do
  JAR=.cache/ab/s8-rounds-$v.jar run $v "$C2" $A
  sed -n '/^Goals/,/raw verbs/p' .cache/ab/out/table.txt
done
crashes
