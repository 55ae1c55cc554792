#!/bin/bash
# Where a chunked call waits: JFR (parks, monitor waits/enters over 50 us, CPU samples) over a
# C2 LatencyCurve at 1,024 B under a 1 KiB threshold (a long call; the echo's reply through a
# Reply chunk), busy-poll.
cd "$(dirname "$0")/../../.."
J=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
cat > /tmp/park.jfc <<'X'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.ThreadPark"><setting name="enabled">true</setting><setting name="stackTrace">true</setting><setting name="threshold">50 us</setting></event>
  <event name="jdk.JavaMonitorEnter"><setting name="enabled">true</setting><setting name="stackTrace">true</setting><setting name="threshold">50 us</setting></event>
  <event name="jdk.JavaMonitorWait"><setting name="enabled">true</setting><setting name="stackTrace">true</setting><setting name="threshold">50 us</setting></event>
  <event name="jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">5 ms</setting></event>
  <event name="jdk.NativeMethodSample"><setting name="enabled">true</setting><setting name="period">5 ms</setting></event>
</configuration>
X
$J --enable-native-access=ALL-UNNAMED -XX:-TieredCompilation -XX:CompileThresholdScaling=0.1 \
  -XX:StartFlightRecording=filename=$PWD/.cache/ab/chunk.jfr,settings=/tmp/park.jfc \
  -cp ${JAR:-.cache/ab/final.jar} org.rpcrdma.bench.verbs.LatencyCurve --sizes 1024 --thresholds 1024 --perftest none \
  --no-modes --warmup-ms 1000 --measure-ms 5000 --prewarm-ms 5000 --out .cache/ab/out-jfr 2>&1 | grep -E '^\[|rror'
ls -la .cache/ab/chunk.jfr
