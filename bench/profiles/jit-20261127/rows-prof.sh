#!/bin/bash
# One boot: the chunk rows (C2, as scripts/bench) of .cache/ab20/$LABEL.jar under async-profiler
# (itimer, threads, collapsed), AP = libasyncProfiler.so.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
L=${LABEL:-main}
$J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
  "-agentpath:$AP=start,event=itimer,interval=1ms,threads,collapsed,file=.cache/ab20/prof-$L.collapsed" \
  -cp ".cache/ab20/$L.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 10000 --out ".cache/ab20/prof-$L" \
  --chunk-only --rounds 1 --sizes 64 --thresholds 4096 > ".cache/ab20/prof-$L.log" 2>&1
grep -E '^  C[12]  chunk-' ".cache/ab20/prof-$L.log"
true
