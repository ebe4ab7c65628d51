# shellcheck shell=bash
# Sourced by the tests that run DPDK ports on a veth pair of their own
# (tests/engines/run_af_packet.sh, tests/examples/run_l2fwd_rdma.sh).
# veth_pair A B makes the pair, or exits 77 (meson's "skipped") where the
# machine cannot; IPv6 is off on both ends (the kernel's neighbour
# discovery would reach the ports: ../shared/ENV.md), both are up. The
# caller removes it at exit: ip link del A.
veth_pair() {
	local i

	if ! ip link add "$1" type veth peer name "$2" 2> /dev/null; then
		echo "skipped: cannot create a veth pair"
		exit 77
	fi
	for i in "$1" "$2"; do
		sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
		ip link set "$i" up
	done
}
