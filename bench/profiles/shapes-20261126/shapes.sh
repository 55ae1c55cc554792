#!/bin/bash
# One boot: the goal rounds with every call shape, under C2 (after the JIT pre-warm) and
# under C1, 3 rounds each, for the jar(s) named (default .cache/ab/before.jar), then a JFR
# recording of one C1 round (execution samples every 10 ms, parks, monitor waits).
. "$(dirname "$0")/lib.sh"
JARS=("${@:-.cache/ab/before.jar}")
for jar in "${JARS[@]}"; do
  n=$(basename "$jar" .jar)
  rounds "$n-c2" "$jar" "$C2" --rounds 3 --prewarm-ms 5000
  rounds "$n-c1" "$jar" "$C1" --rounds 3
done
crashes
