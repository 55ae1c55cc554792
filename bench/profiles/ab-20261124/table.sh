#!/bin/bash
# table.sh LOG: the one-boot log of a script here as a Markdown table (run, series, min/p50/p99/p99.9 µs, calls).
awk '
  /^=== / { run = $2; sub(/:$/, "", run); next }
  /\] (ib_send_lat|verbs-|rpc-)/ {
    s = $0; sub(/^ *[0-9.]+ \[ *[0-9]+\/ *[0-9]+\] /, "", s); n = split(s, f, / +/)
    op = f[1]; i = 2; if (f[2] == "null" || f[2] == "echo") { op = op " " f[2]; i = 3 }
    calls = f[n - 1]; sub(/^\(/, "", calls)
    printf "| %s | %s | %s | %s | %s | %s | %s |\n", run, op, f[i + 3], f[i + 5], f[i + 7], f[i + 9], calls
  }
  /^exit [^0]/ { printf "| %s | **%s** | | | | | |\n", run, $0 }
' "$1" | { echo "| run | series | min | p50 | p99 | p99.9 | calls |"; echo "|---|---|---:|---:|---:|---:|---:|"; cat; }
