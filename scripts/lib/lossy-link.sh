#!/usr/bin/env bash
# lossy-link.sh - an impaired link between two Soft-RoCE devices inside one rdma-vm guest
# (boot it with `scripts/rdma-vm run --modules "veth sch_netem"`).
#
# usage (as root, in the guest):
#   lossy-link.sh up               veth pair lc <-> ls, rxe_c on lc (client, 10.88.0.1) and
#                                  rxe_s on ls (server, 10.88.0.2), both ports ACTIVE, a netem
#                                  qdisc on each end (no impairment yet); prints the
#                                  variables of the link (below) for `eval`
#   lossy-link.sh set NETEM...     the impairment, on both ends (both directions) at once:
#                                  `set loss 1%`, `set delay 1ms 0.5ms reorder 25%`,
#                                  `set duplicate 1%`, `set loss 100%` (an outage), `set`
#                                  (a clean link again); any `tc ... netem` parameters
#   lossy-link.sh outage SECS      100 % loss for SECS seconds, then the impairment before it
#   lossy-link.sh counters         rxe's hw_counters of both devices, one "dev name value" a line
#   lossy-link.sh show             the qdiscs and their drop counts
#   lossy-link.sh down             removes the devices, the veth pair and the routing
#
# Variables of the link (printed by `up`): LOSSY_CLIENT_DEV LOSSY_CLIENT_IP LOSSY_SERVER_DEV
# LOSSY_SERVER_IP LOSSY_LINK (this script's path).
#
# One network namespace, not two: on this kernel (6.1) rxe opens its UDP 4791 socket and
# looks up its routes in the initial namespace only, so an rxe device on a veth end moved
# into another namespace never receives what arrives there (the frames go to that
# namespace's UDP stack, where nobody listens on 4791). Both ends therefore stay in the
# initial namespace, and policy routing makes traffic between the two local addresses really
# cross the veth (otherwise the kernel and rdma_cm loop it through lo and rxe never
# transmits):
# - locally generated packets to the other address leave through our own veth end
#   ("iif lo" = output lookups with no bound device);
# - lookups bound to a veth end use that end: rxe's own route lookups, and rdma_cm's
#   validate_net_dev() on the passive side, which looks up with oif=<server end> and no iif
#   and REJECTs the connection (reason 28) unless that resolves to the server end;
# - the local table moves behind these rules; packets from a local source address are
#   accepted (accept_local, no rp_filter); permanent neighbours, IPv6 off on the veth.
set -euo pipefail

C_IF=lc S_IF=ls C_DEV=rxe_c S_DEV=rxe_s C_IP=10.88.0.1 S_IP=10.88.0.2
STATE=/run/lossy-link.netem   # the impairment in force, for `outage` to restore
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/$(basename "${BASH_SOURCE[0]}")

fail() { echo "lossy-link: FAILED: $*" >&2; exit 1; }

wait_active() {   # DEV
  local s=
  for _ in $(seq 100); do
    s=$(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || true)
    [[ $s == *ACTIVE* ]] && return 0
    sleep 0.1
  done
  fail "$1 port 1 is not ACTIVE after 10 s (state: ${s:-none})"
}

up() {
  [[ -d /sys/module/veth ]] || fail "no veth module (boot with --modules \"veth sch_netem\")"
  [[ -d /sys/module/sch_netem ]] || fail "no sch_netem module (boot with --modules \"veth sch_netem\")"
  command -v tc > /dev/null || fail "no tc (package iproute2)"
  ip link add $C_IF type veth peer name $S_IF || fail "ip link add $C_IF type veth"
  local d
  for d in $C_IF $S_IF; do
    echo 1 > /proc/sys/net/ipv6/conf/$d/disable_ipv6
    ip link set $d up
  done
  ip addr add $C_IP/32 dev $C_IF
  ip addr add $S_IP/32 dev $S_IF
  ip route add $S_IP dev $C_IF src $C_IP table 100
  ip route add $C_IP dev $S_IF src $S_IP table 101
  ip rule add pref 10 iif lo to $S_IP lookup 100
  ip rule add pref 11 iif lo to $C_IP lookup 101
  ip rule add pref 12 oif $C_IF lookup 100
  ip rule add pref 13 oif $S_IF lookup 101
  ip rule add pref 100 lookup local
  ip rule del pref 0
  for d in all $C_IF $S_IF; do
    echo 1 > /proc/sys/net/ipv4/conf/$d/accept_local
    echo 0 > /proc/sys/net/ipv4/conf/$d/rp_filter
  done
  # Frames of one flow arrive in order, as through a real NIC (RSS keeps a flow on one queue):
  # a veth hands each frame to the backlog of the CPU that sent it, so two frames of one QP
  # sent from the two vCPUs could swap; rxe answers that with a PSN sequence NAK, after which
  # its requester (6.1) can stall the QP. Steering each end's receive to one CPU (RPS) keeps
  # the order; reordering comes only from netem, when asked for.
  for d in $C_IF $S_IF; do
    echo 1 > /sys/class/net/$d/queues/rx-0/rps_cpus || fail "rps_cpus of $d"
  done
  ip neigh replace $S_IP lladdr "$(cat /sys/class/net/$S_IF/address)" dev $C_IF nud permanent
  ip neigh replace $C_IP lladdr "$(cat /sys/class/net/$C_IF/address)" dev $S_IF nud permanent
  [[ $(ip route get $S_IP) == *"dev $C_IF"* ]] || fail "route to $S_IP: $(ip route get $S_IP)"
  [[ $(ip route get $C_IP) == *"dev $S_IF"* ]] || fail "route to $C_IP: $(ip route get $C_IP)"
  rdma link add $C_DEV type rxe netdev $C_IF || fail "rdma link add $C_DEV"
  rdma link add $S_DEV type rxe netdev $S_IF || fail "rdma link add $S_DEV"
  wait_active $C_DEV
  wait_active $S_DEV
  # a large queue: netem holds delayed packets in it, and a full one drops (loss we did not ask for)
  tc qdisc add dev $C_IF root netem limit 10000 || fail "tc qdisc add netem (sch_netem?)"
  tc qdisc add dev $S_IF root netem limit 10000
  : > $STATE
  echo "LOSSY_CLIENT_DEV=$C_DEV LOSSY_CLIENT_IP=$C_IP LOSSY_SERVER_DEV=$S_DEV LOSSY_SERVER_IP=$S_IP LOSSY_LINK=$SELF"
}

set_netem() {   # NETEM-ARGS...
  # a new qdisc each time: `tc qdisc change` keeps the reordering (and correlations) of the
  # previous setting when the new one does not name them
  local d
  for d in $C_IF $S_IF; do
    tc qdisc del dev $d root 2> /dev/null || true
    tc qdisc add dev $d root netem limit 10000 "$@" || fail "tc qdisc add dev $d root netem $*"
  done
}

case ${1:-} in
  up) up ;;
  set)
    shift
    set_netem "$@"
    printf '%s\n' "$*" > $STATE ;;
  outage)
    secs=${2:?outage SECS}
    read -r -a before < $STATE || before=()
    set_netem loss 100%
    sleep "$secs"
    set_netem "${before[@]}" ;;
  counters)
    for d in $C_DEV $S_DEV; do
      for f in /sys/class/infiniband/$d/ports/1/hw_counters/*; do
        echo "$d ${f##*/} $(cat "$f")"
      done
    done ;;
  show) tc -s qdisc show dev $C_IF; tc -s qdisc show dev $S_IF ;;
  down)
    rdma link delete $C_DEV 2> /dev/null || true
    rdma link delete $S_DEV 2> /dev/null || true
    ip link delete $C_IF 2> /dev/null || true
    ip rule add pref 0 lookup local 2> /dev/null || true
    for p in 10 11 12 13 100; do ip rule del pref $p 2> /dev/null || true; done ;;
  *) fail "usage: lossy-link.sh up|set NETEM...|outage SECS|counters|show|down" ;;
esac
