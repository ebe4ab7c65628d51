#!/usr/bin/env bash
# test_engines' af_packet case: two droce devices with 2 engines each on
# af_packet ports with qpairs=2, on the two ends of a veth pair made for
# the run (and removed after it).
#
# Usage: run_af_packet.sh TEST_ENGINES
# Exits 77 (meson's "skipped") when this machine cannot make a veth pair.
set -euo pipefail

exe=${1:?usage: run_af_packet.sh TEST_ENGINES}
# Interface names are at most 15 characters; the PID keeps runs apart.
a=dea$$
b=deb$$
cleanup() {
	ip link del "$a" 2> /dev/null || true
}
trap cleanup EXIT
if ! ip link add "$a" type veth peer name "$b" 2> /dev/null; then
	echo "run_af_packet: skipped: cannot create a veth pair"
	exit 77
fi
# The kernel's IPv6 neighbour discovery would reach the ports (ENV.md).
for i in "$a" "$b"; do
	sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
	ip link set "$i" up
done
CK_RUN_CASE=af_packet DROCE_TEST_VETH="$a,$b" "$exe"
