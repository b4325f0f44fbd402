#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fetch_kernel.sh: bring Debian's cloud kernel image package into a cache
# directory, unpacked, for the e2e tests that boot it under QEMU (the fixed
# host with the kernel's own ESP: tests/e2e/test_esp_kernel.sh).
#
# The package is fetched with `apt-get download` and unpacked with
# `dpkg-deb -x`, never installed: installing linux-image-* on the host would
# pull in a bootloader and initramfs-tools and change what the host boots.
# The modules' dependency list (modules.dep, which the package leaves to
# depmod at install time) is made with busybox's depmod.
#
#   fetch_kernel.sh [--refresh]
#     -> $SATGW_VM_CACHE (default /var/cache/satgw/vm)/current -> linux-image-<ver>-cloud-amd64/
#        holding boot/vmlinuz-<ver>, lib/modules/<ver>/ and kernel.env (KVER=, VMLINUZ=)
# An existing unpacked kernel is kept (the tests run offline); --refresh asks
# apt for the current one.
set -euo pipefail

CACHE=${SATGW_VM_CACHE:-/var/cache/satgw/vm}
META=linux-image-cloud-amd64   # Debian's metapackage: depends on the current version

if [ "${1:-}" != --refresh ] && [ -s "$CACHE/current/kernel.env" ]; then
	exit 0
fi
for tool in apt-get apt-cache dpkg-deb busybox; do
	command -v "$tool" >/dev/null || { echo "fetch_kernel: $tool missing" >&2; exit 1; }
done

pkg_name() {
	apt-cache depends "$META" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
PKG=$(pkg_name)
if [ -z "$PKG" ]; then
	apt-get update -qq
	PKG=$(pkg_name)
fi
[ -n "$PKG" ] || { echo "fetch_kernel: apt knows no $META" >&2; exit 1; }
KVER=${PKG#linux-image-}

mkdir -p "$CACHE"
if [ ! -s "$CACHE/$PKG/kernel.env" ]; then
	TMP=$(mktemp -d "$CACHE/.fetch.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	# apt's _apt user downloads into a directory it can write.
	chmod 755 "$TMP"
	(cd "$TMP" && apt-get download -q "$PKG" >/dev/null 2>"$TMP/apt.err") || {
		cat "$TMP/apt.err" >&2
		exit 1
	}
	dpkg-deb -x "$TMP"/"$PKG"_*.deb "$TMP/root"
	[ -s "$TMP/root/boot/vmlinuz-$KVER" ] || { echo "fetch_kernel: no vmlinuz in $PKG" >&2; exit 1; }
	busybox depmod -b "$TMP/root" "$KVER"
	[ -s "$TMP/root/lib/modules/$KVER/modules.dep" ] || {
		echo "fetch_kernel: depmod made no modules.dep" >&2
		exit 1
	}
	printf 'KVER=%s\nVMLINUZ=boot/vmlinuz-%s\nPKG=%s\n' "$KVER" "$KVER" "$PKG" \
		>"$TMP/root/kernel.env"
	rm -rf "${CACHE:?}/$PKG"
	mv "$TMP/root" "$CACHE/$PKG"
fi
ln -sfn "$PKG" "$CACHE/current"
echo "fetch_kernel: $PKG in $CACHE/current"
