#!/usr/bin/env bash
# In a Soft-RoCE guest (scripts/rdma-vm run): the goal rounds of LatencyCurve (every shape in
# busy, mixed and event mode, no chunk rows), one JVM per LABEL=JAR[:FLAGS] in the order given,
# so an A/B shares one boot. FLAGS are extra JVM options, commas for spaces. JIT (c1 or c2;
# c2 pre-warms until the JIT is quiet, as scripts/bench's curve JVM), ROUNDS (2), WARMUP_MS
# (2000), MEASURE_MS (4000).
# usage: run-guest.sh OUT LABEL=JAR[:FLAGS] ...
set -u
OUT=$1
shift
JAVA=${RPCRDMA_JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
if [[ ${JIT:-c1} == c2 ]]; then
  OPTS="--enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
  PREWARM=(--prewarm-ms 10000)
else
  OPTS="--enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1"
  PREWARM=()
fi
mkdir -p "$OUT"
for spec in "$@"; do
  label=${spec%%=*} rest=${spec#*=}
  jar=${rest%%:*} flags=""
  [[ $rest == *:* ]] && flags=${rest#*:} && flags=${flags//,/ }
  echo "[$label] $(date -u +%T) guest load: $(cut -d' ' -f1-3 /proc/loadavg) flags: $flags"
  # shellcheck disable=SC2086
  "$JAVA" $OPTS $flags -cp "$jar" org.rpcrdma.bench.verbs.LatencyCurve --out "$OUT/$label" \
    --rounds-only --rounds "${ROUNDS:-2}" --no-chunk-rows "${PREWARM[@]}" --warmup-ms "${WARMUP_MS:-2000}" \
    --measure-ms "${MEASURE_MS:-4000}" > "$OUT/$label.log" 2>&1
  echo "[$label] exit $? $(date -u +%T)"
  grep -E 'ib_send_lat|verbs-2thread|mode-busy' "$OUT/$label.log"
done
