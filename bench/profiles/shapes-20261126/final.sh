#!/bin/bash
# One boot for the whole report: the goal rounds with every call shape, one round per JVM,
# before.jar and after.jar under C1 (with a JFR recording each, .cache/ab/shapes/NAME.jfr:
# execution samples every 10-20 ms, parks, monitor waits; GC and safepoint logs in
# NAME.vmlog), then under C2 after the JIT pre-warm; then the C2 crash study (crash.sh, N
# JVMs of each kind, default 3).
. "$(dirname "$0")/lib.sh"
vm() { echo "-Xlog:gc,safepoint:file=.cache/ab/shapes/$1.vmlog:uptime -XX:StartFlightRecording=filename=.cache/ab/shapes/$1.jfr,settings=profile"; }
for b in before after; do
  rounds "$b-c1" ".cache/ab/$b.jar" "$C1 $(vm "$b-c1")" --rounds 1
done
for b in before after; do
  rounds "$b-c2" ".cache/ab/$b.jar" "$C2 -Xlog:gc,safepoint:file=.cache/ab/shapes/$b-c2.vmlog:uptime" --rounds 1 --prewarm-ms 5000
done
crashes
bench/profiles/shapes-20261126/crash.sh "${CRASH_RUNS:-3}"
