#!/usr/bin/env bash
# rc_verify between two droce processes, each on one end of Linux veth
# interfaces through net_af_packet, in one of three network setups:
#
#   ipv6    one veth pair; 2001:db8::1/64 and ::2/64; the QPs use GID
#           index 2 (the configured IPv6 address): neighbour discovery
#           between the two droce ports, RoCEv2 over IPv6
#   vlan    one veth pair; both ports on VLAN 100 with PCP from the SL
#           (IPv4, GID index 1): tagged ARP and tagged RoCE; the server's
#           capture must show every RoCE frame tagged with VLAN 100
#   routed  two veth pairs through network namespace "drocert$$" acting
#           as router (ip_forward=1): the server in 10.1.0.0/24 and
#           2001:db8:1::/64, the client in 10.2.0.0/24 and 2001:db8:2::/64,
#           each with the router as its gateway; one run over IPv4 (GID
#           index 1) and one over IPv6 (GID index 2); the kernel answers
#           and asks ARP/ND as a router does and decrements TTL/hop limit
#
# Usage: run_net.sh MODE BUILD_DIR [rc_verify options...]
# Exits 77 (meson's "skipped") when this machine cannot make veth pairs or
# namespaces (not root).
set -euo pipefail

mode=${1:?usage: run_net.sh ipv6|vlan|routed BUILD_DIR [rc_verify options...]}
build=${2:?usage: run_net.sh ipv6|vlan|routed BUILD_DIR [rc_verify options...]}
shift 2
here=$(dirname "$0")
exe=$build/tests/e2e/rc_verify
[[ -x $exe ]] || { echo "run_net: $exe is not built" >&2; exit 1; }

skip() {
	echo "run_net: skipped: $*"
	exit 77
}

# shellcheck source=tests/common/pair_env.sh
source "$here/../common/pair_env.sh"
pair_setup "net-$mode"
# Interface names are at most 15 characters; the PID keeps runs apart.
ns=drocert$$
links=()
net_cleanup() {
	local l
	for l in "${links[@]}"; do
		ip link del "$l" 2> /dev/null || true
	done
	ip netns del "$ns" 2> /dev/null || true
	pair_cleanup
}
trap net_cleanup EXIT

# DPDK 22.11's net_af_packet joins the PACKET_FANOUT group (PID xor
# ifindex) & 0xffff, and two processes whose groups meet on different
# interfaces fail (EINVAL). Consecutive PIDs on consecutive ifindexes do
# meet; interface indexes 0x4000 apart never do (the PIDs would have to
# be 0x4000 apart).
if_a=$(( 0x2000 + $$ % 0x1000 ))
if_b=$(( if_a + 0x4000 ))

# veth NAME INDEX PEER: a pair for droce ports (NAME with ifindex INDEX);
# the kernel keeps its own IPv6 (ND, MLD) off both ends (ENV.md) while
# they are in this namespace.
veth() {
	local i

	ip link add "$1" index "$2" type veth peer name "$3" 2> /dev/null ||
		skip "cannot create a veth pair"
	set -- "$1" "$3"
	links+=("$1")
	for i in "$1" "$2"; do
		sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
		ip link set "$i" up
	done
}

# conf ROLE CPU IFACE MAC [port0 lines...]: ROLE's configuration.
conf() {
	local role=$1 cpu=$2 iface=$3 mac=$4 line
	local vdev=net_af_packet0,iface=$iface,framesz=8192,blocksz=8192,framecnt=512

	shift 4
	{
		echo "[eal]"
		echo "args = -l $cpu $mem --no-pci --no-telemetry --log-level=lib.eal:error --vdev=$vdev"
		echo "[port0]"
		echo "device = net_af_packet0"
		echo "mac = $mac"
		echo "mtu = 1024"
		for line in "$@"; do
			echo "$line"
		done
	} > "$tmp/$role.conf"
}

# run GID_INDEX: rc_verify server and client; fails when either does.
run() {
	local gid=$1 s c rc=0

	shift
	DROCE_CONF=$tmp/server.conf DROCE_CAPTURE=$tmp/server.pcapng \
		"$exe" -s -d droce0 -g "$gid" -p "$tcp_port" "$@" > "$tmp/server.out" 2>&1 &
	s=$!
	pids+=("$s")
	DROCE_CONF=$tmp/client.conf "$exe" -c -d droce0 -g "$gid" -p "$tcp_port" "$@" \
		> "$tmp/client.out" 2>&1 &
	c=$!
	pids+=("$c")
	wait "$c" || rc=$?
	if (( rc != 0 )); then
		kill "$s" 2> /dev/null || true
	fi
	wait "$s" || rc=$?
	if (( rc != 0 )); then
		echo "run_net: $mode (GID index $gid) failed" >&2
		sed 's/^/server: /' "$tmp/server.out" >&2
		sed 's/^/client: /' "$tmp/client.out" >&2
		exit 1
	fi
	tail -n 1 "$tmp/client.out"
	echo "run_net: $mode over GID index $gid: both sides passed"
}

# icrc_check LOCAL PEER: every RoCE frame between the two addresses in
# the server's capture has the ICRC Annex A17 gives (for IPv6: traffic
# class, flow label and hop limit masked), recomputed independently by
# tests/interop/roce_capture.py.
icrc_check() {
	local tx=0 rx=0 tx_bad_icrc=0 rx_bad_icrc=0 tx_retx=0 rx_retx=0

	# shellcheck disable=SC1090 # sets tx, rx, tx_bad_icrc, rx_bad_icrc, ...
	source <(python3 "$here/../interop/roce_capture.py" --local "$1" --peer "$2" \
		"$tmp/server.pcapng")
	echo "run_net: ICRC recomputed: $tx frames sent ($tx_bad_icrc bad), $rx received ($rx_bad_icrc bad)"
	(( tx > 0 && rx > 0 && tx_bad_icrc == 0 && rx_bad_icrc == 0 ))
}

# routed_check FIELD: the frames the server received crossed the router,
# which took one off their TTL or hop limit (droce sends 64).
routed_check() {
	local n

	command -v tshark > /dev/null || return 0
	n=$(tshark -r "$tmp/server.pcapng" -Y "udp.port == 4791 && $1 == 63" 2> /dev/null | wc -l)
	echo "run_net: $n RoCE frames came through the router ($1 63)"
	(( n > 0 ))
}

(( EUID == 0 )) || skip "needs root (veth pairs, namespaces)"
a=dns$$
b=dnc$$
case $mode in
ipv6)
	veth "$a" "$if_a" "$b"
	conf server 0 "$a" 02:00:00:00:01:01 "ipv4 = 10.0.0.1/24" "ipv6 = 2001:db8::1/64"
	conf client "$client_cpu" "$b" 02:00:00:00:01:02 "ipv4 = 10.0.0.2/24" "ipv6 = 2001:db8::2/64"
	run 2 "$@"
	icrc_check 2001:db8::1 2001:db8::2
	;;
vlan)
	veth "$a" "$if_a" "$b"
	conf server 0 "$a" 02:00:00:00:01:01 "ipv4 = 10.0.0.1/24" "vlan = 100"
	conf client "$client_cpu" "$b" 02:00:00:00:01:02 "ipv4 = 10.0.0.2/24" "vlan = 100"
	run 1 "$@"
	icrc_check 10.0.0.1 10.0.0.2
	# Every RoCE frame the server received or sent carries the tag.
	if command -v tshark > /dev/null; then
		untagged=$(tshark -r "$tmp/server.pcapng" -Y 'udp.port == 4791 && !(vlan.id == 100)' \
			2> /dev/null | wc -l)
		tagged=$(tshark -r "$tmp/server.pcapng" -Y 'udp.port == 4791 && vlan.id == 100' \
			2> /dev/null | wc -l)
		echo "run_net: $tagged RoCE frames tagged with VLAN 100, $untagged not"
		(( untagged == 0 && tagged > 0 )) || exit 1
	fi
	;;
routed)
	ip netns add "$ns" 2> /dev/null || skip "cannot create a network namespace"
	veth "$a" "$if_a" "r$a"
	veth "$b" "$if_b" "r$b"
	ip link set "r$a" netns "$ns"
	ip link set "r$b" netns "$ns"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip -n "$ns" addr add 10.1.0.254/24 dev "r$a"
	ip -n "$ns" addr add 2001:db8:1::fe/64 dev "r$a" nodad
	ip -n "$ns" addr add 10.2.0.254/24 dev "r$b"
	ip -n "$ns" addr add 2001:db8:2::fe/64 dev "r$b" nodad
	ip -n "$ns" link set "r$a" up
	ip -n "$ns" link set "r$b" up
	conf server 0 "$a" 02:00:00:00:01:01 "ipv4 = 10.1.0.1/24" "ipv6 = 2001:db8:1::1/64" \
		"gateway = 10.1.0.254, 2001:db8:1::fe"
	conf client "$client_cpu" "$b" 02:00:00:00:01:02 "ipv4 = 10.2.0.1/24" \
		"ipv6 = 2001:db8:2::1/64" "gateway = 10.2.0.254, 2001:db8:2::fe"
	run 1 "$@"
	routed_check ip.ttl
	run 2 "$@"
	routed_check ipv6.hlim
	icrc_check 2001:db8:1::1 2001:db8:2::1
	;;
*)
	echo "run_net: unknown mode $mode" >&2
	exit 2
	;;
esac
