#!/bin/bash
# perf report (in the guest, for its kernel's symbols) of kperf-rows.data's second half: the
# measured 4 KiB long-call row only.
cd "$(dirname "$0")/../../.."
D=.cache/ab21
R="perf report -i $D/kperf-rows.data --stdio --no-children -g none --time ${SLICE:-50%-100%}"
echo "=== by comm"; $R --sort comm 2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
echo "=== by comm,dso"; $R --sort comm,dso 2>/dev/null | grep -v '^#' | grep -v '^$' | head -20
echo "=== kernel symbols, all threads"; $R --sort sym --dsos '[kernel.kallsyms]' 2>/dev/null | grep -v '^#' | grep -v '^$' | head -45
for c in rpcrdma-server- java rpcrdma-client-; do
  echo "=== $c: kernel symbols"; $R --comms "$c" --sort sym --dsos '[kernel.kallsyms]' 2>/dev/null | grep -v '^#' | grep -v '^$' | head -25
done
echo "=== server thread, call graphs into the kernel (caller)"
perf report -i $D/kperf-rows.data --stdio --no-children --time ${SLICE:-50%-100%} --comms rpcrdma-server- --sort dso -g caller,0.5,callee --percent-limit 5 2>/dev/null | grep -v '^$' | head -150
