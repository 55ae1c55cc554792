#!/bin/bash
# One boot: busy-poll spinning threads yielding after 256 empty polls (after) or never (before),
# inline (956 B) and chunked (1,024 B) at 1 KiB, and 64 B at 4 KiB; interleaved twice.
cd "$(dirname "$0")/../../.."
. bench/profiles/ab-20261124/lib.sh
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
A="--perftest none --no-modes --sizes 0,956,1024 --thresholds 1024,4096 --warmup-ms 1000 --measure-ms 3000 --prewarm-ms 5000"
for r in 1 2; do
  for v in before after; do
    JAR=.cache/ab/y-$v.jar run y-$r-$v "$C2" $A
  done
done
crashes
