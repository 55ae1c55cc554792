#!/bin/bash
# One boot: perftest with the ends in the chunk rows' modes (server on events, client busy),
# beside both ends busy and both on events; then the chunk rows of main's jar.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
JAR=.cache/ab20/main.jar
port=19300
pt() {  # TOOL SIZE "SERVER-FLAGS" "CLIENT-FLAGS"
  local tool=$1 size=$2 sf=$3 cf=$4
  port=$((port + 1))
  # shellcheck disable=SC2086
  $tool -R -F -d "$RDMA_VM_DEV" -p $port -s "$size" -n 3000 $sf > /tmp/pt-s.log 2>&1 &
  sleep 1.5
  local line
  # shellcheck disable=SC2086
  line=$($tool -R -F -d "$RDMA_VM_DEV" -p $port -s "$size" -n 3000 $cf "$RDMA_VM_IP" 2>&1 | tee /tmp/pt-c.log | awk -v s="$size" '$1==s && NF>=9')
  wait
  [ -z "$line" ] && tail -3 /tmp/pt-c.log /tmp/pt-s.log
  echo "perftest $tool $size server[$sf] client[$cf]: ${line:-FAILED}"
}
for pass in 1 2; do
  echo "##### pass $pass: $(uptime)"
  pt ib_send_lat 64 "" ""; pt ib_send_lat 64 "-e" ""; pt ib_send_lat 64 "-e" "-e"
  pt ib_read_lat 4096 "" ""; pt ib_read_lat 4096 "" "-e"
  pt ib_write_lat 4096 "" ""; pt ib_write_lat 4096 "-e" ""
  echo "=== rows $pass: $(uptime)"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab20/hs_err_%p.log $C2 -cp "$JAR" \
    org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 10000 --out ".cache/ab20/rows-$pass" --chunk-only --rounds 1 \
    --sizes 64 --thresholds 4096 > .cache/ab20/rows-$pass.log 2>&1
  grep -E 'chunk-|Chunk|goal' .cache/ab20/rows-$pass.log | grep -v '^\[bench\]' | head -40
done
ls .cache/ab20/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
