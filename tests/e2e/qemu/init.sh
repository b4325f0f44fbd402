#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# /init of the kernel-ESP VM (tests/e2e/qemu): the fixed host runs the Linux
# kernel's own ESP. It mounts the pseudo file systems, loads the modules
# (/etc/modules.load, in order), brings eth0 up, then serves commands on the
# second serial port (ttyS1), one per line: "ID<TAB>command". Each command
# runs in sh with stdin from /dev/null; its output (stdout and stderr) is
# framed as
#     @@begin ID
#     ...
#     @@done ID RC
# so the host (tests/e2e/qemu/vm.sh) can run commands as with `ip netns exec`.
# Commands ending in " &" run in the background (their output goes to the
# file they redirect to). The console (ttyS0) carries the kernel's messages.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
echo /sbin/modprobe >/proc/sys/kernel/modprobe
echo "init: uptime $(cut -d' ' -f1 /proc/uptime) s, loading modules"
while read -r m; do
	insmod "$m" || echo "init: insmod $m failed"
done </etc/modules.load
ip link set lo up
# The NIC appears once virtio_net probed it.
n=0
while ! ip link show eth0 >/dev/null 2>&1 && [ $n -lt 100 ]; do
	n=$((n + 1))
	usleep 20000
done
ip link set eth0 up
stty -F /dev/ttyS1 raw -echo
exec 3</dev/ttyS1 4>/dev/ttyS1
echo "init: uptime $(cut -d' ' -f1 /proc/uptime) s, ready"
echo "@@ready $(cut -d' ' -f1 /proc/uptime)" >&4
while IFS= read -r line <&3; do
	id=${line%%	*}
	cmd=${line#*	}
	[ "$id" != "$line" ] || continue
	echo "@@begin $id" >&4
	sh -c "$cmd" </dev/null >&4 2>&1
	echo "@@done $id $?" >&4
done
echo "init: command channel closed"
poweroff -f
