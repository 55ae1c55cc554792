#!/bin/bash
# One boot: the chunk rows (C2, pre-warm as scripts/bench's curve JVM) of each RUNS label in
# turn, LABEL = .cache/ab20/LABEL.jar; the rows' table, pre-warm lines and the JIT's share.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
i=0
for label in ${RUNS:-main new1 main new1}; do
  i=$((i + 1))
  echo "=== $i $label $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log $C2 -cp ".cache/ab20/$label.jar" \
    org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 10000 --out ".cache/ab20/ab-$i-$label" --chunk-only --rounds 1 \
    --sizes 64 --thresholds 4096 > ".cache/ab20/ab-$i-$label.log" 2>&1
  grep -E 'pre-warm' ".cache/ab20/ab-$i-$label.log"
  grep -E '^  C2  chunk-' ".cache/ab20/ab-$i-$label.log"
  grep -o 'busiest.*' ".cache/ab20/ab-$i-$label.log" | tr '\n' '|'; echo
done
ls .cache/ab20/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
