#!/bin/bash
# One boot: is the guest's C2 crash the emulator's or ours? N (default 3) JVMs of each,
# interleaved, all with the bench's C2 flags (-XX:-TieredCompilation
# -XX:CompileThresholdScaling=0.1) and a small heap (-Xmx64m: many G1 collections, so a
# corrupted root is met soon): our event-mode Soak (echo calls, 8 outstanding, backward
# calls beside them; server and client in the JVM, both on completion events), and
# PlainEventLoad (no RDMA, none of our code: a poll(2) downcall wait, park/unpark wake-ups,
# heap churn). Prints each JVM's exit status and its hs_err summary line if it crashed.
# PlainEventLoad is compiled on the host first: javac -d .cache/ab/plain bench/profiles/shapes-20261126/PlainEventLoad.java
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
C2="-XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 -Xmx64m"
N=${1:-3}
JAR=${JAR:-.cache/ab/after.jar}
mkdir -p .cache/ab/crash
one() {
  local name=$1; shift
  local t0=$SECONDS rc=0
  # shellcheck disable=SC2086
  timeout -k 5 150 "$J" --enable-native-access=ALL-UNNAMED $C2 -XX:ErrorFile=.cache/ab/crash/hs_err_$name.log "$@" \
    > ".cache/ab/crash/$name.out" 2>&1 || rc=$?
  printf '%-10s exit %3d after %3d s  %s\n' "$name" "$rc" $((SECONDS - t0)) \
    "$(tail -1 ".cache/ab/crash/$name.out" | cut -c1-120)"
  if [[ -f .cache/ab/crash/hs_err_$name.log ]]; then
    grep -m3 -E '^# (SIGSEGV|Problematic frame|[CJVj] )|^# +[A-Za-z].*\+0x' ".cache/ab/crash/hs_err_$name.log"
  fi
}
for i in $(seq 1 "$N"); do
  one "ours-$i" -cp "$JAR" org.rpcrdma.bench.verbs.Soak --event --backward --calls 20000 --every 5000 --out ".cache/ab/crash/soak-$i"
  one "plain-$i" -cp .cache/ab/plain PlainEventLoad 60
done
echo "crash logs: $(ls .cache/ab/crash/hs_err_* 2>/dev/null | wc -l)"
