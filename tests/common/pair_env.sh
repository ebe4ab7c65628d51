# shellcheck shell=bash
# Sourced by the scripts that run two DPDK processes on one machine
# (tests/e2e/run_memif.sh, tests/dropin/run_pair.sh, tests/perf/run_perf.sh,
# tests/bench/sweep.sh). pair_setup NAME sets:
#   tmp        a work folder, removed at exit with every process in pids
#   pids       add background processes here: they are killed at exit
#   mem        EAL memory options: --in-memory when hugepages are free for
#              two processes, else plain memory (--in-memory cannot go
#              without hugepages; --no-shconf keeps the processes apart)
#   client_cpu 1, or 0 on a one-CPU machine (the server takes CPU 0)
#   tcp_port   a TCP port of this run's own, so a leftover run cannot answer
# shellcheck disable=SC2034 # the variables are for the sourcing script
pair_setup() {
	local free_pages

	tmp=$(mktemp -d "/tmp/droce-$1.XXXXXX")
	pids=()
	trap pair_cleanup EXIT
	free_pages=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	if mountpoint -q /dev/hugepages && (( ${free_pages:-0} >= 256 )); then
		mem="--in-memory"
	else
		mem="--no-huge -m 512 --no-shconf"
	fi
	client_cpu=$(( $(nproc) > 1 ? 1 : 0 ))
	tcp_port=$(( 20000 + $$ % 20000 ))
}

# shellcheck disable=SC2317 # called by the EXIT trap
pair_cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	rm -rf "$tmp"
}
