#!/bin/bash
# A/B of one change in one boot: before.jar vs after.jar, interleaved, same flags.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
ARGS="--sizes ${AB_SIZES:-64} --thresholds 4096 --warmup-ms ${AB_WARM:-2000} --measure-ms ${AB_MEASURE:-5000}"
run() { # jar mode jit tag perftest
  echo "=== $4 ($1 $2 $3)"
  $J --enable-native-access=ALL-UNNAMED $3 -cp .cache/ab/$1.jar org.rpcrdma.bench.verbs.LatencyCurve ${2:+$2} --perftest $5 $ARGS --out .cache/ab/out-$4 2>&1 | grep -E '^\[ *[0-9]+/'
}
C1=-XX:TieredStopAtLevel=1; C2=-XX:-TieredCompilation
run after --event $C1 r1-after-event ib_send_lat
for r in 1 2; do
  for v in before after; do
    run $v --event $C1 r$r-$v-event none
    run $v "" $C1 r$r-$v-busy none
  done
done
run after --event $C2 c2-after-event none
run after "" $C2 c2-after-busy none
