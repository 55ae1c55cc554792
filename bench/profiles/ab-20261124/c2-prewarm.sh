#!/bin/bash
# One boot, busy mode, 64 B at 4 KiB, every JVM with a 10 s JIT pre-warm (RPC on events, then
# the one-thread raw ping-pong; LatencyCurve --prewarm-ms) and a 3 s warm-up per point:
# C1-only vs C2-only vs C2-only compiling at a tenth of the usual counts
# (-XX:CompileThresholdScaling=0.1) vs tiered (the JDK default), two interleaved rounds.
. "$(dirname "$0")/lib.sh"
W="--warmup-ms 3000 --prewarm-ms 10000"
run r0-c1 "-XX:TieredStopAtLevel=1" --perftest ib_send_lat $W
for r in 1 2; do
  run r$r-c1 "-XX:TieredStopAtLevel=1" --perftest none $W
  run r$r-c2 "-XX:-TieredCompilation" --perftest none $W
  run r$r-c2-scale "-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1" --perftest none $W
  run r$r-tiered "" --perftest none $W
done
crashes
