#!/bin/bash
# One boot, 64 B at 4 KiB, C2-only (the new guest default, with the JIT pre-warm
# --prewarm-ms 5000) against C1-only, each JVM with the same LatencyCurve arguments: the
# client busy-polling with the server on adaptive events (--server-spin 100), then event mode
# (--event; read the min); ib_send_lat first. Then Throughput once under C2 with its pre-warm.
JAR=.cache/ab/final.jar
. "$(dirname "$0")/lib.sh"
C2=${C2:--XX:-TieredCompilation -XX:CompileThresholdScaling=0.1}
W="--warmup-ms 3000 --prewarm-ms 5000"
run r0-c2-busy "$C2" --perftest ib_send_lat $W
run r1-c1-mixed "-XX:TieredStopAtLevel=1" --perftest none --server-spin 100 $W
run r1-c2-mixed "$C2" --perftest none --server-spin 100 $W
run r1-c1-event "-XX:TieredStopAtLevel=1" --perftest none --event $W
run r1-c2-event "$C2" --perftest none --event $W
echo "=== throughput c2: $C2"
$J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $C2 -cp "$JAR" \
  org.rpcrdma.bench.verbs.Throughput --prewarm-ms 5000 2>&1 | grep -E '^\[throughput\]'
echo "exit ${PIPESTATUS[0]}"
crashes
