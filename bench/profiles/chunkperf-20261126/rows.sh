#!/bin/bash
# One boot: the chunk rows (ChunkRows: long call, Reply-chunk echo, DDP WRITE, DDP READ at
# 4 and 64 KiB, server on completion events, client busy) beside ib_send_lat / ib_read_lat /
# ib_write_lat, for each run named in RUNS (default: before after; a run is NAME or
# NAME:EXTRA-ARGS, e.g. before:--event, with commas for spaces), interleaved ROUNDS times
# (default 1), each JVM C2-only after the pre-warm, as scripts/bench runs the curve.
# Copy the jars to .cache/ab/chunk-NAME.jar first. Prints uptime beside every JVM (the
# guest's; record the host's beside it from outside, e.g. hostload.sh), the guest's CPUs and
# its ksoftirqd threads (ksoftirqd/N is bound to CPU N); per shape each JVM prints counts that
# depend less on load than times do (ChunkRows: work requests, tasklets per CPU, context
# switches, our threads' CPUs). RUNS="before after before after" interleaves an A/B.
cd "$(dirname "$0")/../../.."
echo "guest: $(nproc) CPUs, $(uname -r); $(ps -eo pid,psr,comm | awk '/ksoftirqd/ {printf "%s on cpu%s; ", $3, $2}')"
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
mkdir -p .cache/ab
for i in $(seq "${ROUNDS:-1}"); do
  for run in ${RUNS:-before after}; do
    v=${run%%:*}; extra=""; [[ $run == *:* ]] && extra=${run#*:}; extra=${extra//,/ }
    echo "=== $run (pass $i): $(uptime)"
    # shellcheck disable=SC2086
    $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $C2 ${JFLAGS:-} \
      -cp ".cache/ab/chunk-$v.jar" org.rpcrdma.bench.verbs.LatencyCurve --chunk-only --rounds "${BENCH_ROUNDS:-1}" \
      --prewarm-ms "${PREWARM:-3000}" --sizes 64 --thresholds 4096 --out ".cache/ab/out-$v-$i" ${ARGS:-} $extra 2>&1 |
      grep --line-buffered -vE '^\s*$'
    echo "exit ${PIPESTATUS[0]}; $(uptime)"
  done
done
for c in /sys/class/infiniband/*/ports/1/hw_counters; do
  echo "rxe counters ($c):"; grep -H . "$c"/* 2>/dev/null | sed 's|.*/||' | tr '\n' ' '; echo
done
ls .cache/ab/hs_err_* 2>/dev/null && echo "JVM CRASH LOGS ABOVE"
true
