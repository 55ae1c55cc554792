#!/bin/bash
# One boot: the chunk rows with the JIT's log: what C2 compiles while the rows are measured.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
JAR=${JAR:-.cache/ab20/main.jar}
N=${N:-jit}
bash .cache/ab20/clk/clock.sh
$J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log $C2 -XX:+PrintCompilation \
  -Xlog:deoptimization=debug:file=.cache/ab20/$N-deopt.log:uptime \
  -cp "$JAR" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 10000 --out ".cache/ab20/$N" --chunk-only --rounds 1 \
  --sizes 64 --thresholds 4096 > .cache/ab20/$N.log 2>&1
grep -E 'chunk-|goal' .cache/ab20/$N.log | grep -v '^\[bench\]' | head -20
ls .cache/ab20/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
