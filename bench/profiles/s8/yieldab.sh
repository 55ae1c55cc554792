#!/bin/bash
# One boot: busy pollers yielding while their own RDMA Reads/Writes are in flight (new) against
# spinning on (old), interleaved twice; C2 LatencyCurve busy, 64 B and 1,024 B at 1 and 4 KiB
# inline (1,024 B at 1 KiB: a long call pulled by RDMA Read; echo: + a Reply chunk), one round.
cd "$(dirname "$0")/../../.."
. bench/profiles/ab-20261124/lib.sh
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
A="--sizes 64,1024 --thresholds 1024,4096 --perftest ib_send_lat --warmup-ms 1000 --measure-ms 3000 --prewarm-ms 5000 --rounds 1"
for v in old new old new; do
  JAR=.cache/ab/s8-yield-$v.jar run $v "$C2" $A
  sed -n '/^Goals/,/raw verbs/p' .cache/ab/out/table.txt
done
crashes
