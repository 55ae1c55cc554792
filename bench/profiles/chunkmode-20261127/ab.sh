#!/bin/bash
# One boot: an A/B of the chunk rows, RUNS (default "A B A B") interleaved, each JVM C2-only
# with --prewarm-ms ${PREWARM:-10000} so that the rows are measured after a quiet JIT; a run
# is NAME or NAME:JVM-FLAG (commas for spaces, e.g. B:-Da=1,-Db=2). Jars: .cache/ab/chunk-NAME.jar.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
i=0
for run in ${RUNS:-A B A B}; do
  i=$((i + 1)); v=${run%%:*}; flag=""; [[ $run == *:* ]] && flag=${run#*:}; flag=${flag//,/ }
  echo "=== $run ($i): $(uptime)"
  # shellcheck disable=SC2086
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $C2 $flag -cp ".cache/ab/chunk-$v.jar" \
    org.rpcrdma.bench.verbs.LatencyCurve --chunk-only --rounds 1 --prewarm-ms "${PREWARM:-10000}" --sizes 64 \
    --thresholds 4096 --out ".cache/ab/out-ab-$v-$i" ${ARGS:-} 2>&1 | grep --line-buffered -E 'C2  |pre-warm|chunk-.*(per call|handler p50)'
  echo "exit ${PIPESTATUS[0]}; $(uptime)"
done
ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
