#!/bin/bash
# by comm, over kperf.sh's recording of the chunk rows (its --time slice printed nothing: see README)
cd "$(dirname "$0")/../../.."
cat /proc/cmdline
perf report -i .cache/ab21/kperf-rows.data --stdio --no-children -g none --time 50%-100% --sort comm 2>&1 | head -20
perf report -i .cache/ab21/kperf-rows.data --stdio --no-children -g none --sort comm 2>&1 | grep -v "^#" | head -20
