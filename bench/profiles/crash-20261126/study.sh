#!/bin/bash
# The guest's JVM crash study, one boot: N rounds, each round one JVM of every CELL given,
# interleaved, each JVM running for a fixed SECONDS. Run inside the guest from the
# repository root (jar and PlainEventLoad built on the host first, see README.md):
#   scripts/rdma-vm run --timeout 3000 -- bench/profiles/crash-20261126/study.sh N SECONDS CELL...
# CELL = WORKLOAD-JIT. WORKLOAD: ours = our event-mode Soak (client and server in the JVM,
#   both on completion events, 8 echo calls outstanding, 2 backward calls beside them, a
#   System.gc() every 20 calls); plain = PlainEventLoad (no RDMA, none of our code: an FFM
#   poll(2) downcall wait, park/unpark hand-offs, heap churn).
# JIT: c2 = the bench's C2-only flags (-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1),
#   tiered = the JDK default, c1 = -XX:TieredStopAtLevel=1. Every JVM: -Xmx64m (many G1
#   collections, so a corrupted root is met soon) and its own -XX:ErrorFile.
# Prints one line per JVM (exit status, seconds, work done, GC pauses, guest load) and the
# hs_err head of each crash; the outputs stay in $OUT (default .cache/crash/<time>).
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
N=${1:?N}; SECS=${2:?SECONDS}; shift 2
JAR=${JAR:-.cache/crash/ours.jar}
PLAIN=${PLAIN:-.cache/crash/plain}
OUT=${OUT:-.cache/crash/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
echo "[study] $(uname -r), $(nproc) vCPUs, TCG thread=${RDMA_VM_TCG_THREAD:-multi (default)}, N=$N, ${SECS} s per JVM, cells: $*, out $OUT"
jit() {
  case $1 in
    c2) echo "-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1" ;;
    c1) echo "-XX:TieredStopAtLevel=1" ;;
    tiered) echo "" ;;
    *) echo "unknown JIT $1" >&2; exit 2 ;;
  esac
}
one() {
  local cell=$1 i=$2 name="$1-$2" rc=0 t0=$SECONDS load work
  local flags
  flags="$(jit "${cell#*-}") -Xmx64m -XX:ErrorFile=$OUT/hs_err_$name.log -Xlog:gc:file=$OUT/$name.gc:uptime"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  case ${cell%%-*} in
    ours)
      # shellcheck disable=SC2086
      timeout -k 10 "$SECS" "$J" --enable-native-access=ALL-UNNAMED $flags -cp "$JAR" \
        org.rpcrdma.bench.verbs.Soak --event --backward --calls 100000000 --every 20 \
        > "$OUT/$name.out" 2>&1 || rc=$?
      work="$(awk '$1 ~ /^[0-9]+$/ {n = $1} END {print n + 0}' "$OUT/$name.out") calls" ;;
    plain)
      # shellcheck disable=SC2086
      timeout -k 10 $((SECS + 60)) "$J" $flags -cp "$PLAIN" PlainEventLoad "$SECS" \
        > "$OUT/$name.out" 2>&1 || rc=$?
      work="$(grep -o '^plain: [0-9]* messages' "$OUT/$name.out" | cut -d' ' -f2) messages" ;;
  esac
  printf '%-14s exit %3d after %3d s  %-16s %4d GC pauses  load %s%s\n' "$name" "$rc" $((SECONDS - t0)) \
    "$work" "$(grep -c 'Pause' "$OUT/$name.gc" 2>/dev/null)" "$load" \
    "$([[ -f $OUT/hs_err_$name.log ]] && echo '  CRASH')"
  if [[ -f $OUT/hs_err_$name.log ]]; then
    grep -m6 -E '^# +(SIGSEGV|SIGILL|SIGBUS|Internal Error)|^# Problematic frame|^# [CJVjv] |^Current thread|^siginfo' \
      "$OUT/hs_err_$name.log" | sed 's/^/    /'
  fi
}
for i in $(seq 1 "$N"); do
  for cell in "$@"; do
    one "$cell" "$i"
  done
done
echo "[study] crashes: $(find "$OUT" -name 'hs_err_*' | wc -l) of $((N * $#)) JVMs"
