#!/bin/bash
# One boot under single-threaded TCG (run with RDMA_VM_TCG_THREAD=single on the host: the two
# vCPUs take turns on one host thread, so no vCPU runs JIT code while another patches it):
# busy mode, 64 B at 4 KiB, the JIT pre-warm --prewarm-ms 5000, one round of C1-only, C2-only
# (x0.1 thresholds) and tiered (the JDK default: does it still crash?), after ib_send_lat.
JAR=.cache/ab/final.jar
. "$(dirname "$0")/lib.sh"
W="--warmup-ms 3000 --prewarm-ms 5000"
run r0-c1 "-XX:TieredStopAtLevel=1" --perftest ib_send_lat $W
run r1-c2-scale "-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1" --perftest none $W
run r1-tiered "" --perftest none $W
crashes
