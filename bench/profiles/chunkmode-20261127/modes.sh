#!/bin/bash
# One boot: what the chunk rows' completion mode costs by itself. perftest's latency tools
# busy-polling and on completion events (-e, both ends), the inline NULL call in the rows'
# mode (client busy, server on events) and the chunk rows with the server adaptive
# (--server-spin N) against the server's default (pure events). Jar: .cache/ab/chunk-spin.jar.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
JAR=.cache/ab/chunk-${JAR:-spin}.jar
port=19100
pt() {  # TOOL SIZE EXTRA...: one perftest latency run, both ends in this guest; prints its result line
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
    org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 3000 --out ".cache/ab/out-$name" "$@" 2>&1 |
    grep --line-buffered -E 'C2  |chunk-|NULL|mode|ib_|^\s+[0-9]' | grep -v '^\[bench\] chunk'
}
for pass in 1 2; do
  echo "##### pass $pass: $(uptime)"
  pt ib_send_lat 64; pt ib_send_lat 64 -e
  pt ib_read_lat 4096; pt ib_read_lat 4096 -e
  pt ib_write_lat 4096; pt ib_write_lat 4096 -e
  curve "floor-$pass" --no-modes --no-chunk-rows --sizes 64 --thresholds 4096 --server-spin 0
  for spin in 0 100; do
    curve "rows-spin$spin-$pass" --chunk-only --rounds 1 --sizes 64 --thresholds 4096 --server-spin $spin
  done
done
ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
