#!/bin/bash
# One boot (tsc=reliable): is the busy NULL call's p50 bimodal from one connection to the next,
# and does it follow the guest clocksource or where the spinning threads sit / get preempted?
# hpet and tsc alternated 3 times; each a C2 LatencyCurve at 0 B / 4 KiB with the modes, a
# no sampler (one forking under TCG cost the calls 10 ms at p99).
cd "$(dirname "$0")/../../.."
JAR=.cache/ab/s8.jar
. bench/profiles/ab-20261124/lib.sh
CS=/sys/devices/system/clocksource/clocksource0
cat $CS/available_clocksource
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
sampler() {
  while sleep 2; do
    pid=$(pgrep -f LatencyCurve | head -1); [ -z "$pid" ] && continue
    line=""
    for t in /proc/$pid/task/*; do
      read -r -a st < "$t/stat" 2>/dev/null || continue
      # fields after the comm: st[13]=utime st[38]=processor; name may hold spaces: use status
      name=$(sed -n 's/^Name:\t//p' "$t/status" 2>/dev/null)
      niv=$(sed -n 's/^nonvoluntary_ctxt_switches:\t//p' "$t/status" 2>/dev/null)
      vol=$(sed -n 's/^voluntary_ctxt_switches:\t//p' "$t/status" 2>/dev/null)
      ut=$(awk '{print $14+$15, $39}' "$t/stat" 2>/dev/null)
      set -- $ut
      [ "${1:-0}" -gt 50 ] && line+=" [$name cpu=$2 t=$1 vol=$vol inv=$niv]"
    done
    echo "  SAMPLE $(date +%s)$line $(awk '/^cpu[01]/{printf " %s:si=%s", $1, $8}' /proc/stat)"
  done
}
for cs in hpet tsc hpet tsc hpet tsc; do
  echo $cs > $CS/current_clocksource; echo "##### clocksource $(cat $CS/current_clocksource)"
  run $cs "$C2" --sizes 64 --perftest ib_send_lat --warmup-ms 1000 --measure-ms 3000 --prewarm-ms 5000
  grep -E '^(rpc-4k|mode-|ib_send|verbs-2)' .cache/ab/out/table.txt
  sed -n '/^Goals/,/raw verbs/p' .cache/ab/out/table.txt
done
crashes
