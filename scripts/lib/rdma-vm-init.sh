#!/bb/sh
# shellcheck shell=sh disable=SC2013  # (word lists, not lines)
# PID 1 of an rdma-vm guest (copied into the initramfs by scripts/rdma-vm; busybox sh).
# Kept minimal: load the modules, mount the host's /usr and /etc and the run's control
# directory over virtio-9p, then hand over to /rdma-vm/guest.sh (the host's bash), which
# does everything run-specific. Whatever happens, power off so QEMU exits.
export PATH=/bb
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs -o mode=1777 tmp /tmp
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
echo "[init] kernel up at $(cut -d' ' -f1 /proc/uptime)s"
# no module autoloading in here: load the closure the host computed, in dependency order
for m in $(cat /mods/order); do
  insmod "/mods/$m" || echo "[init] insmod $m FAILED"
done
TMO=900
for w in $(cat /proc/cmdline); do
  case $w in rdmavm.timeout=*) TMO=${w#rdmavm.timeout=} ;; esac
done
O=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $O,ro,cache=loose hostusr /usr || echo "[init] FAILED: 9p mount of /usr"
mount -t 9p -o $O,ro,cache=loose hostetc /etc || echo "[init] FAILED: 9p mount of /etc"
mount -t 9p -o $O,rw ctl /rdma-vm || echo "[init] FAILED: 9p mount of the control dir"
if [ -x /usr/bin/bash ] && [ -x /usr/bin/timeout ] && [ -f /rdma-vm/guest.sh ]; then
  echo "[init] stage 2 at $(cut -d' ' -f1 /proc/uptime)s"
  /usr/bin/timeout -k 5 "$TMO" /usr/bin/bash /rdma-vm/guest.sh
  echo $? > /rdma-vm/guest.rc
else
  echo "[init] FAILED: no /usr/bin/bash, /usr/bin/timeout or /rdma-vm/guest.sh"
fi
sync
echo "[init] powering off at $(cut -d' ' -f1 /proc/uptime)s"
poweroff -f
