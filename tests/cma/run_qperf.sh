#!/usr/bin/env bash
# Debian's qperf with rdma_cm (-cm1) on droce's drop-in libraries, over
# af_packet on a veth pair whose ends are in two network namespaces (the
# server 10.0.0.1, the client 10.0.0.2; qperf's own TCP connection runs
# on the same link through the namespaces' kernels).
#
# qperf's server runs each test in a child process, which returns from
# main connected: no rdma_disconnect(), no rdma_destroy_id(). The client
# then disconnects and waits for the DREP. The library's farewell at exit
# answers for the child (a DREQ, or the DREP), as the kernel's rdma_cm
# does when the process's file closes; without it each test took a
# minute and more (the client's DREQ retries), and this run over three.
#
# Usage: [QPERF_TESTS="TEST..."] [KEEP_TMP=1] run_qperf.sh BUILD_DIR
#   QPERF_TESTS  qperf's tests to run (default rc_bw rc_lat); every rc_*
#                test works over -cm1 (seen here: rc_bi_bw, rc_rdma_write_bw,
#                rc_rdma_read_bw, rc_rdma_write_lat, rc_rdma_read_lat,
#                rc_compare_swap_mr, rc_fetch_add_mr); qperf makes its uc_*
#                and ud_* QPs without rdma_cm and without a GRH, which
#                RoCE refuses (EINVAL), as on rxe
#   KEEP_TMP     keep the work folder (the configurations, both outputs)
# Exits 77 (skipped) where qperf is missing or no namespace can be made.
set -euo pipefail

build=${1:?usage: run_qperf.sh BUILD_DIR}
tests=(${QPERF_TESTS:-rc_bw rc_lat})
# The whole client run: each test 1 s, a DPDK start per test on each side.
bound=60

command -v qperf > /dev/null || { echo "skipped: qperf is not installed"; exit 77; }
# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"
DROPIN_ENV[0]+=":$build/lib/rdmacm/dropin"

tmp=$(mktemp -d /tmp/droce-qperf.XXXXXX)
ns=(dqa$$ dqb$$)
server=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[[ -n $server ]] && kill "$server" 2> /dev/null
	wait 2> /dev/null || true
	ip netns del "${ns[0]}" 2> /dev/null || true
	ip netns del "${ns[1]}" 2> /dev/null || true
	[[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"
}
trap cleanup EXIT

if ! ip netns add "${ns[0]}" 2> /dev/null || ! ip netns add "${ns[1]}" ||
	! ip link add qp0$$ type veth peer name qp1$$ 2> /dev/null; then
	echo "skipped: cannot create network namespaces and a veth pair"
	exit 77
fi
for i in 0 1; do
	dev=qp$i$$ ip=10.0.0.$((i + 1)) n=${ns[$i]}
	ip link set "$dev" netns "$n"
	# No IPv6: the kernel's neighbour discovery would reach the port.
	ip netns exec "$n" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
	ip -n "$n" addr add "$ip/24" dev "$dev"
	ip -n "$n" link set "$dev" up
	ip -n "$n" link set lo up
	cat > "$tmp/conf$i" <<-EOF
	[eal]
	args = -l $i $(pair_mem) --no-pci --no-telemetry --log-level=lib.eal:error --vdev=net_af_packet0,iface=$dev
	[port0]
	device = net_af_packet0
	ipv4 = $ip/24
	mtu = 1024
	EOF
done

ip netns exec "${ns[0]}" env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/conf0" qperf \
	> "$tmp/server.out" 2>&1 &
server=$!
sleep 1
start=$SECONDS
status=0
ip netns exec "${ns[1]}" env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/conf1" \
	timeout $((bound * 2)) qperf 10.0.0.1 -cm1 -t 1 "${tests[@]}" > "$tmp/client.out" 2>&1 ||
	status=$?
elapsed=$((SECONDS - start))
grep -v '^EAL' "$tmp/client.out" || true

failed=0
check() {
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi
}
check "qperf exits 0 (status $status)" '(( status == 0 ))'
check "it reports bandwidth and latency" \
	'grep -Eq "bw += +[0-9.]+ [GMK]B/sec" "$tmp/client.out" &&
	 grep -Eq "latency += +[0-9.]+ [mun]s" "$tmp/client.out"'
check "${#tests[@]} tests in $elapsed s (< $bound)" '(( elapsed < bound ))'
if (( failed != 0 )); then
	echo "---- server ----"
	grep -v '^EAL' "$tmp/server.out" || true
fi
(( failed == 0 )) && echo "run_qperf: passed"
exit "$failed"
