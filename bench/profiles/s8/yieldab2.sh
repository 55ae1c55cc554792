#!/bin/bash
# One boot: busy pollers yielding while their own RDMA Reads/Writes are in flight (new) against
# spinning on (old), interleaved three times; C2, busy, 1,024 B at 1 KiB inline (a long call
# pulled by RDMA Read; echo: + a Reply chunk) and 956 B (the last inline size) beside it.
cd "$(dirname "$0")/../../.."
. bench/profiles/ab-20261124/lib.sh
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
A="--sizes 956,1024 --thresholds 1024 --perftest none --no-modes --warmup-ms 1000 --measure-ms 3000 --prewarm-ms 5000"
for v in old new old new old new; do
  JAR=.cache/ab/s8-yield-$v.jar run $v "$C2" $A
done
crashes
