#!/bin/bash
# One boot: the chunk rows (C2-only, --prewarm-ms 5000, one round) per RUNS entry:
#   none   the bench as it is;
#   pin    the calling threads ("java") on CPU 1, the server's threads ("rpcrdma-server*") on CPU 0;
#   event  the client on completion events (--event);
# to see how much of the 4 KiB rows is where the threads land.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
D=.cache/ab21
for R in ${RUNS:-none pin event pin none}; do
  extra=""; [ "$R" = event ] && extra="--event"
  echo "=== $R $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  log="$D/pin-$R-$(date +%s).log"
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=$D/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
    -cp "$D/${JAR:-main}.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 5000 --out "$D/pin-$R" \
    --chunk-only --rounds 1 --sizes 64 --thresholds 4096 $extra > "$log" 2>&1 &
  pid=$!
  if [ "$R" = pin ]; then
    ( while kill -0 $pid 2>/dev/null; do
        for t in /proc/$pid/task/*; do
          c=$(cat $t/comm 2>/dev/null)
          case "$c" in
            java) taskset -p -c 1 ${t##*/} >/dev/null 2>&1 ;;
            rpcrdma-server*) taskset -p -c 0 ${t##*/} >/dev/null 2>&1 ;;
          esac
        done
        sleep 1
      done ) &
  fi
  wait $pid
  grep -E 'pre-warm|^  C2  chunk-' "$log"
  grep -E '^\[bench\] chunk-(long|ddp-read) .*4096 B' "$log" | sed 's/^\[bench\] //'
  grep -o 'busiest.*' "$log" | sed 's/busiest: //' | tr '\n' '|'; echo
done
ls $D/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
