#!/bin/bash
# One boot: the chunk rows after a long pre-warm (caps of 6 x PREWARM ms), the JIT's work
# judged by the compiler threads' CPU (new1's JitPrewarm): does C2 ever go quiet, and what
# are the rows then.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
L=${LABEL:-new1}
echo "=== $L $(date -u +%T)"
$J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
  -cp ".cache/ab20/$L.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms ${PREWARM:-50000} --out ".cache/ab20/long-$L" \
  --chunk-only --rounds 2 --sizes 64 --thresholds 4096 > ".cache/ab20/long-$L.log" 2>&1
grep -E 'pre-warm|^  C2  chunk-' ".cache/ab20/long-$L.log"
grep -o 'busiest.*' ".cache/ab20/long-$L.log"
true
