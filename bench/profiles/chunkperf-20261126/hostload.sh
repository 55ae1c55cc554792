#!/bin/bash
# The host's load beside a guest run: `hostload.sh OUT &` before rdma-vm, kill it after.
while :; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 20; done > "${1:?OUT}"
