#!/usr/bin/env bash
# UCX over droce: Debian's unmodified ucx_perftest (ucx-utils) as a server
# and a client, two processes on droce's drop-in libibverbs.so.1 joined by
# memif, through UCX's rc_verbs and ud_verbs transports: UCT's tests, and
# UCP's (tag matching, what MPI sits on) on those transports alone.
#
# Usage: run_ucx.sh BUILD_DIR [TEST...]
#   TEST is TRANSPORT:TEST[:DATA[:SIZE]] (e.g. rc_verbs:put_lat,
#   rc_verbs:put_bw:zcopy:65536, rc_verbs:tag_bw::65536); without one, the
#   list below runs. A UCP test (tag_*, ucp_*, stream_*) gets UCX_TLS set
#   to TRANSPORT, with ud_verbs beside rc_verbs (UCP's wireup needs a
#   transport without connections, as on any HCA). Each
#   test must exit 0 on both sides and print its "Final:" line of numbers.
#   At the end, per test: the median (UCX's, over the last 2048 samples),
#   the average over the whole run (UCX's "overall"; its "average" column
#   covers the last report interval only) and bandwidth; for a latency
#   test also the largest sample, from a second run of 2048 iterations
#   with -R 100 (UCX's percentile rank: its percentile is over its last
#   2048 samples, so then over all of them). Latencies in usec, one way
#   (half the round trip). An average far above the median is a stall
#   (tests/perf/lat_tail.sh checks the tail). A test that times out runs
#   once more, and says so: the stall for good that about one test in ten
#   had (a memif client turned away by a server not started yet, which
#   droce now restarts: docs/config.md) should not come back, and if it
#   does the rerun keeps the evidence in the log.
#
# UCX looks for /dev/infiniband/<dev_name> before it opens a device:
# scripts/droce-setup.sh makes the entries (and removes them at the end
# when this script made them). Both ports count as active from the start
# (link = up): UCX reads the port state when it opens the device, which
# the client may do before the memif server exists (its port then comes
# up when the server is there). Exits 77 (skipped) without ucx_perftest
# or without the right to create device entries.
set -euo pipefail

build=${1:?usage: run_ucx.sh BUILD_DIR [TEST...]}
shift
tests=("$@")
if (( ${#tests[@]} == 0 )); then
	tests=(rc_verbs:put_lat rc_verbs:am_lat
	       rc_verbs:put_bw:bcopy:4096 rc_verbs:put_bw:zcopy:65536
	       rc_verbs:am_bw:bcopy:4096 rc_verbs:am_bw:zcopy:4096
	       ud_verbs:am_lat ud_verbs:am_bw:bcopy:2048
	       rc_verbs:tag_lat rc_verbs:tag_bw::65536)
fi
if ! command -v ucx_perftest > /dev/null; then
	echo "run_ucx: ucx_perftest is not installed (apt-get install ucx-utils)" >&2
	exit 77
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
UCX_TIMEOUT=60

# shellcheck source=tests/common/dropin_env.sh
source "$top/tests/common/dropin_env.sh"
dropin_env "$build"
# shellcheck source=tests/common/pair_env.sh
source "$top/tests/common/pair_env.sh"
pair_setup ucx

made_nodes=
if [[ ! -c /dev/infiniband/uverbs0 ]]; then
	if ! bash "$top/scripts/droce-setup.sh" up 1 > /dev/null 2>&1; then
		echo "run_ucx: cannot create /dev/infiniband/uverbs0 (not root?)" >&2
		exit 77
	fi
	made_nodes=1
fi
cleanup() {
	pair_cleanup
	if [[ -n $made_nodes ]]; then
		bash "$top/scripts/droce-setup.sh" down
	fi
}
trap cleanup EXIT

pair_memif_confs up

# perftest ROLE GID ARGS...: ucx_perftest on the drop-in with GID index
# GID, UCX_TIMEOUT seconds at most (a run takes a few). Only the transport named by -x is opened, so no
# shared-memory transport can carry the test instead.
perftest() {
	local role=$1 gid=$2
	shift 2
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/$role.conf" UCX_IB_GID_INDEX="$gid" \
		${ucp_tls:+UCX_TLS=$ucp_tls UCX_NET_DEVICES=droce0:1} \
		timeout "$UCX_TIMEOUT" ucx_perftest -p "$tcp_port" "$@"
}

# run_one TEST [ARGS...]: run it once, with ucx_perftest's ARGS added; sets
# rc and src (the client's and the server's exit status) and final (the
# client's "Final:" line).
run_one() {
	local t=$1 tl test data size gid args out server i ucp_tls

	shift
	IFS=: read -r tl test data size <<< "$t"
	args=(-d droce0:1 -x "$tl" -t "$test")
	ucp_tls=
	case $test in
	tag_* | ucp_* | stream_*) ucp_tls=$tl; [[ $tl == rc_verbs ]] && ucp_tls+=,ud_verbs ;;
	esac
	# The IPv4 GID for every transport: ud_verbs reads the packet type
	# from the completion's sl as mlx5 reports it, and so does droce.
	gid=1
	case $test in
	*_lat) args+=(-s "${size:-8}" -n 20000 -w 1000) ;;
	*) args+=(-s "${size:-4096}" -n 20000 -w 100) ;;
	esac
	[[ -n $data ]] && args+=(-D "$data")
	args+=("$@")
	out=$tmp/${t//:/_}
	rm -f "$tmp/memif.sock"
	# The server opens its device (and starts DPDK) only once the client
	# has connected over TCP, and so does the client: either memif side
	# may come first.
	perftest server "$gid" "${args[@]}" > "$out.server" 2>&1 &
	server=$!
	pids+=("$server")
	for (( i = 0; i < 50; i++ )); do
		rc=0
		perftest client "$gid" "${args[@]}" 127.0.0.1 > "$out.client" 2>&1 || rc=$?
		grep -q "Connection refused\|connect.*failed" "$out.client" || break
		sleep 0.2
	done
	src=0
	wait "$server" || src=$?
	final=$(grep -m1 '^Final:' "$out.client" || true)
	echo "---- $t: client exit $rc, server exit $src"
	grep -v '^EAL\|^$\|Failed to connect socket' "$out.client" | tail -n 20
}

status=0
summary=()
again=()
for t in "${tests[@]}"; do
	run_one "$t"
	# A stall ends a run with a timeout (124) or UCX's abort on its own
	# timeout (134): said, and run once more.
	if (( rc == 124 || src == 124 || rc == 134 || src == 134 )); then
		echo "run_ucx: $t stalled (client exit $rc, server exit $src): once more"
		again+=("$t")
		run_one "$t"
	fi
	if (( rc != 0 || src != 0 )) || [[ -z $final ]] ||
	   [[ ! $final =~ ^Final:\ +[0-9]+\ +[0-9.]+\ +[0-9.]+ ]]; then
		echo "run_ucx: $t failed" >&2
		echo "---- $t: server output" >&2
		tail -n 30 "$tmp/${t//:/_}.server" >&2
		status=1
		continue
	fi
	# Final: iterations, percentile, average (last interval), overall (us),
	# MB/s average/overall, msg/s average/overall
	read -r _ _ median _ avg _ bw _ <<< "$final"
	max=-
	if [[ $t == *_lat* ]]; then
		run_one "$t" -n 2048 -R 100
		if (( rc == 0 && src == 0 )) && [[ -n $final ]]; then
			read -r _ _ max _ <<< "$final"
		else
			echo "run_ucx: $t: the run for the largest sample failed (not counted)"
		fi
	fi
	summary+=("$(printf '%-32s median %8s  average %10s  max %10s us  %10s MB/s' \
		"$t" "$median" "$avg" "$max" "$bw")")
done
echo "---- summary"
printf '%s\n' "${summary[@]}"
if (( ${#again[@]} > 0 )); then
	echo "run_ucx: stalled once and ran again: ${again[*]}"
fi
exit $status
