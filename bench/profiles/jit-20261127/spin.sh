#!/bin/bash
# One boot: the chunk rows as scripts/bench runs them (C2-only, --prewarm-ms 5000, the rows'
# pre-warm by passes of the rows), one round, the server on pure events (its default) and
# adaptive (--server-spin N: polls N us after a completion before it sleeps), in turn.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
L=${LABEL:-new3}
for spin in ${SPINS:-0 100 0 100}; do
  echo "=== $L server-spin $spin $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
    -cp ".cache/ab20/$L.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 5000 --out ".cache/ab20/spin-$spin" \
    --chunk-only --rounds 1 --sizes 64 --thresholds 4096 --server-spin "$spin" > ".cache/ab20/spin-$spin-$(date +%s).log" 2>&1
  f=$(ls -t .cache/ab20/spin-$spin-*.log | head -1)
  grep -E 'pre-warm|^  C2  chunk-' "$f"
  grep -o 'busiest.*' "$f" | sed 's/busiest: //' | tr '\n' '|'; echo
done
ls .cache/ab20/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
