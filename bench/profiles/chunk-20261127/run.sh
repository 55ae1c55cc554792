#!/bin/bash
# One boot: the chunk rows profiled, then timed. First a JVM per jar of PROFILE_RUNS (default
# "before after") with async-profiler (itimer, per thread, collapsed stacks into
# .cache/ab/prof-NAME.collapsed) and no perftest, for where the time goes and the per-call
# counts; then the timed rows of ../chunkperf-20261126/rows.sh for AB_RUNS (default "before
# after"), beside perftest. Jars at .cache/ab/chunk-NAME.jar, the profiler at
# .cache/ab/libasyncProfiler.so (async-profiler 4.1, linux-x64).
cd "$(dirname "$0")/../../.."
ap="$PWD/.cache/ab/libasyncProfiler.so"
for v in ${PROFILE_RUNS-before after}; do
  RUNS=$v ARGS="--perftest none" PREWARM=3000 \
    JFLAGS="-agentpath:$ap=start,event=itimer,interval=1ms,threads,collapsed,file=$PWD/.cache/ab/prof-$v.collapsed" \
    bench/profiles/chunkperf-20261126/rows.sh
done
RUNS="${AB_RUNS:-before after}" bench/profiles/chunkperf-20261126/rows.sh
