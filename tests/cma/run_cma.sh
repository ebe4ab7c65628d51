#!/usr/bin/env bash
# Run one of Debian's unmodified rdma_cm programs (rdmacm-utils, perftest
# -R) as a server and a client, two processes on droce's drop-in
# librdmacm.so.1 and libibverbs.so.1, connected by memif. The server is
# 10.0.0.1, the client 10.0.0.2 (tests/common/pair_env.sh).
#
# Usage: run_cma.sh BUILD_DIR [--expect REGEX] [--client-fails] [--kill-server]
#                   [--no-listen | --ready REGEX] [--ipv6] [--client PROGRAM2]
#                   PROGRAM -- SERVER_ARGS -- CLIENT_ARGS
#   @PORT@ in the arguments becomes a port of this run's own, @PORT1@ the
#   next one. Both sides must exit 0 (the client non-zero with
#   --client-fails), and the client's or server's output must match REGEX
#   when given. --kill-server stops the server once the client is done
#   (a server that listens on a port the client does not connect to).
#   The client runs PROGRAM2 when given (rdma_server and rdma_client).
#   --ipv6 gives the ports fd00::1 (server) and fd00::2 (client) as well.
#   @EAL@ in the client's arguments becomes the EAL arguments of its
#   configuration (for a DPDK application that starts the EAL itself).
#   The client starts once the server's droce logged that it listens
#   (rdma_listen(), at log level info), or logged a line that matches
#   REGEX (--ready: such as 'rdma_cm: joined', a multicast receiver's
#   join); --no-listen: a server that logs neither (a verbs program),
#   started a second before the client.
set -euo pipefail

build=${1:?usage: run_cma.sh BUILD_DIR [--expect REGEX] PROGRAM -- SERVER_ARGS -- CLIENT_ARGS}
shift
expect=
client_fails=false
kill_server=false
client_prog=
ready='rdma_cm: listening on port'
ipv6=
while [[ ${1:-} == --* ]]; do
	case $1 in
	--expect) expect=$2; shift 2 ;;
	--client-fails) client_fails=true; shift ;;
	--kill-server) kill_server=true; shift ;;
	--no-listen) ready=; shift ;;
	--ready) ready=$2; shift 2 ;;
	--ipv6) ipv6=ipv6; shift ;;
	--client) client_prog=$2; shift 2 ;;
	*) echo "run_cma: unknown option $1" >&2; exit 2 ;;
	esac
done
prog=${1:?program}
client_prog=${client_prog:-$prog}
shift
[[ ${1:-} == -- ]] && shift
server_args=()
while [[ $# -gt 0 && $1 != -- ]]; do server_args+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
client_args=("$@")
for p in "$prog" "$client_prog"; do
	if [[ $p != */* ]] && ! command -v "$p" > /dev/null; then
		echo "run_cma: $p is not installed (scripts/install-deps.sh installs it)" >&2
		exit 1
	fi
done

# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"
DROPIN_ENV[0]+=":$build/lib/rdmacm/dropin"

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
pair_setup cma
pair_memif_confs up ${ipv6:+"$ipv6"}
server_args=("${server_args[@]//@PORT@/$tcp_port}")
server_args=("${server_args[@]//@PORT1@/$((tcp_port + 1))}")
client_args=("${client_args[@]//@PORT@/$tcp_port}")
client_args=("${client_args[@]//@PORT1@/$((tcp_port + 1))}")
read -ra client_eal <<< "$(sed -n 's/^args = //p' "$tmp/client.conf")"
args=()
for a in "${client_args[@]}"; do
	if [[ $a == @EAL@ ]]; then args+=("${client_eal[@]}"); else args+=("$a"); fi
done
client_args=("${args[@]}")

# The server logs at level info: its "listening on port" line (or the
# --ready one) says when a client may start.
run() {
	local role=$1 level=
	shift
	[[ $role == server ]] && level=info
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/$role.conf" ${level:+DROCE_LOG=$level} \
		timeout 60 "$@" > "$tmp/$role.out" 2>&1
}

# start_server: the server, and the wait until a client may connect.
start_server() {
	local i

	rm -f "$tmp/memif.sock"
	run server "$prog" "${server_args[@]}" &
	pids=($!)
	for (( i = 0; i < 100; i++ )); do
		[[ -S $tmp/memif.sock ]] && break
		sleep 0.1
	done
	if [[ -n $ready ]]; then
		for (( i = 0; i < 300; i++ )); do
			grep -Eq "$ready" "$tmp/server.out" && break
			sleep 0.1
		done
		if (( i == 300 )); then
			echo "run_cma: the server never logged /$ready/" >&2
			grep -v '^EAL' "$tmp/server.out" >&2 || true
			exit 1
		fi
	else
		sleep 1 # the server's device is up, as a rule
	fi
}

start_server
# A connect that comes before the server listens is refused with reason 8
# (invalid service ID), as the kernel's CM refuses it; the programs give
# up then (perftest says "Unexpected CM event ... 8", REJECTED's number, or
# "RDMA_CM_EVENT_REJECTED; error: 8", rping and ucmatose the latter way).
# The wait above is not always enough: perftest's -R connects twice, and
# its second connect races the server's second listen (a client that
# loses it retries on the CM IDs it has just destroyed, and crashes, in
# Debian's perftest 4.5-0.17). Then the pair starts again, twice at most:
# the server too, as it waits for a connection that will not come, and
# DPDK 22.11's memif server takes no new client after one crashed.
for (( try = 0; ; try++ )); do
	status=0
	run client "$client_prog" "${client_args[@]}" || status=$?
	if (( status == 0 || try == 2 )) || $client_fails ||
	   ! grep -Eq 'RDMA_CM_EVENT_REJECTED.*error:? 8|Unexpected CM event .* 8$' \
		"$tmp/client.out"; then
		break
	fi
	echo "run_cma: refused before the server listened; the pair again" >&2
	{ echo "---- client, try $((try + 1)) ----"; grep -v '^EAL' "$tmp/client.out"; } >&2
	kill "${pids[0]}" 2> /dev/null || true
	wait "${pids[0]}" 2> /dev/null || true
	start_server
done
rc=0
if $kill_server; then
	kill "${pids[0]}" 2> /dev/null || true
	wait "${pids[0]}" 2> /dev/null || true
else
	wait "${pids[0]}" || rc=$?
fi
pids=()
pair_show
if $client_fails; then
	(( status != 0 )) || { echo "run_cma: the client should have failed" >&2; exit 1; }
	status=0
fi
if (( status != 0 || rc != 0 )); then
	echo "run_cma: $prog failed (server exit $rc, client exit $status)" >&2
	exit 1
fi
if [[ -n $expect ]] && ! grep -Eq "$expect" "$tmp/client.out" "$tmp/server.out"; then
	echo "run_cma: neither side's output matches /$expect/" >&2
	exit 1
fi
echo "run_cma: $prog passed"
