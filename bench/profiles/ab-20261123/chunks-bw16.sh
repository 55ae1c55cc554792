#!/bin/bash
# In one boot: 1 MiB and 16 MiB round trips through chunks (busy-poll, C1-only, 4 KiB
# inline) against perftest ib_read_bw / ib_write_bw at the same sizes; run from the repository root:
#   scripts/rdma-vm run --timeout 1500 -- bench/profiles/ab-20261123/chunks-bw16.sh
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
for s in 1048576 16777216; do
  n=$(( s > 1048576 ? 40 : 200 ))
  for t in ib_write_bw ib_read_bw; do
    echo "=== $t -s $s -n $n"
    $t -d "$RDMA_VM_DEV" -s $s -n $n -F >/tmp/$t.srv 2>&1 & sleep 1
    $t -d "$RDMA_VM_DEV" -s $s -n $n -F "$RDMA_VM_IP" 2>&1 | grep -E "^ *#bytes|^ *$s"; wait
  done
done
echo "=== rpc 1 MiB and 16 MiB echo/null at 4 KiB inline (busy-poll)"
$J --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.LatencyCurve --perftest none --sizes 1048576,16777216 --thresholds 4096 --warmup-ms 3000 --measure-ms 10000 --out /tmp/chunks16 2>&1 | grep -E '^\[ *[0-9]+/'
