#!/usr/bin/env bash
# Install what droce needs to build and test on Debian 12. Installs only
# what is missing, and refreshes the package lists only when they are
# missing or older than a day. Needs root when something is missing.
set -euo pipefail

# ibverbs-utils, perftest, ibverbs-providers and librdmacm1: Debian's
# unmodified verbs programs and the libraries they load, which the drop-in
# libibverbs.so.1 is tested against; librdmacm-dev and rdmacm-utils
# (rping, ucmatose, rdma_server/rdma_client) for the drop-in
# librdmacm.so.1; ucx-utils (ucx_perftest) runs UCX's verbs transports on
# it, and qperf its rdma_cm tests. gnuplot-nox draws the benchmark
# plots. clang builds the libFuzzer targets (tests/fuzz). librte-net-mlx5-23 (which
# libdpdk-dev pulls in too) is the mlx5 PMD tests/drivers loads beside
# libdroce.
pkgs=(build-essential meson ninja-build pkg-config dpdk-dev libdpdk-dev libibverbs-dev
      libnuma-dev check zlib1g-dev libpcap-dev tshark python3
      ibverbs-utils perftest ibverbs-providers librdmacm1 librdmacm-dev rdmacm-utils ucx-utils
      qperf gnuplot-nox clang librte-net-mlx5-23)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if (( ${#missing[@]} == 0 )); then
	echo "install-deps: all ${#pkgs[@]} packages are installed"
	exit 0
fi
if (( EUID != 0 )); then
	echo "install-deps: run as root to install: ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp /tmp/droce-install-deps.XXXXXX.log)
run() {
	if ! "$@" >> "$log" 2>&1; then
		echo "install-deps: '$*' failed; its output:" >&2
		tail -n 30 "$log" >&2
		exit 1
	fi
}
if ! find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 | grep -q .; then
	echo "install-deps: apt-get update"
	run apt-get update -q
fi
# tshark asks whether non-root users may capture: they may not.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
echo "install-deps: installing ${missing[*]}"
run apt-get install -y -q --no-install-recommends "${missing[@]}"
rm -f "$log"
echo "install-deps: done"
