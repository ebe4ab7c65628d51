# shellcheck shell=bash
# Sourced by the benchmarks (sweep.sh, compare.sh, targets.sh, stages.sh): two droce-perf
# processes over one memif link, one pair per point. bench_setup NAME
# BUILD_DIR checks what a benchmark needs and sets, besides what
# pair_setup sets (tmp, pids, tcp_port):
#   exe        the droce-perf binary
#   idle_tries how many 0.3 s looks bench_wait_idle takes at most (66: 20 s)
#   busy_runs  how many runs started on a busy machine (bench_wait_idle gave up)
# shellcheck disable=SC2034 # the variables are for the sourcing script

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/pair_env.sh"

# bench_opts USAGE ARGS...: the benchmarks' options into secs (-d),
# iters (-n), repeats (-r) and idle_s (-i; idle_tries follows it), each
# keeping the value the caller set before as its default (else 2, 2000,
# 3 and 20); the operands are left in bench_args.
bench_opts() {
	local usage=$1 opt OPTIND=1
	shift
	secs=${secs:-2}
	iters=${iters:-2000}
	repeats=${repeats:-3}
	idle_s=${idle_s:-20}
	while getopts d:n:r:i: opt; do
		case $opt in
		d) secs=$OPTARG ;;
		n) iters=$OPTARG ;;
		r) repeats=$OPTARG ;;
		i) idle_s=$OPTARG ;;
		*) echo "$usage" >&2; exit 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	bench_args=("$@")
	idle_tries=$(( idle_s * 10 / 3 ))
}

bench_setup() {
	command -v gnuplot >/dev/null || { echo "$1: gnuplot is missing" >&2; exit 1; }
	bench_pairs "$@"
}

# bench_pairs NAME BUILD_DIR: what bench_run needs, without the plots'
# gnuplot (scripts/build-pgo.sh trains with bench_run).
bench_pairs() {
	bench_name=$1
	exe=$2/apps/droce-perf/droce-perf
	[[ -x $exe ]] || { echo "$bench_name: $exe is not built" >&2; exit 1; }
	mountpoint -q /dev/hugepages ||
		{ echo "$bench_name: no hugepages: run scripts/hugepages.sh" >&2; exit 1; }
	pair_setup "$bench_name"
	bench_sock=$tmp/memif.sock
	idle_tries=${idle_tries:-66}
	busy_runs=0
}

# The two droce-perf processes busy-poll one core each: anything else on
# the machine takes its time from them and shows as lost bandwidth, or as
# latency in multiples of the scheduler's tick. So wait until the CPUs
# were 90% idle for a moment ($idle_tries looks of 0.3 s at most).
bench_wait_idle() {
	local t1 i1 t2 i2 u n s i w q sq st rest tries
	for (( tries = 0; tries < idle_tries; tries++ )); do
		read -r _ u n s i w q sq st rest < /proc/stat
		t1=$((u + n + s + i + w + q + sq + st)) i1=$i
		sleep 0.3
		read -r _ u n s i w q sq st rest < /proc/stat
		t2=$((u + n + s + i + w + q + sq + st)) i2=$i
		(( 100 * (i2 - i1) >= 90 * (t2 - t1) )) && return 0
	done
	busy_runs=$((busy_runs + 1))
	(( idle_tries == 0 )) || echo "$bench_name: the machine is busy; measuring anyway" >&2
}

# bench_targets: issue 12's targets as runs, "NAME|droce-perf options"
# each, in bench_target_list (with secs and iters): what targets.sh
# measures side by side and stages.sh splits by stage.
bench_targets() {
	bench_target_list=(
		"write64k|--test write --mode bw -s 65536 -D $secs -m 4096"
		"write64|--test write --mode bw -s 64 -D $secs -m 4096 -t 128 -Q 100"
		"write64list|--test write --mode bw -s 64 -D $secs -m 4096 -l 32 -t 512 -Q 32"
		"lat8|--test write --mode lat -s 8 -n $iters -m 4096"
	)
}

# bench_run NAME [perf options...]: a server/client pair (server lcore 0,
# client lcore 1); the client's JSON is kept as $tmp/NAME.json, the
# server's as $tmp/NAME.server.json. Returns 1 (and keeps no JSON) when
# either side fails.
bench_run() {
	local name=$1 s i vdev
	shift
	bench_wait_idle
	echo "$bench_name: $name" >&2
	vdev="socket=$bench_sock,socket-abstract=no,bsize=4352"
	rm -f "$bench_sock"
	timeout 120 "$exe" -l 0 --in-memory --no-pci --no-telemetry --vdev="net_memif0,role=server,$vdev" -- \
		--json -p "$tcp_port" --ip 10.0.0.1/24 --mac 02:00:00:00:00:01 "$@" \
		>"$tmp/$name.server.json" 2>"$tmp/$name.server.err" &
	s=$!
	pids=("$s")
	for (( i = 0; i < 300; i++ )); do
		[[ -S $bench_sock ]] && break
		sleep 0.05
	done
	if ! timeout 120 "$exe" -l 1 --in-memory --no-pci --no-telemetry --vdev="net_memif0,role=client,$vdev" -- \
		--json -p "$tcp_port" --ip 10.0.0.2/24 --mac 02:00:00:00:00:02 "$@" 127.0.0.1 \
		>"$tmp/$name.json" 2>"$tmp/$name.err" || ! wait "$s"; then
		echo "$bench_name: $name failed (its figures are left out):" >&2
		grep -hv '^EAL' "$tmp/$name.err" "$tmp/$name.server.err" | tail -n 5 >&2
		rm -f "$tmp/$name.json" "$tmp/$name.server.json"
		wait
		pids=()
		return 1
	fi
	pids=()
}
