#!/usr/bin/env bash
# rc_verify between two processes over AF_XDP: a veth pair made for the
# run (and removed after it), each process on one end through net_af_xdp
# (tests/e2e/run_memif.sh --af-xdp). Both ports are configured with IB MTU
# 4096 and must offer 2048, the most AF_XDP's page-sized buffers hold.
#
# Usage: run_af_xdp.sh BUILD_DIR [rc_verify options...]
# Exits 77 (meson's "skipped") when this machine cannot make a veth pair
# or open an AF_XDP socket (not root, or a kernel without AF_XDP).
set -euo pipefail

build=${1:?usage: run_af_xdp.sh BUILD_DIR [rc_verify options...]}
shift
here=$(dirname "$0")

skip() {
	echo "run_af_xdp: skipped: $*"
	exit 77
}

if ! python3 -c 'import socket; socket.socket(44, socket.SOCK_RAW).close()' 2>/dev/null; then
	skip "this kernel does not open AF_XDP sockets (address family 44) for us"
fi
# Interface names are at most 15 characters; the PID keeps parallel runs apart.
ifs=dxs$$
ifc=dxc$$
cleanup() {
	ip link del "$ifs" 2>/dev/null || true
}
trap cleanup EXIT
if ! ip link add "$ifs" type veth peer name "$ifc" 2>/dev/null; then
	skip "cannot create a veth pair"
fi
# The kernel's IPv6 neighbour discovery would reach the ports (ENV.md);
# each process sets its end's MTU to what its port needs.
for i in "$ifs" "$ifc"; do
	sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
	ip link set "$i" up
done

# Under AddressSanitizer: the PMD's socket is left to the process's end.
supp=$(realpath "$here/af_xdp.supp")
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$supp
out=$(bash "$here/run_memif.sh" --af-xdp "$ifs,$ifc" "$build" "$@" 2>&1) || {
	echo "$out"
	exit 1
}
echo "$out"
if (( $(grep -c 'path MTU 2048;' <<< "$out") != 2 )); then
	echo "run_af_xdp: the sides did not both connect with path MTU 2048" >&2
	exit 1
fi
