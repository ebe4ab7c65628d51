#!/usr/bin/env bash
# A memif client whose server goes away and comes back: DPDK 22.11's memif
# client does not connect again by itself, so droce restarts its ethdev
# while the link stays down (lib/port/droce_port_link.c). The client
# (port_events --again, link = auto) must see PORT_ACTIVE, PORT_ERR when
# the first server ends, and PORT_ACTIVE again from a second server
# started after it. The first server also starts after the client, so the
# client's first start fails and is retried.
#
# Usage: run_relink.sh BUILD_DIR
set -euo pipefail

build=${1:?usage: run_relink.sh BUILD_DIR}
prog=$build/tests/e2e/port_events

# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"
# shellcheck source=tests/common/pair_env.sh
source "$(dirname "$0")/../common/pair_env.sh"
pair_setup relink
pair_memif_confs auto

run() {
	local role=$1 out=$2
	shift 2
	env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/$role.conf" timeout 60 "$prog" "$@" \
		>> "$tmp/$out.out" 2>&1
}

run client client --again &
client=$!
pids+=("$client")
sleep 1
status=0
for i in 1 2; do
	# A server holds its device open for 3 s, then ends.
	run server server -p "$tcp_port" 127.0.0.1 || status=$?
	sleep 0.5
done
rc=0
wait "$client" || rc=$?
pids=()
pair_show
if (( status != 0 || rc != 0 )); then
	echo "run_relink: failed (servers $status, client $rc)" >&2
	exit 1
fi
if (( $(grep -c 'event: port active' "$tmp/client.out") != 2 )); then
	echo "run_relink: the client did not see its port come up twice" >&2
	exit 1
fi
echo "run_relink: passed"
