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
# and pair_memif_confs writes the two ends' droce configurations.
# shellcheck disable=SC2034 # the variables are for the sourcing script
pair_setup() {
	tmp=$(mktemp -d "/tmp/droce-$1.XXXXXX")
	pids=()
	trap pair_cleanup EXIT
	mem=$(pair_mem)
	client_cpu=$(( $(nproc) > 1 ? 1 : 0 ))
	tcp_port=$(( 20000 + $$ % 20000 ))
}

# pair_mem: the EAL memory options for one of two processes, as above
# (also for scripts that set up their own ports).
pair_mem() {
	local free_pages

	free_pages=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	if mountpoint -q /dev/hugepages && (( ${free_pages:-0} >= 256 )); then
		echo "--in-memory"
	else
		echo "--no-huge -m 512 --no-shconf"
	fi
}

# pair_memif_confs LINK [ipv6]: write $tmp/server.conf and $tmp/client.conf
# for the two ends of a memif link (the server 10.0.0.1 on CPU 0, the
# client 10.0.0.2 on client_cpu), IB MTU 4096, with "link = LINK" in
# [port0]; with ipv6, fd00::1/64 and fd00::2/64 too (GID index 2).
pair_memif_confs() {
	local role cpu ip ip6

	for role in server client; do
		if [[ $role == server ]]; then cpu=0 ip=10.0.0.1 ip6=fd00::1; else cpu=$client_cpu ip=10.0.0.2 ip6=fd00::2; fi
		cat > "$tmp/$role.conf" <<-EOF
		[eal]
		args = -l $cpu $mem --no-pci --no-telemetry --log-level=lib.eal:error --vdev=net_memif0,role=$role,socket=$tmp/memif.sock,socket-abstract=no,bsize=4352
		[port0]
		device = net_memif0
		ipv4 = $ip/24
		mtu = 4096
		link = $1
		EOF
		if [[ ${2:-} == ipv6 ]]; then
			echo "ipv6 = $ip6/64" >> "$tmp/$role.conf"
		fi
	done
}

# pair_show [TITLE]: print both sides' output ($tmp/server.out and
# $tmp/client.out) without the EAL's lines.
pair_show() {
	local role
	for role in server client; do
		echo "---- $role${1:+: $1} ----"
		grep -v '^EAL' "$tmp/$role.out" || true
	done
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
