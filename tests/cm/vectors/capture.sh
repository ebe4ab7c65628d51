#!/usr/bin/env bash
# shellcheck disable=SC2016 # the guest expands $(...) in its commands
# Capture the CM MADs of two rxe peers (the rxe-peer harness, beside the
# source tree in ../shared/rxe-peer) for tests/cm: a REQ nobody listens for
# (REJ), a REQ the server's kernel holds while its program does not accept
# (MRA, then the REJ when that program is killed), udaddy's SIDR REQ/REP,
# and a SIDR REQ nobody listens for (SIDR REP, status 1). As root; guest 0
# (10.77.0.11) serves, guest 1 (10.77.0.12) is the client; about 2 minutes.
#
# Usage: capture.sh OUT.pcapng
set -u

out=$(realpath -m "${1:?usage: capture.sh OUT.pcapng}")
src=$(cd "$(dirname "$0")/../../.." && pwd)
peer=${DROCE_RXE_PEER:-$src/../shared/rxe-peer}
cache=${DROCE_RXE_CACHE:-/var/tmp/droce-rxe-peer}
[[ -f $cache/vmlinuz ]] || { echo "no guest in $cache: run tests/interop/run_rxe.sh once" >&2; exit 77; }
work=$(mktemp -d /tmp/droce-cm-capture.XXXXXX)
export RXE_BUILD=$work/peer RXE_NETNS=drocecmcap$$
mkdir -p "$RXE_BUILD"
ln -s "$cache/vmlinuz" "$cache/initrd.img" "$RXE_BUILD/"
cpid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[[ -n $cpid ]] && kill -INT "$cpid" 2> /dev/null && sleep 1
	"$peer/down.sh" > /dev/null 2>&1
	echo "logs: $work"
}
trap cleanup EXIT
run() { "$peer/guest-run.sh" -t "$1" "$2" "$3"; }

"$peer/up.sh" 2 > "$work/up.log" 2>&1 || { tail "$work/up.log"; exit 1; }
"$peer/ns.sh" dumpcap -q -i br-rxe -f 'udp port 4791' -w "$out" 2> "$work/dumpcap.log" &
cpid=$!
sleep 3

echo "== REQ, no listener: REJ reason 8"
run 60 1 'rping -c -a 10.77.0.11 -p 7999 -C 1'

echo "== REQ held: MRA, then REJ when the server is killed"
run 10 0 'ucmatose -b 10.77.0.11 -p 7471 -c 1 -C 1 > /tmp/u.log 2>&1 & echo $! > /tmp/u.pid'
sleep 3
run 10 1 'ucmatose -s 10.77.0.11 -p 7471 -c 2 -C 1 > /tmp/u.log 2>&1 & echo $! > /tmp/u.pid'
sleep 10
run 10 0 'kill $(cat /tmp/u.pid); sleep 1; cat /tmp/u.log'
sleep 3
run 10 1 'kill $(cat /tmp/u.pid); sleep 1; cat /tmp/u.log'

echo "== udaddy: SIDR REQ and REP, 2 UD SENDs each way"
run 10 0 'udaddy -b 10.77.0.11 -C 2 > /tmp/d.log 2>&1 &'
sleep 3
run 60 1 'udaddy -s 10.77.0.11 -C 2'
run 10 0 'sleep 1; cat /tmp/d.log'

echo "== udaddy, no listener: SIDR REP status 1"
run 60 1 'udaddy -s 10.77.0.11 -C 1'
sleep 2
