# SPDX-License-Identifier: BSD-3-Clause
#
# vm.sh: sourced by the e2e tests that need a real Linux kernel of their own
# (tests/e2e/test_esp_kernel.sh): boot Debian's cloud kernel (fetch_kernel.sh)
# under QEMU with software emulation (TCG: no /dev/kvm needed) on the
# initramfs of build_initramfs.sh, its NIC a tap device in a network
# namespace of the caller, and run commands in it over a serial port.
#
#   vm_boot NS TAP MAC DIR [--add SRC:DEST]...   build, boot, wait for /init's
#                       ready marker; sets VM_PID, VM_BOOT_S (boot time, s);
#                       the same as vm_start with the same arguments, then
#                       vm_wait (the caller may do its own setup in between)
#   vm_check            fail unless the kernel, QEMU, busybox and cpio are there
#   vm CMD              run CMD in the VM (sh -c), print its output, return
#                       its exit code; VM_TIMEOUT (s, default 60) bounds it
#   vm_stop             power the VM off (or kill QEMU)
# The caller defines fail() and adds VM_PID to what its cleanup kills.
# The kernel's console log is $VM_DIR/console.log, the command channel's
# transcript $VM_DIR/vm-cmd.log.

VM_CACHE=${SATGW_VM_CACHE:-/var/cache/satgw/vm}
VM_QEMU=${VM_QEMU:-qemu-system-x86_64}
VM_PID=
VM_CAT=
# Less for TCG to emulate: no speculation mitigations, no timer checks, no
# PS/2 probing, no KASLR relocation, no crypto self-tests at registration
# (the test itself checks the kernel's AES-GCM against the agent's, packet by
# packet).
VM_CMDLINE=${VM_CMDLINE:-mitigations=off tsc=reliable no_timer_check i8042.noaux i8042.nokbd i8042.nopnp nokaslr cryptomgr.notests}
# qboot (QEMU's minimal firmware, in qemu-system-data) reaches the kernel
# seconds sooner than SeaBIOS does under TCG.
VM_BIOS=${VM_BIOS:-/usr/share/qemu/qboot.rom}

_vm_now() { date +%s%N; }

# vm_check: fail now if a piece is missing (the kernel, QEMU, busybox-static,
# cpio), before the caller builds anything.
vm_check() {
	[ -s "$VM_CACHE/current/kernel.env" ] ||
		fail "no kernel in $VM_CACHE (run tests/e2e/qemu/fetch_kernel.sh; setup.sh does)"
	command -v "$VM_QEMU" >/dev/null || fail "no $VM_QEMU (Debian package qemu-system-x86)"
	command -v busybox >/dev/null || fail "no busybox (Debian package busybox-static)"
	command -v cpio >/dev/null || fail "no cpio (Debian package cpio)"
}

vm_boot() {
	vm_start "$@"
	vm_wait
}

vm_start() {
	local ns=$1 tap=$2 mac=$3 dir=$4
	shift 4
	VM_DIR=$dir
	vm_check
	# shellcheck disable=SC1091
	. "$VM_CACHE/current/kernel.env"
	local kdir
	kdir=$(readlink -f "$VM_CACHE/current")
	local adds=() a
	for a in "$@"; do
		[ "$a" = --add ] || adds+=(--add "$a")
	done
	bash "$(dirname "${BASH_SOURCE[0]}")/build_initramfs.sh" --kernel "$kdir" \
		--out "$dir/initramfs.cpio" "${adds[@]}" >"$dir/initramfs.log" 2>&1 ||
		fail "initramfs: $(tail -n 3 "$dir/initramfs.log")"
	mkfifo "$dir/vmcmd.in" "$dir/vmcmd.out"
	: >"$dir/vm-cmd.log"
	VM_T0=$(_vm_now)
	# -cpu max: TCG emulates AES-NI and PCLMULQDQ, which the kernel may use.
	local bios=()
	[ ! -r "$VM_BIOS" ] || bios=(-bios "$VM_BIOS")
	ip netns exec "$ns" "$VM_QEMU" -M pc "${bios[@]}" -accel tcg -cpu max -smp 1 -m 256 \
		-nodefaults -display none -no-reboot \
		-kernel "$kdir/$VMLINUZ" -initrd "$dir/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 quiet $VM_CMDLINE" \
		-serial "file:$dir/console.log" \
		-chardev "pipe,id=cmd,path=$dir/vmcmd" -serial chardev:cmd \
		-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=n0,mac=$mac" >"$dir/qemu.log" 2>&1 &
	VM_PID=$!
	# Read the channel from the start; write to it through fd 7 (read-write
	# open: never blocks on the FIFO).
	cat "$dir/vmcmd.out" >>"$dir/vm-cmd.log" &
	VM_CAT=$!
	exec 7<>"$dir/vmcmd.in"
}

vm_wait() {
	local end
	end=$((VM_T0 + ${VM_BOOT_TIMEOUT:-90} * 1000000000))
	until grep -q '^@@ready' "$VM_DIR/vm-cmd.log"; do
		kill -0 "$VM_PID" 2>/dev/null || fail "qemu exited: $(tail -n 5 "$VM_DIR/qemu.log" \
			"$VM_DIR/console.log" 2>/dev/null)"
		[ "$(_vm_now)" -lt "$end" ] || fail "the VM did not boot in ${VM_BOOT_TIMEOUT:-90} s:" \
			"$(tail -n 5 "$VM_DIR/console.log")"
		sleep 0.05
	done
	VM_BOOT_S=$(awk -v a="$(_vm_now)" -v b="$VM_T0" 'BEGIN { printf "%.1f", (a - b) / 1e9 }')
}

# vm CMD...: the words are joined by spaces into one command line for sh -c.
vm() {
	local cmd="$*" id end
	case "$cmd" in *$'\n'* | *$'\t'*) fail "vm: one line, no tabs: $cmd" ;; esac
	# Unique without shared state: vm often runs in a command substitution.
	id=$(_vm_now)$RANDOM
	printf '%s\t%s\n' "$id" "$cmd" >&7
	end=$(($(_vm_now) + ${VM_TIMEOUT:-60} * 1000000000))
	until grep -q "^@@done $id " "$VM_DIR/vm-cmd.log"; do
		kill -0 "$VM_PID" 2>/dev/null || fail "the VM died during: $cmd"
		[ "$(_vm_now)" -lt "$end" ] || fail "vm: no answer in ${VM_TIMEOUT:-60} s to: $cmd"
		sleep 0.02
	done
	awk -v id="$id" '$0 == "@@begin " id { on = 1; next }
		on && index($0, "@@done " id " ") == 1 { exit }
		on { print }' "$VM_DIR/vm-cmd.log"
	return "$(awk -v id="$id" 'index($0, "@@done " id " ") == 1 { print $3; exit }' \
		"$VM_DIR/vm-cmd.log")"
}

vm_stop() {
	local end
	[ -n "$VM_PID" ] || return 0
	if kill -0 "$VM_PID" 2>/dev/null; then
		printf '0\tpoweroff -f\n' >&7 2>/dev/null || true
		end=$(($(_vm_now) + 5000000000))
		while kill -0 "$VM_PID" 2>/dev/null && [ "$(_vm_now)" -lt "$end" ]; do
			sleep 0.05
		done
		kill -KILL "$VM_PID" 2>/dev/null || true
	fi
	[ -z "$VM_CAT" ] || kill "$VM_CAT" 2>/dev/null || true
	# In braces: `exec 7>&- 2>/dev/null` would send the caller's stderr to
	# /dev/null for good (exec applies every redirection to the shell).
	{ exec 7>&-; } 2>/dev/null || true
	VM_PID=
}
