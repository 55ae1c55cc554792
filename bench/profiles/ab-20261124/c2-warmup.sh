#!/bin/bash
# One boot, busy mode, 64 B at 4 KiB: C1-only vs C2-only with a longer warm-up (10 s, 30 s per
# point) and C2-only with -Xbatch, two interleaved rounds; ib_send_lat first.
# Each line: seconds since that JVM started, then LatencyCurve's progress line. JIT log per run.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
JAR=${JAR:-.cache/ab/main.jar}
mkdir -p .cache/ab/jit
run() { # NAME PERFTEST WARMUP_MS JVM-FLAGS...
  local name=$1 pt=$2 wu=$3; shift 3
  echo "=== $name: $* (warm-up $wu ms)"
  local t0; t0=$(date +%s.%N)
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log "$@" \
    -Xlog:jit+compilation=debug:file=/tmp/jit.log:uptime -cp "$JAR" org.rpcrdma.bench.verbs.LatencyCurve \
    --perftest "$pt" --sizes 64 --thresholds 4096 --warmup-ms "$wu" --measure-ms 5000 --out .cache/ab/out 2>&1 |
    while IFS= read -r l; do
      [[ $l =~ ^\[\ *[0-9]+/|^\#|rror|xception ]] && printf '%6.1f %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$l"
    done
  echo "exit ${PIPESTATUS[0]}; jit: $(grep -c . /tmp/jit.log) compiles, the last at $(tail -1 /tmp/jit.log | cut -c1-12)"
  cp /tmp/jit.log ".cache/ab/jit/$name.log"
}
run r0-c1 ib_send_lat 3000 -XX:TieredStopAtLevel=1
for r in 1 2; do
  run r$r-c1 none 3000 -XX:TieredStopAtLevel=1
  run r$r-c2-10s none 10000 -XX:-TieredCompilation
  run r$r-c2-batch none 3000 -XX:-TieredCompilation -Xbatch
  run r$r-c2-30s none 30000 -XX:-TieredCompilation
done
ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
