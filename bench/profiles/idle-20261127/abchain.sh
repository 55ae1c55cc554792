#!/bin/bash
# One boot: the chunk rows (C2-only, --prewarm-ms 5000, one round) for each RUNS jar label
# (.cache/ab21/LABEL.jar), alternating: does chaining the window bind with the Send change
# the client's posts per chunked call and the rows' p50?
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
D=.cache/ab21
for L in ${RUNS:-main chain}; do
  echo "=== $L $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  log="$D/abchain-$L-$(date +%s).log"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=$D/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
    -cp "$D/$L.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 5000 --out "$D/abchain-$L" \
    --chunk-only --rounds 1 --sizes 64 --thresholds 4096 > "$log" 2>&1
  grep -E '^  C2  chunk-' "$log"
  grep -E '^\[bench\] chunk-[a-z-]+ c2-r1 4096 B: per call' "$log" | sed 's/^\[bench\] //; s/ibv_post_send.*/ibv_post_send/'
  grep -E '^\[bench\] chunk-long .*4096 B: call sent' "$log" | sed 's/^\[bench\] //'
done
ls $D/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
