#!/usr/bin/env bash
# satgw setup: installs the Debian packages that are missing, builds satgw
# into ./build, then runs one job:
#   ./setup.sh demo    the demo: a real Linux TCP download across an emulated GEO link
#                      (hub - emulator - terminal in network namespaces), without
#                      and with satlink, the reliable link layer
#   ./setup.sh test    the whole test suite through ctest (unit, pipeline, end-to-end)
#   ./setup.sh bench   the benchmarks; writes docs/benchmarks.md
#   ./setup.sh build   install and build only
# Run as root (namespaces, veth and DPDK need it); no NIC and no hugepages needed.
set -euo pipefail

cd "$(dirname "$(readlink -f "$0")")"
job=${1:-}
case "$job" in
demo|test|bench|build) ;;
*) echo "usage: $0 demo|test|bench|build" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "satgw setup: run as root (it installs packages, creates network namespaces and runs DPDK)" >&2
	exit 1
fi

packages=(
	build-essential cmake ninja-build pkg-config
	dpdk dpdk-dev libdpdk-dev libpcap-dev libipsec-mb-dev
	libyaml-dev libgtest-dev libgmock-dev libbenchmark-dev
	iperf3 iproute2 ethtool procps python3 python3-scapy lua5.4 valgrind
	# the fuzz tests (tests/fuzz): clang, libFuzzer's runtime, llvm-symbolizer
	clang libclang-rt-14-dev llvm
	# tests/e2e/esp_peer.py: scapy's ESP (AES-GCM) needs it
	python3-cryptography
	# tests/e2e/xcp_analyze.py: the XCP experiment figures (docs/img/xcp_*.png)
	python3-matplotlib
	# tests/e2e/lift_outage.sh LO_PCAP=1 and lift_outage.py --tsg: the sender's packets
	tcpdump
	# tests/e2e/test_esp_kernel.sh: the fixed host is a Debian kernel with ESP booted
	# under QEMU (software emulation, no KVM needed) on a busybox initramfs
	qemu-system-x86 busybox-static cpio
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "satgw setup: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

# The kernel that test_esp_kernel.sh boots: Debian's cloud kernel image package,
# downloaded and unpacked into /var/cache/satgw/vm, never installed on this host.
tests/e2e/qemu/fetch_kernel.sh

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build

# Every build type a user may pick must compile (-Werror catches more at -O3
# and -Os than at -O2); the tests run in the RelWithDebInfo build above.
build_types() {
	local t
	for t in Debug Release MinSizeRel; do
		echo "satgw setup: compiling the $t build (build/types/$t)"
		cmake -S . -B "build/types/$t" -G Ninja -DCMAKE_BUILD_TYPE="$t" >/dev/null
		ninja -C "build/types/$t" >/dev/null || {
			echo "satgw setup: the $t build failed" >&2
			ninja -C "build/types/$t" 2>&1 | grep -E 'error|FAILED' | head -n 40 >&2
			return 1
		}
	done
}

case "$job" in
demo) exec tests/e2e/demo.sh build/dataplane/satgw ;;
test)
	build_types
	cd build && exec ctest --output-on-failure --timeout 600 ;;
bench) exec tests/bench/run.sh --build-dir build ;;
build) ;;
esac
