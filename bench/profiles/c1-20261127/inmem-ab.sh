#!/bin/bash
# InMemoryCallBenchmark A/B, base (main) then wr (this branch), C1 then C2, -bm sample p50 and -prof gc
cd "$(dirname "$0")"
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
for jit in C1 C2; do
  F=""; [ $jit = C1 ] && F="-jvmArgsAppend -XX:TieredStopAtLevel=1"
  for jar in base wr; do
    echo "== $jar $jit $(uptime)"
    $J -jar $jar.jar 'InMemoryCallBenchmark.(callAndWait|callAndRead|futureGet)$' -p size=40 -bm sample -tu ns \
      -f 1 -wi 2 -w 2s -i 3 -r 2s $F -prof gc 2>&1 | grep -E 'InMemoryCallBenchmark\.[a-zA-Z]+:(p0.50|gc.alloc.rate.norm) '
  done
done
echo "$(uptime)"
