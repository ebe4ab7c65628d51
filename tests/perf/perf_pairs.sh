# Functions for scripts that run droce-perf pairs over one memif link
# (run_perf.sh, exit_stress.sh), or with $afp set ("IFACE_A,IFACE_B", the
# two ends of a veth pair) over af_packet with framesz=${framesz:-8192}.
# Source it with $build set to the build
# folder and $me to the script's name; it finds droce-perf ($exe), sets up
# the pair's environment (tests/common/pair_env.sh) and counts $runs and
# $failures.

exe=$build/apps/droce-perf/droce-perf
if [[ ! -x $exe ]]; then
	echo "$me: $exe is not built" >&2
	exit 1
fi

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/pair_env.sh"
pair_setup perf-test
sock=$tmp/memif.sock
failures=0
runs=0

fail() {
	echo "$me: FAIL: $*" >&2
	failures=$((failures + 1))
}

eal() { # ROLE CPU
	local iface
	if [[ -n ${afp:-} ]]; then
		iface=${afp%%,*}
		[[ $1 == client ]] && iface=${afp#*,}
		echo "-l $2 $mem --no-pci --no-telemetry" \
		     "--vdev=net_af_packet0,iface=$iface,framesz=${framesz:-8192},blocksz=8192,framecnt=512"
		return
	fi
	echo "-l $2 $mem --no-pci --no-telemetry" \
	     "--vdev=net_memif0,role=$1,socket=$sock,socket-abstract=no,bsize=${bsize:-4352}"
}

# side ROLE NAME [perf options...]: start one side in the background
# (its pid in $side_pid); outputs go to $tmp/NAME.ROLE.{out,err}.
side() {
	local role=$1 name=$2 cpu=0 ip=10.0.0.1 mac=02:00:00:00:00:01 addr=()
	shift 2
	if [[ $role == client ]]; then
		cpu=$client_cpu ip=10.0.0.2 mac=02:00:00:00:00:02 addr=(127.0.0.1)
	fi
	# shellcheck disable=SC2046
	timeout 120 "$exe" $(eal "$role" "$cpu") -- -p "$tcp_port" --ip "$ip/24" --mac "$mac" \
		"$@" "${addr[@]}" >"$tmp/$name.$role.out" 2>"$tmp/$name.$role.err" &
	side_pid=$!
	pids+=("$side_pid")
}

# start_server NAME [options...]: and wait for its memif socket (the memif
# client connects once, when it starts: the socket must be there first;
# over af_packet there is none to wait for).
start_server() {
	local i
	rm -f "$sock"
	side server "$@"
	[[ -z ${afp:-} ]] || return 0
	for (( i = 0; i < 300; i++ )); do
		[[ -S $sock ]] && break
		kill -0 "$side_pid" 2>/dev/null || break
		sleep 0.05
	done
}

# pair NAME [perf options...]: one server/client pair with the same
# options. Returns 0 when both exit 0.
pair() {
	local name=$1 s c rs rc
	runs=$((runs + 1))
	start_server "$@"
	s=$side_pid
	side client "$@"
	c=$side_pid
	wait "$c"; rc=$?
	wait "$s"; rs=$?
	pids=()
	if (( rc != 0 || rs != 0 )); then
		fail "$name: client exit $rc, server exit $rs"
		grep -hv '^EAL' "$tmp/$name.client.err" "$tmp/$name.server.err" | tail -n 8 >&2
		return 1
	fi
	return 0
}
