#!/bin/bash
# One boot: the chunk rows of each RUNS entry LABEL:JIT in turn (LABEL = .cache/ab20/LABEL.jar;
# JIT c1 = -XX:TieredStopAtLevel=1, c2 = C2 only as scripts/bench's curve JVM); the rows' table,
# pre-warm lines and the busiest threads per row.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
i=0
for spec in ${RUNS:-new1:c1 new1:c2}; do
  i=$((i + 1)); label=${spec%%:*}; jit=${spec#*:}
  case $jit in c1) F="-XX:TieredStopAtLevel=1";; c2d) F="-XX:-TieredCompilation";; *) F="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1";; esac
  echo "=== $i $label $jit $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log $F -cp ".cache/ab20/$label.jar" \
    org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 10000 --out ".cache/ab20/j-$i-$label" --chunk-only --rounds 1 \
    --sizes 64 --thresholds 4096 > ".cache/ab20/j-$i-$label-$jit.log" 2>&1
  grep -E 'pre-warm' ".cache/ab20/j-$i-$label-$jit.log"
  grep -E "^  C[12]  chunk-|JIT" ".cache/ab20/j-$i-$label-$jit.log"
  grep -o 'busiest.*' ".cache/ab20/j-$i-$label-$jit.log" | tr '\n' '|'; echo
done
ls .cache/ab20/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
