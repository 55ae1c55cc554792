#!/bin/bash
# One boot: ChunkTimeline (a per-step timeline of chunked calls; needs probe.patch applied
# to the build) for each jar in RUNS (.cache/ab/tl-NAME.jar; a run is NAME or NAME:JAVA-FLAGS,
# commas for spaces), with the guest's uptime beside each JVM. SHAPES: ChunkTimeline's args.
cd "$(dirname "$0")/../../.."
echo "guest: $(nproc) CPUs, $(uname -r)"
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
for run in ${RUNS:-base}; do
  v=${run%%:*}; extra=""; [[ $run == *:* ]] && extra=${run#*:}; extra=${extra//,/ }
  echo "=== $run: $(uptime)"
  # shellcheck disable=SC2086
  $J --enable-native-access=ALL-UNNAMED -XX:ErrorFile=.cache/ab/hs_err_%p.log $C2 $extra \
    -cp ".cache/ab/tl-$v.jar" org.rpcrdma.bench.verbs.ChunkTimeline ${SHAPES:-echo:1024:1024:chunk:reg} 2>&1
  echo "exit $?; $(uptime)"
done
