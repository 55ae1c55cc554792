#!/bin/bash
# One boot: the chunk rows as scripts/bench runs them (C2-only, --prewarm-ms 5000), two
# rounds, for each RUNS label (.cache/ab20/LABEL.jar): the pre-warm lines, the rows' table,
# the JIT's share per row.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
for L in ${RUNS:-new3 main}; do
  echo "=== $L $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
    -cp ".cache/ab20/$L.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 5000 --out ".cache/ab20/check-$L" \
    --chunk-only --rounds 2 --sizes 64 --thresholds 4096 > ".cache/ab20/check-$L.log" 2>&1
  grep -E 'pre-warm|^  C2  chunk-|^  jit' ".cache/ab20/check-$L.log"
  grep -o 'busiest.*' ".cache/ab20/check-$L.log" | sed 's/busiest: //' | tr '\n' '|'; echo
done
ls .cache/ab20/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
