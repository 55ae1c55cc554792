#!/bin/bash
# One boot: the chunk rows after the usual JIT pre-warm (--prewarm-ms 3000: at most 18 s of
# calls until the JIT is quiet) against a longer one (10000: at most 60 s), and the inline
# NULL call with both ends on completion events beside perftest's ib_send_lat -e (the cost
# of a wake-up, ours against perftest's). PASSES (default 2) interleaved. Jar: .cache/ab/chunk-spin.jar.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
JAR=.cache/ab/chunk-${JAR:-spin}.jar
port=19300
pt() {  # TOOL SIZE EXTRA...: one perftest latency run, both ends in this guest
  local tool=$1 size=$2; shift 2
  port=$((port + 1))
  $tool -R -F -d "$RDMA_VM_DEV" -p $port -s "$size" -n 3000 "$@" > /tmp/pt-s.log 2>&1 &
  sleep 1.5
  local line
  line=$($tool -R -F -d "$RDMA_VM_DEV" -p $port -s "$size" -n 3000 "$@" "$RDMA_VM_IP" 2>&1 | awk -v s="$size" '$1==s && NF>=9')
  wait
  echo "perftest $tool $size $* : ${line:-FAILED}  (t_min t_max t_typical t_avg t_stdev 99% 99.9%; send/write: half a round trip)"
}
curve() {  # NAME ARGS...: one LatencyCurve JVM
  local name=$1; shift
  echo "=== $name: $*; $(uptime)"
  # shellcheck disable=SC2086
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $C2 -cp "$JAR" \
    org.rpcrdma.bench.verbs.LatencyCurve --out ".cache/ab/out-$name" "$@" 2>&1 |
    grep --line-buffered -E 'C2  |pre-warm|      64   ' | grep -v '^\[bench\] chunk-'
}
for pass in $(seq "${PASSES:-2}"); do
  echo "##### pass $pass: $(uptime)"
  curve "pw3-$pass" --chunk-only --rounds 1 --sizes 64 --thresholds 4096 --prewarm-ms 3000
  curve "pw10-$pass" --chunk-only --rounds 1 --sizes 64 --thresholds 4096 --prewarm-ms 10000
  pt ib_send_lat 64; pt ib_send_lat 64 -e
  curve "events-$pass" --event --no-modes --no-chunk-rows --sizes 64 --thresholds 4096 --prewarm-ms 3000
done
ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
