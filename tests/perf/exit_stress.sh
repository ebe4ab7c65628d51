#!/usr/bin/env bash
# Two processes that end together, again and again: PAIRS droce-perf
# pairs over one memif link (an 8 B WRITE and an atomic latency run each,
# 1000 iterations, so client and server finish within microseconds of
# each other), with a busy loop on a third thread so that each process's
# exit and its peer's disconnect interleave in ever other ways. Each side
# must exit 0: a crash as droce stops its memif ethdev while memif's
# handler on the EAL's interrupt thread takes the peer's disconnect
# (docs/architecture.md, "A process's transport dies with it") fails it.
# Build with AddressSanitizer to see such a crash for what it is.
#
# Usage: exit_stress.sh BUILD_DIR [PAIRS]   (default 40: 2-4 minutes)
set -uo pipefail

build=${1:?usage: exit_stress.sh BUILD_DIR [PAIRS]}
n=${2:-40}
me=exit_stress
# shellcheck source=tests/perf/perf_pairs.sh
source "$(dirname "$0")/perf_pairs.sh"

(while :; do :; done) &
busy=$!
for (( k = 0; k < n; k++ )); do
	# pair() forgets the background processes of the pair before.
	pids+=("$busy")
	pair "write-lat-$k" --test write --mode lat -n 1000 -s 8
	pids+=("$busy")
	pair "atomic-lat-$k" --test atomic --mode lat -n 1000
done
kill "$busy" 2>/dev/null
echo "exit_stress: $runs pairs, $failures failure(s)"
(( failures == 0 ))
