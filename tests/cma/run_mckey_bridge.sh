#!/usr/bin/env bash
# Debian's mckey across a Linux bridge that snoops IGMP, as a switch on a
# real network does: two droce processes on af_packet, each on a veth
# whose peer is a port of the bridge; the bridge is the querier, and
# floods no multicast it has no membership for (mcast_flood off on both
# ports). The server's rdma_join_multicast() must tell the network (its
# port's IGMP report) or the client's datagrams to 239.1.1.1 never reach
# it: the server receives its 10 datagrams, and the bridge's multicast
# database holds the group on the server's port.
# With --ipv6 the same over IPv6 and MLD: the ports have fd00::1 and
# fd00::2, the group is ff0e::1234, the bridge (given IPv6, whose
# link-local address its MLD querier sends from) snoops MLD, and its
# database must also hold the solicited-node group of the server's
# address (ff02::1:ff00:1), without which it would pass no neighbour
# solicitation for fd00::1 to the server.
#
# Usage: run_mckey_bridge.sh BUILD_DIR [--ipv6]
# Exits 77 (skipped) where no bridge or veth pair can be made.
set -euo pipefail

build=${1:?usage: run_mckey_bridge.sh BUILD_DIR [--ipv6]}
ipv6=false
[[ ${2:-} == --ipv6 ]] && ipv6=true
if $ipv6; then
	group=ff0e::1234 addr=(fd00::1 fd00::2)
else
	group=239.1.1.1 addr=(10.0.0.1 10.0.0.2)
fi

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"
DROPIN_ENV[0]+=":$build/lib/rdmacm/dropin"

tmp=$(mktemp -d /tmp/droce-mckey-br.XXXXXX)
br=dmbr$$
pids=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	ip link del "dmd0$$" 2> /dev/null || true
	ip link del "dmd1$$" 2> /dev/null || true
	ip link del "$br" 2> /dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# The bridge counts its own querier as there, and so forwards by its
# database, only a query response interval after the querier was turned
# on (before, it floods: to no port here); 10 s by default, 0.5 s here,
# set before the querier is.
if ! ip link add "$br" type bridge mcast_snooping 1 mcast_query_response_interval 50 \
	2> /dev/null; then
	echo "skipped: cannot create a bridge"
	exit 77
fi
# The bridge's IPv6 (for --ipv6): a link-local address at once (no
# duplicate address detection), from which its MLD querier sends. The
# querier counts for MLD only once a query of its own went out from an
# address (before, it floods: to no port here), so it is turned on once
# the bridge is up and has one; its next query would be half a minute
# later.
if $ipv6; then
	sysctl -qw "net.ipv6.conf.$br.accept_dad=0" "net.ipv6.conf.$br.disable_ipv6=0"
else
	sysctl -qw "net.ipv6.conf.$br.disable_ipv6=1"
fi
for i in 0 1; do
	d=dmd$i$$ b=dmb$i$$
	if ! ip link add "$d" type veth peer name "$b" 2> /dev/null; then
		echo "skipped: cannot create a veth pair"
		exit 77
	fi
	# No IPv6: the kernel's own MLD and ND would reach the ports.
	sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1" "net.ipv6.conf.$b.disable_ipv6=1"
	ip link set "$b" master "$br"
	bridge link set dev "$b" mcast_flood off
	ip link set "$b" up
	ip link set "$d" up
	cat > "$tmp/conf$i" <<-EOF
	[eal]
	args = -l $i $(pair_mem) --no-pci --no-telemetry --log-level=lib.eal:error --vdev=net_af_packet0,iface=$d
	[port0]
	device = net_af_packet0
	ipv4 = 10.0.0.$((i + 1))/24
	mtu = 1024
	EOF
	$ipv6 && echo "ipv6 = fd00::$((i + 1))/64" >> "$tmp/conf$i"
done
ip link set "$br" up
if $ipv6; then
	for (( i = 0; i < 50; i++ )); do
		[[ -n $(ip -6 addr show dev "$br" scope link) ]] && break
		sleep 0.1
	done
fi
ip link set "$br" type bridge mcast_querier 1
bridge_up=$SECONDS

# droce logs the join at level info once the QP is attached.
env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/conf0" DROCE_LOG=info timeout 30 \
	mckey -m "$group" -b "${addr[0]}" -C 10 > "$tmp/server.out" 2>&1 &
server=$!
pids+=("$server")
for (( i = 0; i < 200; i++ )); do
	grep -q 'rdma_cm: joined' "$tmp/server.out" 2> /dev/null && break
	sleep 0.1
done
# The report's way to the bridge, and the bridge's querier in place.
sleep 0.5
while (( SECONDS - bridge_up < 2 )); do sleep 0.1; done
mdb=$(bridge mdb show dev "$br")
status=0
env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/conf1" timeout 60 \
	mckey -m "$group" -b "${addr[1]}" -s -C 10 > "$tmp/client.out" 2>&1 || status=$?
sstatus=0
wait "$server" || sstatus=$?
pids=()
for side in server client; do
	echo "---- $side ----"
	grep -v '^EAL' "$tmp/$side.out" || true
done
echo "---- the bridge's multicast database after the join ----"
echo "$mdb"

failed=0
check() {
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi
}
check "the bridge has $group on the server's port" \
	'grep -Eq "port dmb0$$ grp $group " <<< "$mdb"'
if $ipv6; then
	check "the bridge has the solicited-node group of fd00::1 on the server's port" \
		'grep -Eq "port dmb0$$ grp ff02::1:ff00:1 " <<< "$mdb"'
fi
check "the client sends (status $status)" '(( status == 0 ))'
check "the server receives its 10 datagrams through the snooping bridge (status $sstatus)" \
	'(( sstatus == 0 ))'
(( failed == 0 )) && echo "run_mckey_bridge: passed"
exit "$failed"
