#!/bin/bash
# One boot, busy mode, 64 B at 4 KiB, every JVM with the JIT pre-warm LatencyCurve --prewarm-ms
# 5000 does (5 s of RPC calls through an InMemoryPair, 5 s of the one-thread raw ping-pong, then
# busy-poll calls until no compile has finished for 3 s, at most 30 s) and a 3 s warm-up per
# point: C1-only vs C2-only vs C2-only at a tenth of the compile thresholds, two interleaved
# rounds after ib_send_lat.
JAR=.cache/ab/quiet.jar
. "$(dirname "$0")/lib.sh"
W="--warmup-ms 3000 --prewarm-ms 5000"
run r0-c1 "-XX:TieredStopAtLevel=1" --perftest ib_send_lat $W
for r in 1 2; do
  run r$r-c1 "-XX:TieredStopAtLevel=1" --perftest none $W
  run r$r-c2 "-XX:-TieredCompilation" --perftest none $W
  run r$r-c2-scale "-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1" --perftest none $W
done
crashes
