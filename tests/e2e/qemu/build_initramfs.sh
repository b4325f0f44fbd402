#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# build_initramfs.sh: the fixed host's root file system for the QEMU VM of the
# kernel-ESP tests, an uncompressed cpio (newc) made at test time from:
#  - busybox-static (shell, nc, sha256sum, ping, stty, ...), the applets
#    linked at boot by /init;
#  - the host's iproute2 `ip` with the shared libraries ldd names (busybox's
#    own ip applet has no xfrm);
#  - the kernel modules for ESP with AES-GCM and the virtio NIC, with their
#    dependencies from modules.dep (fetch_kernel.sh made it), in load order;
#  - qemu/init.sh as /init;
#  - extra files: --add SRC:DEST (a key file, a data file).
# Uncompressed: the kernel unpacks it faster under TCG than a gzip one.
# All but the extra files is a base archive kept beside the kernel
# (initramfs-base-<hash>.cpio, the hash over this script, init.sh, busybox
# and ip); the output is that base followed by a small archive of the extra
# files (the kernel unpacks concatenated archives in turn): on a loaded
# machine building the base costs tens of seconds.
#
#   build_initramfs.sh --kernel DIR --out FILE [--add SRC:DEST]...
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
KDIR=
OUT=
ADDS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) KDIR=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--add) ADDS+=("$2"); shift 2 ;;
	*) echo "build_initramfs: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$KDIR" ] && [ -n "$OUT" ] || { echo "usage: $0 --kernel DIR --out FILE" >&2; exit 2; }
# shellcheck disable=SC1091
. "$KDIR/kernel.env"
MODDIR=$KDIR/lib/modules/$KVER
BUSYBOX=$(command -v busybox) || { echo "build_initramfs: no busybox" >&2; exit 1; }
! ldd "$BUSYBOX" >/dev/null 2>&1 ||
	{ echo "build_initramfs: $BUSYBOX is dynamic (install busybox-static)" >&2; exit 1; }
IP=$(command -v ip) || { echo "build_initramfs: no ip (iproute2)" >&2; exit 1; }
command -v cpio >/dev/null || { echo "build_initramfs: no cpio" >&2; exit 1; }

# The modules asked for; their dependencies come first.
# seqiv (the IV generator ESP puts around rfc4106) needs the default RNG: drbg
# with hmac(sha512) (sha512 first: drbg would ask for it). drbg also asks for
# jitterentropy, which it needs only in FIPS mode; it is left out: its timing
# tests take seconds under emulation.
WANT=(virtio_pci virtio_net xfrm_user esp4 esp6 gcm ghash-generic ctr seqiv echainiv
	sha512_generic drbg)
SKIP=(jitterentropy_rng)
# Present but not loaded at boot: the rest of the crypto modules, for the
# kernel's own requests (request_module -> busybox modprobe, modules.dep).
AUTOLOAD_DIRS=(kernel/crypto kernel/arch/x86/crypto)

TMPD=$(mktemp -d /tmp/ke-initramfs.XXXXXX)
trap 'rm -rf "$TMPD"' EXIT
ROOT=$TMPD

# The extra files, in their own archive.
mkdir -p "$ROOT/extra"
for a in "${ADDS[@]}"; do
	src=${a%%:*}
	dst=${a#*:}
	mkdir -p "$ROOT/extra$(dirname "$dst")"
	cp "$src" "$ROOT/extra$dst"
done
(cd "$ROOT/extra" && find . -print0 | cpio --null -o -H newc --quiet) >"$ROOT/extra.cpio"

KEY=$(cat "$0" "$HERE/init.sh" "$BUSYBOX" "$IP" | sha256sum | cut -c1-16)
BASE=$KDIR/initramfs-base-$KEY.cpio
if [ -s "$BASE" ]; then
	cat "$BASE" "$ROOT/extra.cpio" >"$OUT"
	echo "build_initramfs: $OUT, $(($(stat -c %s "$OUT") / 1024)) KiB (base $BASE)"
	exit 0
fi
ROOT=$ROOT/base
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root}
mkdir -p "$ROOT/lib/modules/$KVER"
cp "$BUSYBOX" "$ROOT/bin/busybox"
ln -s busybox "$ROOT/bin/sh"
cp "$IP" "$ROOT/usr/sbin/ip"
# The loader and libraries, at the paths ldd prints.
ldd "$IP" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' | sort -u |
	while read -r lib; do
		mkdir -p "$ROOT$(dirname "$lib")"
		cp -L "$lib" "$ROOT$lib"
	done

# Load order: depth first, dependencies before the module.
declare -A DEP SEEN
while IFS= read -r line; do
	mod=${line%%:*}
	mod=${mod##*/}
	DEP[${mod%.ko}]=${line#*:}   # no fork per line: 1100 lines
done <"$MODDIR/modules.dep"
ORDER=()
visit() {
	local m=$1 d
	m=${m//_/-}
	[ -n "${DEP[$m]+x}" ] || m=${m//-/_}
	[ -n "${DEP[$m]+x}" ] || { echo "build_initramfs: no module $1 in $KVER" >&2; exit 1; }
	[ -z "${SEEN[$m]:-}" ] || return 0
	SEEN[$m]=1
	for d in ${DEP[$m]}; do
		d=${d##*/}
		visit "${d%.ko}"
	done
	ORDER+=("$m")
}
for m in "${WANT[@]}"; do
	visit "$m"
done
: >"$ROOT/etc/modules.load"
for m in "${ORDER[@]}"; do
	path=$(grep -m1 -E "(^|/)$m\.ko:" "$MODDIR/modules.dep" | cut -d: -f1)
	mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$path")"
	cp "$MODDIR/$path" "$ROOT/lib/modules/$KVER/$path"
	echo "/lib/modules/$KVER/$path" >>"$ROOT/etc/modules.load"
done
for d in "${AUTOLOAD_DIRS[@]}"; do
	mkdir -p "$ROOT/lib/modules/$KVER/$d"
	cp -r "$MODDIR/$d/." "$ROOT/lib/modules/$KVER/$d/"
done
for m in "${SKIP[@]}"; do
	find "$ROOT/lib/modules" -name "$m.ko" -delete
done
cp "$MODDIR"/modules.{dep,alias,symbols,builtin,order} "$ROOT/lib/modules/$KVER/" 2>/dev/null || true

cp "$HERE/init.sh" "$ROOT/init"
chmod 755 "$ROOT/init"
(cd "$ROOT" && find . -print0 | cpio --null -o -H newc --quiet) >"$ROOT.cpio"
# Atomic: another test may build the same base at the same time.
mv "$ROOT.cpio" "$BASE"
cat "$BASE" "$TMPD/extra.cpio" >"$OUT"
echo "build_initramfs: $OUT, $(($(stat -c %s "$OUT") / 1024)) KiB, base $BASE built," \
	"modules: ${ORDER[*]}"
