#!/bin/bash
# One boot, two builds: the goal rounds with every call shape (64 B NULL at 4 KiB inline, each
# completion mode), 3 rounds per JVM, before.jar then after.jar under C2 (after the JIT
# pre-warm), then under C1, with GC and safepoint logs (.cache/ab/shapes/NAME.vmlog); then one
# round of each under C1 with a JFR recording (.cache/ab/shapes/NAME.jfr: execution samples
# every 10 ms, parks, monitor waits) for the profile. Copy the two builds'
# bench/target/benchmarks.jar to .cache/ab/before.jar and .cache/ab/after.jar first.
. "$(dirname "$0")/lib.sh"
log() { echo "-Xlog:gc,safepoint:file=.cache/ab/shapes/$1.vmlog:uptime"; }
for jit in c2 c1; do
  for b in before after; do
    if [[ $jit == c2 ]]; then
      rounds "$b-c2" ".cache/ab/$b.jar" "$C2 $(log "$b-c2")" --rounds 3 --prewarm-ms 5000
    else
      rounds "$b-c1" ".cache/ab/$b.jar" "$C1 $(log "$b-c1")" --rounds 3
    fi
  done
done
for b in before after; do
  rounds "$b-c1-jfr" ".cache/ab/$b.jar" \
    "$C1 -XX:StartFlightRecording=filename=.cache/ab/shapes/$b-c1.jfr,settings=profile" --rounds 1 --perftest none
done
crashes
