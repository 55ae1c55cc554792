#!/bin/bash
# One boot: LatencyCurve (C2-only, as scripts/bench runs it) for each jar in RUNS
# (.cache/ab/jit-NAME.jar), every output line stamped with the guest's wall clock, the JIT's
# compilations logged with theirs (-Xlog:jit+compilation), so compiles can be put against the
# points they ran in (jit-table.py). ARGS: LatencyCurve's arguments.
cd "$(dirname "$0")/../../.."
echo "guest: $(nproc) CPUs, $(uname -r)"
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
mkdir -p .cache/ab
for run in ${RUNS:-base}; do
  echo "=== $run: $(uptime)"
  rm -f ".cache/ab/jit-$run.log"
  # shellcheck disable=SC2086
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $C2 \
    "-Xlog:jit+compilation=debug:file=.cache/ab/jit-$run.log:time" \
    -cp ".cache/ab/jit-$run.jar" org.rpcrdma.bench.verbs.LatencyCurve --out ".cache/ab/out-jit-$run" ${ARGS:-} 2>&1 |
    while IFS= read -r l; do printf '%s %s\n' "$(date -u +%FT%T.%3N)" "$l"; done
  echo "exit; $(uptime)"
  echo "compiles: $(wc -l < ".cache/ab/jit-$run.log")"
done
