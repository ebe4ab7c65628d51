#!/usr/bin/env bash
# Make droce's devices visible to libraries that look for the kernel's
# device files before they open a verbs device, and take that away again.
#
# Usage: droce-setup.sh up [N]     create /dev/infiniband/uverbs0..N-1 (N = 8)
#        droce-setup.sh down       remove what "up" created
#        droce-setup.sh status     list the entries and whose they are
#
# UCX (ucx_perftest, Open MPI's and MPICH's UCX layers) skips every device
# of ibv_get_device_list() whose /dev/infiniband/<dev_name> is not a
# read/writable character device. droce's devices droce0, droce1, ... are
# named uverbs0, uverbs1, ... there, as the kernel names its own, but droce
# opens no device file: the entries only have to exist. "up" creates each
# missing one as a character device with the numbers of /dev/null (1, 3),
# so a program that does open one reads and writes nothing. Entries that
# exist already (a kernel RDMA device's) are left alone, and "down"
# removes only character devices 1:3, then the folder if "up" made it and
# it is empty. Needs root.
set -euo pipefail

dir=/dev/infiniband
marker=$dir/.droce-setup   # "up" made the folder

# ours PATH: a character device with /dev/null's numbers.
ours() {
	[[ -c $1 ]] && [[ $(stat -c '%t:%T' "$1") == 1:3 ]]
}

case ${1:-} in
up)
	n=${2:-8}
	if [[ ! $n =~ ^[0-9]+$ ]] || (( n < 1 || n > 64 )); then
		echo "droce-setup: N must be 1..64" >&2
		exit 2
	fi
	if [[ ! -d $dir ]]; then
		mkdir -m 755 "$dir"
		touch "$marker"
	fi
	for (( i = 0; i < n; i++ )); do
		node=$dir/uverbs$i
		if [[ -e $node ]]; then
			ours "$node" || echo "droce-setup: $node exists (not droce's): left alone"
			continue
		fi
		mknod -m 666 "$node" c 1 3
	done
	echo "droce-setup: $dir/uverbs0..$(( n - 1 )) are there; 'droce-setup.sh down' removes them"
	;;
down)
	[[ -d $dir ]] || exit 0
	for node in "$dir"/uverbs*; do
		if [[ -e $node ]] && ours "$node"; then
			rm -f "$node"
		fi
	done
	if [[ -e $marker ]]; then
		rm -f "$marker"
		rmdir "$dir" 2> /dev/null || echo "droce-setup: $dir holds other entries: kept"
	fi
	;;
status)
	[[ -d $dir ]] || { echo "droce-setup: no $dir"; exit 0; }
	for node in "$dir"/uverbs*; do
		[[ -e $node ]] || continue
		if ours "$node"; then echo "$node droce"; else echo "$node other"; fi
	done
	;;
*)
	sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac
