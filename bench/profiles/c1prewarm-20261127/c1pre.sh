#!/bin/bash
# One boot: the C1 goal rounds as scripts/bench's other-JIT JVM runs them (--rounds-only,
# C1-only), per RUNS entry: nopre (as is) or pre (--prewarm-ms 5000), alternating.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
D=${D:-.cache/ab22}  # holds the jar (${JAR:-s22}.jar) and receives the runs
for R in ${RUNS:-nopre pre nopre pre}; do
  extra=""; [ "$R" = pre ] && extra="--prewarm-ms 5000"
  echo "=== $R $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  out="$D/c1-$R-$(date +%s)"; log="$out.log"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=$D/hs_err_%p.log -XX:TieredStopAtLevel=1 \
    -cp "$D/${JAR:-s22}.jar" org.rpcrdma.bench.verbs.LatencyCurve --out "$out" --rounds-only $extra > "$log" 2>&1
  echo "rc=$? $(date -u +%T)"
  grep -E 'pre-warm|C1: busy-poll, (NULL|blocking)|C1: .*shape|C1  chunk-.* 4096' "$out/table.txt" "$log" | sed 's/^[^:]*://' | sort -u
  grep -o 'busiest.*' "$log" | head -3
done
ls $D/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
