#!/bin/bash
# One boot: the goal rounds (NULL calls, every shape, every completion mode; no chunk rows)
# of two jars under C1 (../c1-20261126/run-guest.sh: OLD then NEW, ROUNDS rounds each), then
# NEW's goal rounds under C2-only after a pre-warm until the JIT is quiet (--prewarm-ms 10000),
# as scripts/bench's curve JVM runs them. usage: run.sh OUT OLD.jar NEW.jar
set -u
OUT=$1 OLD=$2 NEW=$3
cd "$(dirname "$0")/../../.."
ROUNDS=${ROUNDS:-3} WARMUP_MS=${WARMUP_MS:-2000} MEASURE_MS=${MEASURE_MS:-4000} \
  bench/profiles/c1-20261126/run-guest.sh "$OUT" "c1-old=$OLD" "c1-new=$NEW"
echo "[c2-new] $(date -u +%T) guest load: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/lib/jvm/temurin-25-jdk-amd64/bin/java --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation \
  -XX:CompileThresholdScaling=0.1 -cp "$NEW" org.rpcrdma.bench.verbs.LatencyCurve --out "$OUT/c2-new" \
  --rounds-only --rounds "${ROUNDS:-3}" --no-chunk-rows --prewarm-ms 10000 --warmup-ms "${WARMUP_MS:-2000}" \
  --measure-ms "${MEASURE_MS:-4000}" > "$OUT/c2-new.log" 2>&1
echo "[c2-new] exit $? $(date -u +%T)"
for l in c1-old c1-new c2-new; do echo "== $l"; sed -n '/^Goals:/,$p' "$OUT/$l.log" | head -20; done
