#!/usr/bin/env bash
# In a Soft-RoCE guest (scripts/rdma-vm run): C1-only goal rounds of LatencyCurve, one JVM
# per LABEL=JAR in the order given (so an A/B shares one boot), each writing OUT/LABEL/.
# A label containing "prof" runs under async-profiler (AP=path of libasyncProfiler.so),
# event=itimer (perf events do not work under TCG), one collapsed stack file per JVM with
# the thread names. ROUNDS (default 1), WARMUP_MS (2000) and MEASURE_MS (4000) per point.
# usage: AP=... run-guest.sh OUT LABEL=JAR [LABEL=JAR...]
set -u
OUT=$1
shift
JAVA=${RPCRDMA_JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
OPTS="--enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1"
mkdir -p "$OUT"
for spec in "$@"; do
  label=${spec%%=*} jar=${spec#*=} prof=()
  if [[ $label == *prof* && -n ${AP:-} ]]; then
    prof=("-agentpath:$AP=start,event=itimer,interval=1ms,threads,collapsed,file=$OUT/$label.collapsed")
  fi
  echo "[$label] $(date -u +%T) guest load: $(cut -d' ' -f1-3 /proc/loadavg)"
  # shellcheck disable=SC2086
  "$JAVA" $OPTS "${prof[@]}" -cp "$jar" org.rpcrdma.bench.verbs.LatencyCurve --out "$OUT/$label" \
    --rounds-only --rounds "${ROUNDS:-1}" --no-chunk-rows --warmup-ms "${WARMUP_MS:-2000}" \
    --measure-ms "${MEASURE_MS:-4000}" > "$OUT/$label.log" 2>&1
  echo "[$label] exit $? $(date -u +%T)"
  grep -E 'ib_send_lat|verbs-2thread|mode-busy' "$OUT/$label.log" | grep -v wake-ups
done
