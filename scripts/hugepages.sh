#!/usr/bin/env bash
# Give DPDK 2 MiB hugepages: at least ${1:-512} of them, and hugetlbfs
# mounted on /dev/hugepages (without the mount the EAL fails with "no
# mounted hugetlbfs found"). Needs root; does nothing when all is set.
set -euo pipefail

want=${1:-512}
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

if [[ ! -e $nr ]]; then
	echo "hugepages: this kernel has no 2 MiB hugepages" >&2
	exit 1
fi
have=$(<"$nr")
if (( have < want )); then
	echo "$want" > "$nr"
	have=$(<"$nr")
	if (( have < want )); then
		echo "hugepages: asked for $want pages of 2 MiB, the kernel gave $have" >&2
		exit 1
	fi
fi
if ! mountpoint -q /dev/hugepages; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages
fi
echo "hugepages: $have x 2 MiB, hugetlbfs on /dev/hugepages"
