#!/usr/bin/env bash
# rping between droce and the Linux kernel's rdma_cm on rxe, both ways,
# through the rxe-peer harness (../shared/rxe-peer beside the source
# tree): rxe server and droce client, then droce server and rxe client;
# then udaddy (SIDR and UD SENDs) the same two ways, and mckey (a
# multicast group both join; one side sends 5 datagrams to it, the other
# must receive them) with droce receiving, then rxe.
# CI runs it in the interop suite (interop-rxe-rping); it needs root and
# QEMU, and prints SKIP and exits 77 without them. The guest is built into
# the cache tests/interop/run_rxe.sh uses, when that has none.
#
# Usage: run_rxe_rping.sh BUILD_DIR
# Environment: DROCE_RXE_PEER, DROCE_RXE_CACHE as for tests/interop/run_rxe.sh.
set -uo pipefail

build=$(realpath "${1:?usage: run_rxe_rping.sh BUILD_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
peer=${DROCE_RXE_PEER:-$src/../shared/rxe-peer}
cache=${DROCE_RXE_CACHE:-/var/tmp/droce-rxe-peer}
skip() {
	echo "SKIP: $*"
	exit 77
}
(( EUID == 0 )) || skip "needs root (network namespace, QEMU taps)"
[[ -x $peer/up.sh ]] || skip "no rxe-peer harness at $peer"
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 is not installed"
command -v rping > /dev/null || skip "rping (rdmacm-utils) is not installed"
if [[ ! -f $cache/vmlinuz ]] && ! RXE_BUILD=$cache "$peer/build.sh" > /dev/null 2>&1; then
	skip "the rxe peer cannot be built into $cache"
fi
work=$(mktemp -d /tmp/droce-rxe-rping.XXXXXX)
export RXE_BUILD=$work/peer RXE_NETNS=drocerping$$
mkdir -p "$RXE_BUILD"
ln -s "$cache/vmlinuz" "$cache/initrd.img" "$RXE_BUILD/"
# In a session of its own, so that meson's kill of the process group on a
# timeout does not stop it: the guest (a daemon) must go anyway.
trap 'setsid "$peer/down.sh" > /dev/null 2>&1 & wait $!; echo "logs: $work"' EXIT
trap 'exit 143' TERM
cat > "$work/droce.conf" <<EOC
[eal]
args = -l 0 --no-huge -m 512 --no-shconf --no-pci --no-telemetry --vdev=net_af_packet0,iface=rxe-dpdk,framesz=8192,blocksz=8192,framecnt=512
[port0]
device = net_af_packet0
ipv4 = 10.77.0.2/24
mtu = 1024
EOC
"$peer/up.sh" 1 > "$work/up.log" 2>&1 || { tail "$work/up.log"; skip "the rxe peer does not boot"; }
droce() {
	"$peer/ns.sh" env LD_LIBRARY_PATH="$build/lib/verbs/dropin:$build/lib/rdmacm/dropin" \
		DROCE_CONF="$work/droce.conf" timeout -k 5 60 "$@"
}
failed=0

echo "== rxe server, droce client"
"$peer/guest-run.sh" 0 'rping -s -a 10.77.0.11 -p 7174 -C 5 > /tmp/rs.log 2>&1 &'
sleep 2
droce rping -c -a 10.77.0.11 -p 7174 -C 5 -v 2>&1 | grep -v '^EAL' || failed=1
"$peer/guest-run.sh" 0 'sleep 1; cat /tmp/rs.log'

echo "== droce server, rxe client"
droce rping -s -a 10.77.0.2 -p 7175 -C 5 > "$work/droce-server.log" 2>&1 &
dpid=$!
sleep 4
"$peer/guest-run.sh" -t 60 0 'rping -c -a 10.77.0.2 -p 7175 -C 5 -v' || failed=1
wait "$dpid" || failed=1
grep -v '^EAL' "$work/droce-server.log"

echo "== udaddy: rxe server, droce client"
"$peer/guest-run.sh" 0 'udaddy -b 10.77.0.11 -C 5 > /tmp/us.log 2>&1 &'
sleep 2
droce udaddy -s 10.77.0.11 -C 5 2>&1 | grep -v '^EAL' || failed=1
"$peer/guest-run.sh" 0 'sleep 1; cat /tmp/us.log'

echo "== udaddy: droce server, rxe client"
droce udaddy -b 10.77.0.2 -C 5 > "$work/droce-udaddy.log" 2>&1 &
dpid=$!
sleep 4
"$peer/guest-run.sh" -t 60 0 'udaddy -s 10.77.0.2 -C 5' || failed=1
wait "$dpid" || failed=1
grep -v '^EAL' "$work/droce-udaddy.log"

echo "== mckey: rxe receives, droce sends"
"$peer/guest-run.sh" 0 'timeout 30 mckey -m 239.1.1.1 -b 10.77.0.11 -C 5 > /tmp/mr.log 2>&1 &'
sleep 1
droce mckey -m 239.1.1.1 -b 10.77.0.2 -s -C 5 2>&1 | grep -v '^EAL' || failed=1
# The receiver ends once its 5 datagrams came (mckey's own pause is 3 s).
"$peer/guest-run.sh" 0 'sleep 2; cat /tmp/mr.log; grep -q "return status 0" /tmp/mr.log' || failed=1

echo "== mckey: droce receives, rxe sends"
droce mckey -m 239.1.1.2 -b 10.77.0.2 -C 5 > "$work/droce-mckey.log" 2>&1 &
dpid=$!
sleep 3
"$peer/guest-run.sh" -t 60 0 'mckey -m 239.1.1.2 -b 10.77.0.11 -s -C 5' || failed=1
wait "$dpid" || failed=1
grep -v '^EAL' "$work/droce-mckey.log"
(( failed == 0 )) && echo "run_rxe_rping: passed" || echo "run_rxe_rping: failed"
exit "$failed"
