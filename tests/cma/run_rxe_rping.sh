#!/usr/bin/env bash
# rping between droce and the Linux kernel's rdma_cm on rxe, both ways,
# through the rxe-peer harness (../shared/rxe-peer beside the source
# tree): rxe server and droce client, then droce server and rxe client.
# A documented command, not in CI (see docs/rdma-cm.md); needs root and
# QEMU, and the guest built once by tests/interop/run_rxe.sh.
#
# Usage: run_rxe_rping.sh BUILD_DIR
set -u

build=$(realpath "${1:?usage: run_rxe_rping.sh BUILD_DIR}")
src=$(cd "$(dirname "$0")/../.." && pwd)
peer=${DROCE_RXE_PEER:-$src/../shared/rxe-peer}
cache=${DROCE_RXE_CACHE:-/var/tmp/droce-rxe-peer}
[[ -f $cache/vmlinuz ]] || { echo "no guest in $cache: run tests/interop/run_rxe.sh once" >&2; exit 77; }
work=$(mktemp -d /tmp/droce-rxe-rping.XXXXXX)
export RXE_BUILD=$work/peer RXE_NETNS=drocerping$$
mkdir -p "$RXE_BUILD"
ln -s "$cache/vmlinuz" "$cache/initrd.img" "$RXE_BUILD/"
trap '"$peer/down.sh" > /dev/null 2>&1; echo "logs: $work"' EXIT
cat > "$work/droce.conf" <<EOC
[eal]
args = -l 0 --no-huge -m 512 --no-shconf --no-pci --no-telemetry --vdev=net_af_packet0,iface=rxe-dpdk,framesz=8192,blocksz=8192,framecnt=512
[port0]
device = net_af_packet0
ipv4 = 10.77.0.2/24
mtu = 1024
EOC
"$peer/up.sh" 1 > "$work/up.log" 2>&1 || { tail "$work/up.log"; exit 1; }
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
(( failed == 0 )) && echo "run_rxe_rping: passed" || echo "run_rxe_rping: failed"
exit "$failed"
