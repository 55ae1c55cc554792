#!/bin/bash
# One boot: the merged bench's chunk rows (C2, --prewarm-ms 5000, one round) with
# -XX:+PrintCompilation: what compiles after the rows' pre-warm ended quiet.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
$J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
  -XX:+PrintCompilation -Xlog:deoptimization=debug:file=.cache/ab20/${N:-jit3}-deopt.log:uptime \
  -cp .cache/ab20/${JAR:-final}.jar org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 5000 --out .cache/ab20/${N:-jit3} \
  --chunk-only --rounds 1 --sizes 64 --thresholds 4096 > .cache/ab20/${N:-jit3}.log 2>&1
grep -E 'pre-warm|^  C2  chunk-' .cache/ab20/${N:-jit3}.log
true
