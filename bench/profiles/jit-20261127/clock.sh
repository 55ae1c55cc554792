#!/bin/bash
cd "$(dirname "$0")"
echo "cmdline: $(cat /proc/cmdline)"
echo "current: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource)"
grep -o -w 'constant_tsc\|nonstop_tsc\|tsc_known_freq\|rdtscp' /proc/cpuinfo | sort | uniq -c
dmesg | grep -i -E 'clocksource|tsc' | head -12
/usr/lib/jvm/temurin-25-jdk-amd64/bin/java Clock.java
