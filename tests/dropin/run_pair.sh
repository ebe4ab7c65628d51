#!/usr/bin/env bash
# Run one of Debian's unmodified verbs programs as a server and a client,
# two processes on droce's drop-in libibverbs.so.1, connected by memif.
#
# Usage: run_pair.sh BUILD_DIR [--link auto] [--engines N] [--expect REGEX] PROGRAM [ARGS...]
#   The server runs "PROGRAM ARGS -p PORT", the client the same followed
#   by 127.0.0.1 (the out-of-band TCP exchange stays on this machine; the
#   RDMA traffic goes through droce and memif). Both must exit 0, and one
#   side's output must match REGEX when given (e.g. perftest's table
#   header). Prints both outputs. The server's port counts as active from
#   the start (link = up) unless --link auto: then it follows memif.
#   --engines N gives each side N engines (memif queue pairs).
set -euo pipefail

build=${1:?usage: run_pair.sh BUILD_DIR [--expect REGEX] PROGRAM [ARGS...]}
shift
expect=
link=up
if [[ ${1:-} == --link ]]; then
	link=$2
	shift 2
fi
engines=
if [[ ${1:-} == --engines ]]; then
	engines=$2
	shift 2
fi
if [[ ${1:-} == --expect ]]; then
	expect=$2
	shift 2
fi
prog=${1:?program}
shift
if [[ $prog != */* ]] && ! command -v "$prog" > /dev/null; then
	echo "run_pair: $prog is not installed (scripts/install-deps.sh installs it)" >&2
	exit 1
fi

# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"

# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
pair_setup pair

# The server's port is active from the start (link = up): the programs
# check it before their peer's memif side exists.
pair_memif_confs "$link"
if [[ -n $engines ]]; then
	echo "engines = $engines" | tee -a "$tmp/server.conf" >> "$tmp/client.conf"
fi

run() {
	local role=$1
	shift
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/$role.conf" timeout 120 "$@" \
		> "$tmp/$role.out" 2>&1
}

run server "$prog" "$@" -p "$tcp_port" &
pids+=($!)
for (( i = 0; i < 100; i++ )); do
	[[ -S $tmp/memif.sock ]] && break
	sleep 0.1
done
sleep 0.5 # the server listens for the TCP exchange once its device is up
status=0
run client "$prog" "$@" -p "$tcp_port" 127.0.0.1 || status=$?
rc=0
wait "${pids[0]}" || rc=$?
pids=()
pair_show "$prog $*"
if (( status != 0 || rc != 0 )); then
	echo "run_pair: $prog failed (server exit $rc, client exit $status)" >&2
	exit 1
fi
if [[ -n $expect ]] && ! grep -Eq "$expect" "$tmp/client.out" "$tmp/server.out"; then
	echo "run_pair: neither side's output matches /$expect/" >&2
	exit 1
fi
echo "run_pair: $prog $* passed"
