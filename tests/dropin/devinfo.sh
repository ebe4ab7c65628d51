#!/usr/bin/env bash
# Debian's unmodified ibv_devices and ibv_devinfo -v on the drop-in see
# droce's loopback device as a RoCE v2 device: droce0, transport
# InfiniBand (0), link layer Ethernet, port active, an active MTU, and
# GIDs of type RoCE v2.
#
# Usage: devinfo.sh BUILD_DIR
# With 2 MiB hugepages free and hugetlbfs mounted, the programs run with
# DROCE_CONF unset (droce's embedded default). Without them, with the
# same device from a configuration file on plain memory.
set -euo pipefail

build=${1:?usage: devinfo.sh BUILD_DIR}
dropin=$build/lib/verbs/dropin
if [[ ! -e $dropin/libibverbs.so.1 ]]; then
	echo "devinfo: $dropin/libibverbs.so.1 is not built" >&2
	exit 1
fi
for p in ibv_devices ibv_devinfo; do
	if ! command -v "$p" > /dev/null; then
		echo "devinfo: $p not found: package ibverbs-utils is not installed" >&2
		exit 1
	fi
done

# shellcheck source=tests/common/dropin_env.sh
source "$(dirname "$0")/../common/dropin_env.sh"
dropin_env "$build"

tmp=$(mktemp -d /tmp/droce-devinfo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

free_pages=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
if mountpoint -q /dev/hugepages && (( ${free_pages:-0} >= 64 )); then
	env=(env -u DROCE_CONF)
	echo "devinfo: droce's default configuration (DROCE_CONF unset)"
else
	# The default's device, on plain memory (--in-memory needs hugepages).
	cat > "$tmp/droce.conf" <<-EOF
	[eal]
	args = -l 0 --no-huge -m 256 --no-shconf --no-pci --no-telemetry --vdev=net_ring0
	[port0]
	device = net_ring0
	ipv4 = 10.255.0.1/24
	mtu = 4096
	EOF
	env=(env DROCE_CONF="$tmp/droce.conf")
	echo "devinfo: no free hugepages, so $tmp/droce.conf on plain memory"
fi

fails=0
# expect FILE DESCRIPTION EXTENDED-REGEX: FILE has a line matching it.
expect() {
	if grep -Eq -- "$3" "$1"; then
		echo "ok   $2"
	else
		echo "FAIL $2: no line matches '$3'"
		fails=$((fails + 1))
	fi
}

# run NAME PROGRAM [ARGS...]: run on the drop-in, output into $tmp/NAME.
run() {
	local name=$1 rc=0

	shift
	env "${DROPIN_ENV[@]}" "${env[@]}" timeout 60 "$@" > "$tmp/$name" 2> "$tmp/$name.err" || rc=$?
	if (( rc != 0 )); then
		echo "FAIL $* exits with $rc:"
		sed 's/^/     /' "$tmp/$name.err"
		fails=$((fails + 1))
	fi
}

run devices ibv_devices
expect "$tmp/devices" "ibv_devices lists droce0" '^[[:space:]]+droce0[[:space:]]+[0-9a-f]{16}$'

run devinfo ibv_devinfo -v
expect "$tmp/devinfo" "hca_id droce0" $'^hca_id:\tdroce0$'
expect "$tmp/devinfo" "transport InfiniBand (0)" $'^\ttransport:\t+InfiniBand \\(0\\)$'
expect "$tmp/devinfo" "link layer Ethernet" $'^\t+link_layer:\t+Ethernet$'
expect "$tmp/devinfo" "port active" $'^\t+state:\t+PORT_ACTIVE \\(4\\)$'
expect "$tmp/devinfo" "active MTU" $'^\t+active_mtu:\t+(256|512|1024|2048|4096) \\([1-5]\\)$'
expect "$tmp/devinfo" "GID 0 of type RoCE v2" $'^\t+GID\\[  0\\]:\t+[0-9a-f:.]+, RoCE v2$'
expect "$tmp/devinfo" "IPv4-mapped GID of type RoCE v2" $'^\t+GID\\[  1\\]:\t+::ffff:10\\.255\\.0\\.1, RoCE v2$'

if (( fails )); then
	echo "devinfo: $fails checks failed; ibv_devinfo -v printed:"
	sed 's/^/     /' "$tmp/devinfo"
	exit 1
fi
echo "devinfo: all checks pass"
