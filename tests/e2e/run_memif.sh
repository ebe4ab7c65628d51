#!/usr/bin/env bash
# Run rc_verify as two processes, a server and a client, each with its own
# droce configuration and connected by a memif link (or by AF_XDP sockets
# on two Linux interfaces: --af-xdp).
#
# Usage: run_memif.sh [--capture DIR] [--fault SPEC] [--fault-tx SPEC] [--engines N] [--af-xdp IF,IF] BUILD_DIR [rc_verify options...]
#   --af-xdp S,C   the server's port is net_af_xdp on interface S, the
#                  client's on C (the two ends of a veth pair, say:
#                  tests/e2e/run_af_xdp.sh makes one) instead of memif
#   --capture DIR  each side also writes every frame to DIR/server.pcapng
#                  and DIR/client.pcapng (DROCE_CAPTURE)
#   --kill-client S  kill the client (SIGKILL) S seconds after it started;
#                  then the server must end, within 30 s, with a
#                  retry-exceeded completion (pass -k so it keeps going)
#   --client-first S  start the client first and the server S seconds
#                  later: the client's memif port cannot start until the
#                  server listens, so it comes up with its link down and
#                  must connect by itself once the server is there
#   --engines N    N engines per side (one memif queue pair each; QPs
#                  spread over them, frames on the wrong queue redirected)
#   --fault SPEC   both sides inject faults into what they receive
#                  (fault_rx = SPEC, e.g. drop=0.05,dup=0.01; each side
#                  with its own seed): see docs/reliability.md
#   --fault-tx SPEC  the same for what each side sends (fault_tx = SPEC):
#                  the fault stage holds, duplicates and drops frames that
#                  point into memory regions (zero-copy TX)
#   --fault-seed N add N to the fault stages' seeds (0)
#   --rerun-retry-exceeded  when the run fails only because a QP used up
#                  its retries (which heavy injected loss makes a matter of
#                  luck: docs/reliability.md), run it once more with other
#                  fault seeds; any other failure fails at once
# The options go to both sides (e.g. -n 2000 -e -v). Exits 0 when both
# sides pass.
set -euo pipefail

all_args=("$@")
capture=
engines=
fault=
fault_tx=
kill_after=
client_first=
af_xdp=
fault_seed=0
rerun=
while [[ ${1:-} == --* ]]; do
	if [[ $1 == --rerun-retry-exceeded ]]; then
		rerun=1
		shift
		continue
	fi
	case $1 in
	--capture) capture=${2:?--capture needs a directory} ;;
	--kill-client) kill_after=${2:?--kill-client needs seconds} ;;
	--client-first) client_first=${2:?--client-first needs seconds} ;;
	--fault) fault=${2:?--fault needs a fault list} ;;
	--fault-tx) fault_tx=${2:?--fault-tx needs a fault list} ;;
	--fault-seed) fault_seed=${2:?--fault-seed needs a number} ;;
	--engines) engines=${2:?--engines needs a number} ;;
	--af-xdp) af_xdp=${2:?--af-xdp needs two interfaces} ;;
	*) echo "run_memif: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
build=${1:?usage: run_memif.sh [--capture DIR] [--fault SPEC] BUILD_DIR [rc_verify options...]}

# only_out_of_retries LOG: the run in LOG failed, and only because a QP
# used up its retries: every FAIL is a retry-exceeded completion or a side
# stopping because its peer did, and every side that failed exited with 1
# (not killed by a signal or an error of the script).
only_out_of_retries() {
	grep -q "FAIL: .*status transport retry counter exceeded" "$1" &&
	! grep "FAIL:" "$1" | grep -qv -e "status transport retry counter exceeded" \
		-e "FAIL: the peer failed" -e "FAIL: the peer closed the connection" &&
	! grep -E "run_memif: the (server|client) failed \(exit [0-9]+\)" "$1" |
		grep -qv "(exit 1)"
}

if [[ -n $rerun ]]; then
	args=()
	for a in "${all_args[@]}"; do
		[[ $a == --rerun-retry-exceeded ]] || args+=("$a")
	done
	log=$(mktemp /tmp/droce-e2e-rerun.XXXXXX)
	trap 'rm -f "$log"' EXIT
	rc=0
	"$0" "${args[@]}" 2>&1 | tee "$log" || rc=$?
	if (( rc != 0 )) && only_out_of_retries "$log"; then
		echo "run_memif: a QP ran out of retries, and nothing else failed:" \
		     "once more with other fault seeds"
		rc=0
		"$0" --fault-seed 1000 "${args[@]}" || rc=$?
	fi
	exit "$rc"
fi
shift
exe=$build/tests/e2e/rc_verify
if [[ ! -x $exe ]]; then
	echo "run_memif: $exe is not built" >&2
	exit 1
fi

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
pair_setup e2e

# conf ROLE CPU IP MAC: write ROLE's configuration.
conf() {
	local vdev=net_memif0,role=$1,socket=$tmp/memif.sock,socket-abstract=no,bsize=4352
	local iface

	if [[ -n $af_xdp ]]; then
		if [[ $1 == server ]]; then iface=${af_xdp%,*}; else iface=${af_xdp#*,}; fi
		vdev=net_af_xdp0,iface=$iface,start_queue=0,queue_count=1
	fi
	cat > "$tmp/$1.conf" <<-EOF
	# rc_verify $1, written by run_memif.sh
	[eal]
	args = -l $2 $mem --no-pci --no-telemetry --log-level=lib.eal:notice --vdev=$vdev
	[port0]
	device = ${vdev%%,*}
	ipv4 = $3/24
	mac = $4
	mtu = 4096
	EOF
	if [[ -n $fault ]]; then
		echo "fault_rx = $fault,seed=$(( fault_seed + 11 + $2 ))" >> "$tmp/$1.conf"
	fi
	# segment= cuts each received frame into up to 21 mbufs while the
	# fault stage holds it: a pool sized for whole frames runs dry.
	if [[ $fault$fault_tx == *segment=* ]]; then
		echo "mbufs = 32767" >> "$tmp/$1.conf"
	fi
	if [[ -n $fault_tx ]]; then
		echo "fault_tx = $fault_tx,seed=$(( fault_seed + 23 + $2 ))" >> "$tmp/$1.conf"
	fi
	if [[ -n $engines ]]; then
		echo "engines = $engines" >> "$tmp/$1.conf"
	fi
}
conf server 0 10.0.0.1 02:00:00:00:00:01
conf client "$client_cpu" 10.0.0.2 02:00:00:00:00:02

# start ROLE FLAG [options...]: run one side in the background.
declare -A role
start() {
	local name=$1 flag=$2
	local vars=(DROCE_CONF="$tmp/$name.conf")

	shift 2
	if [[ -n $capture ]]; then
		mkdir -p "$capture"
		vars+=(DROCE_CAPTURE="$capture/$name.pcapng")
	fi
	env "${vars[@]}" "$exe" "$flag" -d droce0 -g 1 -p "$tcp_port" "$@" \
		> >(tee "$tmp/$name.out") 2>&1 &
	pids+=($!)
	role[$!]=$name
}

# wait_both: wait for both sides; exit 1 if one fails. A side that fails
# tells its peer, which then stops too; one that dies before it connected
# cannot, so the other gets 10 s before the exit trap kills it.
wait_both() {
	local running=("${pids[@]}") left p rc finished i

	while (( ${#running[@]} > 0 )); do
		rc=0
		wait -n -p finished "${running[@]}" || rc=$?
		left=()
		for p in "${running[@]}"; do
			[[ $p == "$finished" ]] || left+=("$p")
		done
		running=("${left[@]}")
		if (( rc != 0 )); then
			echo "run_memif: the ${role[$finished]} failed (exit $rc)" >&2
			for (( i = 0; i < 100 && ${#running[@]} > 0; i++ )); do
				kill -0 "${running[0]}" 2>/dev/null || break
				sleep 0.1
			done
			exit 1
		fi
	done
}

rm -f "$tmp/memif.sock"
if [[ -n $client_first ]]; then
	start client -c "$@"
	sleep "$client_first"
	start server -s "$@"
	wait_both
	if ! grep -q "the ethdev does not start" "$tmp/client.out" ||
	   ! grep -q "the ethdev started" "$tmp/client.out"; then
		echo "run_memif: the client's port did not come up link-down and connect later" >&2
		exit 1
	fi
	echo "run_memif: both sides passed, the client started $client_first s before its server"
	exit 0
fi
start server -s "$@"
server=${pids[0]}
# The memif server creates its socket while the EAL starts; a client
# started before that would find nothing to connect to. (AF_XDP needs no
# order: the client retries its TCP connection to the server.)
for (( i = 0; i < 300; i++ )); do
	if [[ -n $af_xdp || -S $tmp/memif.sock ]] || ! kill -0 "$server" 2>/dev/null; then
		break
	fi
	sleep 0.1
done
if [[ -z $af_xdp && ! -S $tmp/memif.sock ]]; then
	wait "$server" || true
	echo "run_memif: the server did not create its memif socket" >&2
	exit 1
fi
start client -c "$@"

if [[ -n $kill_after ]]; then
	sleep "$kill_after"
	kill -9 "${pids[1]}"
	wait "${pids[1]}" 2>/dev/null || true
	t0=$SECONDS
	rc=0
	timeout 30 tail --pid="$server" -f /dev/null || rc=$?
	wait "$server" 2>/dev/null || true
	if (( rc != 0 )); then
		echo "run_memif: the server did not notice its peer's death within 30 s" >&2
		exit 1
	fi
	if ! grep -q "transport retry counter exceeded" "$tmp/server.out"; then
		echo "run_memif: the server ended without a retry-exceeded completion" >&2
		exit 1
	fi
	echo "run_memif: the server's QP failed with retry exceeded" \
	     "$(( SECONDS - t0 )) s after its peer was killed"
	exit 0
fi

wait_both
echo "run_memif: both sides passed"
