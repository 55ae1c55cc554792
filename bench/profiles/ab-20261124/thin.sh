#!/bin/bash
# One boot (hpet): the adaptive server poller reading the clock at every poll (before) against
# once every 16 empty polls (after), C2 after the pre-warm, client busy-polling and the server
# on adaptive events (100 us), 64 B at 4 KiB; interleaved twice.
cd "$(dirname "$0")/../../.."
. bench/profiles/ab-20261124/lib.sh
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
for r in 1 2; do
  for v in before after; do
    JAR=.cache/ab/thin-$v.jar run thin-$r-$v "$C2" --perftest none --server-spin 100 --no-modes --warmup-ms 1000 --measure-ms 4000 --prewarm-ms 5000
  done
done
crashes
