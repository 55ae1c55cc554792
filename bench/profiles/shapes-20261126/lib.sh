# Sourced by the one-boot scripts here: rounds NAME JAR 'JVM FLAGS' LATENCYCURVE-ARGS...
# runs LatencyCurve's goal rounds only (64 B NULL at 4 KiB inline, every call shape in every
# completion mode, ib_send_lat first in each round) in one JVM, its output in
# .cache/ab/shapes/NAME/ (table.txt, points.tsv); prints its progress lines prefixed by the
# seconds since it started, its exit status, and the load. A JVM crash leaves
# .cache/ab/hs_err_PID.log.
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C1="-XX:TieredStopAtLevel=1"
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
rounds() {
  local name=$1 jar=$2 flags=$3; shift 3
  local out=.cache/ab/shapes/$name
  mkdir -p "$out"
  echo "=== $name: $jar $flags | $*  (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  local t0; t0=$(date +%s.%N)
  # shellcheck disable=SC2086  # flags: several on purpose
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $flags \
    -cp "$jar" org.rpcrdma.bench.verbs.LatencyCurve --rounds-only --sizes 64 --thresholds 4096 \
    --out "$out" "$@" 2>&1 |
    while IFS= read -r l; do
      [[ $l =~ ^\[\ *[0-9]+/|^\[bench\]|rror|xception ]] && printf '%6.1f %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$l"
    done
  echo "exit ${PIPESTATUS[0]} (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  sed -n '/^Goals/,/^Every point/p' "$out/table.txt" 2>/dev/null
}
crashes() { ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"; true; }
