# Sourced by the one-boot scripts here: run NAME 'JVM FLAGS' LATENCYCURVE-ARGS...
# Prints "=== NAME", then each of LatencyCurve's progress lines prefixed by the seconds since
# that JVM started, then its exit status and how many methods it JIT-compiled, the last when
# (-Xlog:jit+compilation, its log kept in .cache/ab/jit/NAME.log). A JVM crash leaves
# .cache/ab/hs_err_PID.log. Always 64 B at 4 KiB inline, 5 s measured per point.
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
JAR=${JAR:-.cache/ab/prewarm.jar}
mkdir -p .cache/ab/jit
run() {
  local name=$1 flags=$2; shift 2
  echo "=== $name: $flags | $*"
  local t0; t0=$(date +%s.%N)
  # shellcheck disable=SC2086  # flags: several on purpose
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $flags \
    -Xlog:jit+compilation=debug:file=/tmp/jit.log:uptime -cp "$JAR" org.rpcrdma.bench.verbs.LatencyCurve \
    --sizes 64 --thresholds 4096 --measure-ms 5000 --out .cache/ab/out "$@" 2>&1 |
    while IFS= read -r l; do
      [[ $l =~ ^\[\ *[0-9]+/|^\[bench\]\ pre|rror|xception ]] && printf '%6.1f %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$l"
    done
  echo "exit ${PIPESTATUS[0]}; jit: $(grep -c . /tmp/jit.log) compiles, the last at $(tail -1 /tmp/jit.log | cut -c1-12)"
  cp /tmp/jit.log ".cache/ab/jit/$name.log"
}
crashes() { ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"; true; }
