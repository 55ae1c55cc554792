#!/bin/bash
# One boot: a chunked call at 1 KiB (1,024 B: a long call; echo: + a Reply chunk) with both ends
# busy-polling, then the client busy and the server adaptive, then both on events, C2 after the
# pre-warm: are chunked calls slow because two spinning threads starve rxe's kernel work?
cd "$(dirname "$0")/../../.."
. bench/profiles/ab-20261124/lib.sh
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1"
A="--perftest none --no-modes --sizes 956,1024 --thresholds 1024 --warmup-ms 1000 --measure-ms 4000 --prewarm-ms 5000"
JAR=.cache/ab/final.jar run busy "$C2" $A
JAR=.cache/ab/final.jar run mixed "$C2" $A --server-spin 100
JAR=.cache/ab/final.jar run event "$C2" $A --event
crashes
