# shellcheck shell=bash
# Stage 2 of an rdma-vm guest: run by the initramfs' /init with the host's bash, from the
# run's control directory (/rdma-vm, a 9p share of a per-run host directory). Brings up
# eth0 and rxe0 (and nfsd on request), then runs the command in the repository directory.
#
# Protocol with the host (all files in /rdma-vm):
#   env.sh   in:  the run's settings (written by scripts/rdma-vm)
#   out      out: the command's stdout+stderr (appended; the host tails it live)
#   ready    out: guest uptime when the command started (boot-to-command time)
#   rc       out: the command's exit status
#   took     out: the command's wall time in seconds
#   fail     out: one line saying what failed, if setup failed or the command timed out
# Setup chatter goes to the serial console (console.log on the host).
set -uo pipefail
CTL=/rdma-vm
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
# shellcheck source=/dev/null
. "$CTL/env.sh"

up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "[guest $(up)s] $*"; }
fail() {
  say "FAILED: $*"
  echo "$*" > "$CTL/fail"
  dmesg | tail -15
  exit 125
}

say "stage 2 ($RV_NAME, $RV_IP)"
mkdir -p /root /run /var/tmp /var/lib /mnt
# devtmpfs has no /dev/fd or /dev/std*: bash's process substitution needs them
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin; ln -sf /proc/self/fd/1 /dev/stdout; ln -sf /proc/self/fd/2 /dev/stderr
chmod 1777 /var/tmp
hostname "$RV_NAME"
# /etc is the host's, read-only: give the guest its own /etc/hosts so its name (and the
# peer's, in a pair) resolves without DNS (there is no network beyond eth0).
{
  echo "127.0.0.1 localhost"
  echo "::1 localhost ip6-localhost ip6-loopback"
  echo "$RV_IP $RV_NAME"
  [[ -n $RV_PEER_IP ]] && echo "$RV_PEER_IP $RV_PEER_NAME"
} > /run/hosts
mount --bind /run/hosts /etc/hosts || say "could not bind-mount /etc/hosts"

for m in "${RV_MOUNTS[@]}"; do
  read -r tag mode path <<< "$m"
  mkdir -p "$path"
  mount -t 9p -o "trans=virtio,version=9p2000.L,msize=262144,$mode" "$tag" "$path" ||
    fail "9p mount of host directory $path ($mode) failed"
done

ip link set lo up
ip addr add "$RV_IP/24" dev eth0 || fail "no eth0 in the guest (virtio_net missing?)"
ip link set eth0 up

for m in $RV_MODULES; do
  [[ -d /sys/module/${m//-/_} ]] || fail "kernel module $m did not load (see the console log)"
done

# Soft-RoCE on eth0; the port goes ACTIVE once eth0 has carrier.
rdma link add rxe0 type rxe netdev eth0 > /tmp/rdma-link.err 2>&1 ||
  fail "rxe: 'rdma link add rxe0 type rxe netdev eth0' failed: $(tr '\n' ' ' < /tmp/rdma-link.err)"
state=
for _ in $(seq 100); do
  state=$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null || true)
  [[ $state == *ACTIVE* ]] && break
  sleep 0.1
done
[[ $state == *ACTIVE* ]] || fail "rxe0 port 1 is not ACTIVE after 10 s (state: ${state:-none})"
say "rxe0 ${state}"
ulimit -l unlimited   # verbs pin memory; root may, but say so explicitly

start_nfsd() {
  # The kernel NFS server with an RDMA listener (IANA port 20049) on every RDMA device.
  # /etc and /usr are read-only 9p mounts, so all nfs-utils state lives on a tmpfs and the
  # export goes on the command line; v4 only (-N 3), so neither rpcbind nor lockd is needed.
  local port=20049 export=/export
  mkdir -p /var/lib/nfs /run/rpc_pipefs /proc/fs/nfsd "$export"
  mount -t tmpfs -o mode=755 nfsstate /var/lib/nfs
  mkdir /var/lib/nfs/{v4recovery,nfsdcld,sm,sm.bak}
  touch /var/lib/nfs/{etab,rmtab,state}
  mount -t rpc_pipefs rpc_pipefs /run/rpc_pipefs || fail "nfsd: mount rpc_pipefs"
  mount -t nfsd nfsd /proc/fs/nfsd || fail "nfsd: mount the nfsd filesystem"
  mount -t tmpfs -o size=256m export "$export"   # a tmpfs has no UUID: fsid= is required
  exportfs -o rw,no_root_squash,fsid=0,insecure,no_subtree_check "*:$export" ||
    fail "nfsd: exportfs $export"
  # mountd answers the kernel's export cache upcalls, needed even for NFSv4
  rpc.mountd -N 3 || fail "nfsd: rpc.mountd did not start"
  # nfsdcld lets nfsd skip the 90 s v4 grace period when there is nothing to reclaim
  nfsdcld || say "nfsdcld did not start (expect a grace period)"
  # 1 MiB READ/WRITE payloads, what the kernel picks by itself only with >= 4 GB of RAM
  # (nfsd_get_default_max_blksize: 1/4096 of memory; a 3 GB guest would get 512 KiB);
  # settable only before the server starts
  echo 1048576 > /proc/fs/nfsd/max_block_size || say "nfsd: could not set max_block_size"
  rpc.nfsd -N 3 -V 4.1 -V 4.2 4 || fail "nfsd: rpc.nfsd did not start"
  echo "rdma $port" > /proc/fs/nfsd/portlist || fail "nfsd: could not add the rdma $port listener"
  [[ $(cat /proc/fs/nfsd/v4_end_grace) == Y ]] || echo Y > /proc/fs/nfsd/v4_end_grace
  grep -q "^rdma $port" /proc/fs/nfsd/portlist || fail "nfsd: no 'rdma $port' in /proc/fs/nfsd/portlist"
  say "nfsd up: $(tr '\n' ' ' < /proc/fs/nfsd/portlist)"
  export RDMA_VM_NFS_PORT=$port RDMA_VM_NFS_EXPORT=$export
}
[[ $RV_NFSD == 1 ]] && start_nfsd

export RDMA_VM=1 RDMA_VM_NAME=$RV_NAME RDMA_VM_IP=$RV_IP RDMA_VM_DEV=rxe0 RDMA_VM_NETDEV=eth0
[[ -n $RV_PEER_IP ]] && export RDMA_VM_PEER_IP=$RV_PEER_IP RDMA_VM_PEER_NAME=$RV_PEER_NAME
for kv in "${RV_ENV[@]}"; do export "${kv?}"; done

cd "$RV_CWD" || fail "no directory $RV_CWD in the guest"
up > "$CTL/ready"
say "command start"
t0=$(date +%s.%N)
timeout -k 5 "$RV_CMD_TIMEOUT" "${RV_CMD[@]}" >> "$CTL/out" 2>&1 < /dev/null
rc=$?
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' > "$CTL/took"
[[ $rc -eq 124 ]] && echo "the command timed out after $RV_CMD_TIMEOUT s in the guest" > "$CTL/fail"
echo "$rc" > "$CTL/rc"
say "command exited $rc"
exit 0
