#!/bin/bash
# One boot: where the kernel's time goes in a 4 KiB RDMA Read, in perftest and in our long call.
# perf record -a -g over (1) ib_read_lat 4 KiB busy, (2) ib_read_lat -e (the reader on events,
# the rows' server mode), (3) the bench's chunk rows, recording over the first 4 KiB row
# (chunk-long, measured for 15 s). Per run: ksoftirqd's CPU per operation from schedstat,
# and perf report by comm and symbol.
cd "$(dirname "$0")/../../.."
D=.cache/ab21
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ks() { local s=0; for p in $(pgrep ksoftirqd); do s=$((s + $(cut -d' ' -f1 /proc/$p/schedstat))); done; echo $s; }
rep() { perf report -i "$1" --stdio --no-children --sort comm,dso,sym -g none --percent-limit 0.7 2>/dev/null | grep -v '^#' | grep -v '^$' | head -${2:-60}; }
N=20000
for mode in busy e; do
  e=""; [ "$mode" = e ] && e="-e"
  ib_read_lat -R -F -p 18600 -s 4096 -n $N > /dev/null 2>&1 &
  sleep 2
  k0=$(ks); t0=$(date +%s%N)
  perf record -q -a -g -F 999 -o $D/kperf-read-$mode.data -- ib_read_lat -R -F -p 18600 -s 4096 -n $N $e 10.77.0.1 > $D/kperf-read-$mode.txt 2>&1
  k1=$(ks); t1=$(date +%s%N)
  wait
  echo "=== ib_read_lat 4096 $mode: $(grep -E '^ *4096' $D/kperf-read-$mode.txt | tr -s ' ')"
  echo "ksoftirqd on CPU per read: $(( (k1 - k0) / N / 1000 )) us; wall per read $(( (t1 - t0) / N / 1000 )) us"
  rep $D/kperf-read-$mode.data 45
done
log=$D/kperf-rows.log
$J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=$D/hs_err_%p.log -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
  -cp "$D/main.jar" org.rpcrdma.bench.verbs.LatencyCurve --prewarm-ms 5000 --out "$D/kperf-rows" \
  --chunk-only --rounds 1 --sizes 64 --thresholds 4096 --measure-ms 20000 > "$log" 2>&1 &
pid=$!
until grep -q '^\[  5/ 16\]' $log || ! kill -0 $pid 2>/dev/null; do sleep 1; done
grep -E 'JIT settled' $log | tail -1
perf record -q -a -g -F 999 --timestamp-boundary -o $D/kperf-rows.data -- sleep 30
echo "=== perf recorded over: $(grep -E '^\[  [6-7]/ 16\]' $log)"
wait $pid
grep -E 'pre-warm|^  C2  chunk-' "$log"
grep -E '^\[bench\] chunk-long .*4096 B' "$log" | sed 's/^\[bench\] //'
rep $D/kperf-rows.data 80
bash bench/profiles/idle-20261127/krep.sh
ls $D/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
