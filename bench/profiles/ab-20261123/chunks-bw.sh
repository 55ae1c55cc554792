#!/bin/bash
# In one boot: 1 MiB round trips through chunks vs perftest ib_read_bw / ib_write_bw.
cd "$(dirname "$0")/../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
for t in ib_write_bw ib_read_bw; do
  echo "=== $t -s 1048576"
  $t -d "$RDMA_VM_DEV" -s 1048576 -n 200 -F >/tmp/$t.srv 2>&1 & sleep 1
  $t -d "$RDMA_VM_DEV" -s 1048576 -n 200 -F "$RDMA_VM_IP" 2>&1 | grep -E "^ *#bytes|^ *1048576"; wait
done
echo "=== rpc 1 MiB echo/null at 4 KiB inline (event mode)"
$J --enable-native-access=ALL-UNNAMED -XX:TieredStopAtLevel=1 -cp bench/target/benchmarks.jar org.rpcrdma.bench.verbs.LatencyCurve --event --perftest none --sizes 65536,1048576 --thresholds 4096 --warmup-ms 3000 --measure-ms 8000 --out .cache/ab/out-chunks 2>&1 | grep -E '^\[ *[0-9]+/'
