#!/usr/bin/env bash
# shellcheck disable=SC2016 # check() evals its conditions later
# rdma_cm connections over droce's drop-in librdmacm.so.1 that Debian's
# tools cannot stage: tests/cma/cma_conn as server (10.0.0.1) and client
# (10.0.0.2), two processes connected by memif.
#
# Usage: run_cma_conn.sh BUILD_DIR killed|loop
#   killed  the server is killed (SIGKILL) once the client is connected:
#           the client's SEND fails (retry exceeded), its rdma_disconnect()
#           gets DISCONNECTED after the DREQ's 15 retries (DROCE_CM_TIMEOUT=14:
#           0.2 s a try), and the client's debug log shows exactly 16 DREQs
#   loop    the client connects and disconnects 100 times in turn: the
#           server ends with the QPs and the DPDK heap allocations it had
#           before (telemetry /droce/qps, /eal/heap_info), with the fds
#           and about the memory it had after 10; then a second client
#           process (another MAC) connects once
#   exit    processes that return from main with rdma_cm IDs they did not
#           destroy, whose peers must hear of it at once (the library's
#           farewell at exit, as the kernel's at the rdma_cm file's
#           close): a client that leaves connected (the server's
#           DISCONNECTED within 2 s); then, each with a new server, one
#           that leaves at the request (the client REJECTED, reason 28),
#           once established (the client DISCONNECTED), and at the
#           client's DREQ, unanswered (the client's rdma_disconnect()
#           DISCONNECTED: a DREP), each within 2 s, where without it the
#           CM's retries take 4 s to a minute or nothing comes at all
set -euo pipefail

usage="usage: run_cma_conn.sh BUILD_DIR killed|loop|exit"
build=${1:?$usage}
mode=${2:?$usage}
prog=$build/tests/cma/cma_conn
# The CM's REQ, REP and DREQ are sent once and retried this many times.
cm_retries=15
loops=100
# What the server's malloc heap (bytes in use) and anonymous memory (kB)
# may grow by from the 10th connection to the 100th: a leaked rdma_cm ID
# (over 1 kB) would take more than 90 times this much. Its VmRSS grows
# too, but that is memif's shared buffers, touched one by one.
heap_slack=16384
anon_slack=256

# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"
DROPIN_ENV[0]+=":$build/lib/rdmacm/dropin"

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
pair_setup "cma-$mode"
pair_memif_confs up
prefix=cmaconn$$
# The server runs with telemetry under a prefix of its own; the EAL leaves
# the runtime directory behind.
sed -i "s/--no-telemetry/--file-prefix=$prefix/" "$tmp/server.conf"
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	pair_cleanup
	for d in /var/run/dpdk "${XDG_RUNTIME_DIR:-/tmp}/dpdk" /tmp/dpdk; do
		rm -rf "${d:?}/$prefix"
	done
}
trap cleanup EXIT

failed=0
check() {
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; failed=1; fi
}

# wait_for FILE REGEX SECONDS
wait_for() {
	for (( i = 0; i < $3 * 10; i++ )); do
		grep -Eq "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	echo "run_cma_conn: no /$2/ in $1 after $3 s" >&2
	return 1
}

# The server's QPNs on device 0 and its DPDK heap's allocations (where
# droce's QPs, CQs and rings are), from its telemetry socket.
server_tel() {
	python3 - "$prefix" <<-'EOF'
	import glob, json, socket, sys
	path = glob.glob(f"/var/run/dpdk/{sys.argv[1]}/dpdk_telemetry.v2") + \
	       glob.glob(f"/tmp/dpdk/{sys.argv[1]}/dpdk_telemetry.v2")
	s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
	s.connect(path[0])
	s.recv(4096)
	def tel(cmd):
	    s.send(cmd.encode())
	    return json.loads(s.recv(65536))[cmd.split(",")[0]]
	heap = tel("/eal/heap_info,0")
	print(f"QPs {tel('/droce/qps,0')} heap {heap['Alloc_count']} allocations {heap['Alloc_size']} bytes")
	EOF
}

# exec: the PID is the server's own, to kill and to read. The exit trap
# ends it, so this script's bound is its bound.
(exec env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/server.conf" "$prog" server 10.0.0.1 "$tcp_port" \
	> "$tmp/server.out" 2>&1) &
spid=$!
pids+=("$spid")
wait_for "$tmp/server.out" '^listening' 20

case $mode in
killed)
	# exec again: SIGUSR1 is for the client itself (which bounds its own
	# run: alarm(40)).
	(exec env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/client.conf" DROCE_CM_TIMEOUT=14 \
		DROCE_LOG=debug "$prog" killed 10.0.0.1 "$tcp_port" > "$tmp/client.out" 2>&1) &
	cpid=$!
	pids+=("$cpid")
	wait_for "$tmp/client.out" '^connected' 20
	kill -9 "$spid"
	wait "$spid" 2> /dev/null || true
	start=$SECONDS
	kill -USR1 "$cpid"
	status=0
	wait "$cpid" || status=$?
	elapsed=$((SECONDS - start))
	pids=()
	grep -Ev '^EAL|droce: QP' "$tmp/client.out" || true
	check "client exits 0 (status $status)" '(( status == 0 ))'
	check "client done in $elapsed s (< 20)" '(( elapsed < 20 ))'
	check "the SEND fails: retry exceeded" \
		'grep -q "^send: transport retry counter exceeded" "$tmp/client.out"'
	check "rdma_disconnect() gets DISCONNECTED" \
		'grep -q "^disconnect: DISCONNECTED" "$tmp/client.out"'
	# DROCE_LOG=debug: lib/cm/droce_gsi.c logs every MAD (CM class 0x07;
	# DREQ 0x0015, DREP 0x0016). The memif link is down with the server
	# gone, so a capture would see none of them leave.
	dreqs=$(grep -Ec 'GSI: MAD class 0x07 attribute 0x0015 (sent|not sent)' "$tmp/client.out" || true)
	dreps=$(grep -Ec 'GSI: MAD class 0x07 attribute 0x0016 received' "$tmp/client.out" || true)
	check "the client's CM sends $((cm_retries + 1)) DREQs ($dreqs), gets no DREP ($dreps)" \
		'(( dreqs == cm_retries + 1 && dreps == 0 ))'
	;;
loop)
	before=$(server_tel)
	status=0
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/client.conf" timeout 60 \
		"$prog" loop 10.0.0.1 "$tcp_port" "$loops" > "$tmp/client.out" 2>&1 || status=$?
	# Then another client process, on another (random) memif MAC: the
	# server's QP1 must answer it there, not at the first one's MAC.
	status2=0
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/client.conf" timeout 60 \
		"$prog" loop 10.0.0.1 "$tcp_port" 1 >> "$tmp/client.out" 2>&1 || status2=$?
	wait_for "$tmp/server.out" "^closed $((loops + 1)) " 10 || true
	after=$(server_tel)
	grep -v '^EAL' "$tmp/client.out" || true
	check "client exits 0 (status $status)" '(( status == 0 ))'
	read -r _ _ _ fds10 _ anon10 _ heap10 < <(grep '^closed 10 ' "$tmp/server.out" || true)
	read -r _ _ _ fds100 _ anon100 _ heap100 < <(grep "^closed $loops " "$tmp/server.out" || true)
	echo "server before: $before"
	echo "server after: $after"
	echo "server after 10, $loops: fds $fds10, $fds100; RssAnon $anon10, $anon100 kB; malloc $heap10, $heap100 bytes"
	check "the server closed $loops connections" '[[ -n ${fds100:-} ]]'
	check "a second client process connects too (status $status2)" '(( status2 == 0 ))'
	check "the server's QPs and DPDK heap allocations are the same before and after" \
		'[[ $before == "$after" ]]'
	check "the server's fds are the same after 10 and $loops" '[[ ${fds10:-x} == "${fds100:-y}" ]]'
	# Under AddressSanitizer freed memory waits in its quarantine, so
	# malloc'd bytes and RSS grow whatever the program does; the leak
	# checker at exit and the counts above stand in for these two.
	if [[ -z ${ASAN_OPTIONS:-} ]]; then
		check "the server's malloc'd bytes grow less than $heap_slack from 10 to $loops" \
			'(( ${heap100:-0} - ${heap10:-0} < heap_slack && ${heap10:-0} > 0 ))'
		check "the server's RssAnon grows less than $anon_slack kB from 10 to $loops" \
			'(( ${anon100:-0} - ${anon10:-0} < anon_slack && ${anon10:-0} > 0 ))'
	fi
	;;
exit)
	status=0
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/client.conf" timeout 60 \
		"$prog" leave 10.0.0.1 "$tcp_port" > "$tmp/client.out" 2>&1 || status=$?
	start=$SECONDS
	wait_for "$tmp/server.out" '^closed 1 ' 2 || true
	grep -v '^EAL' "$tmp/client.out" || true
	check "a client that leaves connected exits 0 (status $status)" '(( status == 0 ))'
	check "the server sees it disconnect within 2 s ($((SECONDS - start)) s)" \
		'grep -q "^closed 1 " "$tmp/server.out"'
	kill "$spid"
	wait "$spid" 2> /dev/null || true
	for when in request established dreq; do
		(exec env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/server.conf" timeout 60 \
			"$prog" leaver 10.0.0.1 "$tcp_port" "$when" > "$tmp/leaver-$when.out" 2>&1) &
		spid=$!
		pids=("$spid")
		wait_for "$tmp/leaver-$when.out" '^listening' 20
		status=0
		env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/client.conf" timeout 60 \
			"$prog" left 10.0.0.1 "$tcp_port" "$when" > "$tmp/left-$when.out" 2>&1 ||
			status=$?
		sstatus=0
		wait "$spid" || sstatus=$?
		pids=()
		grep -Ev '^EAL' "$tmp/left-$when.out" || true
		check "a server that leaves at $when exits 0 (status $sstatus)" '(( sstatus == 0 ))'
		check "its client hears of it within 2 s (status $status)" '(( status == 0 ))'
	done
	;;
*)
	echo "run_cma_conn: unknown mode $mode" >&2
	exit 2
	;;
esac
(( failed == 0 )) && echo "run_cma_conn: $mode passed"
exit "$failed"
