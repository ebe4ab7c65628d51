#!/usr/bin/env bash
# examples/l2fwd-rdma as a user builds it: install droce into a staging
# folder (meson install --destdir), build the example out of tree with
# its Makefile against the installed libdroce through pkg-config, run it,
# and check that it does both of its jobs:
#
#   port A  memif server, 2 queue pairs: queue 0 the forwarder's, queue 1
#           droce's (shared mode). Its peer is Debian's ibv_rc_pingpong on
#           droce's drop-in libibverbs.so.1, a memif client with 2 engines:
#           its engine 0's frames (ARP, its QP's) reach the forwarder's
#           queue, which hands them to droce (droce_dev_rx_burst()).
#   port B  af_packet on one end of a veth pair; raw frames sent into the
#           other end must come out forwarded to A.
#
# Checks: ibv_rc_pingpong's messages all come back (the echo server's
# count), droce took frames from the forwarder, and the forwarder moved
# the injected frames from B to A while the session ran.
#
# Usage: run_l2fwd_rdma.sh SOURCE_DIR BUILD_DIR
# Exits 77 (skipped) without ibv_rc_pingpong, make, python3 or a veth pair.
set -euo pipefail

src=${1:?usage: run_l2fwd_rdma.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: run_l2fwd_rdma.sh SOURCE_DIR BUILD_DIR}
here=$(dirname "$0")
iters=1000
# Frames of their own the forwarder must move from B to A, at least.
forwarded_min=100

skip() {
	echo "run_l2fwd_rdma: skipped: $*"
	exit 77
}
for p in ibv_rc_pingpong make python3 pkg-config; do
	command -v "$p" > /dev/null || skip "$p is not installed"
done

# shellcheck source=tests/common/pair_env.sh
source "$here/../common/pair_env.sh"
pair_setup l2fwd
# shellcheck source=tests/common/dropin_env.sh
source "$here/../common/dropin_env.sh"
dropin_env "$build"

# Interface names are at most 15 characters; the PID keeps runs apart.
vb=l2b$$
vp=l2p$$
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	ip link del "$vb" 2> /dev/null || true
	pair_cleanup
}
trap cleanup EXIT
# shellcheck source=tests/common/veth_env.sh
source "$here/../common/veth_env.sh"
veth_pair "$vb" "$vp"

# 1. Install, and build the example against the installed library.
dest=$tmp/dest
meson install -C "$build" --destdir "$dest" --no-rebuild --quiet > /dev/null
pc=$(find "$dest" -name libdroce.pc -print -quit)
[[ -n $pc ]] || { echo "run_l2fwd_rdma: meson install put no libdroce.pc" >&2; exit 1; }
# The staged files still say the install prefix: point a copy of the .pc
# at the staging folder (pkg-config's sysroot and --define-prefix would
# move libdpdk's paths too).
mkdir "$tmp/pc" "$tmp/ex"
sed "s|^prefix=|prefix=$dest|" "$pc" > "$tmp/pc/libdroce.pc"
export PKG_CONFIG_PATH=$tmp/pc
make -s -C "$tmp/ex" -f "$src/examples/l2fwd-rdma/Makefile" > "$tmp/make.out" 2>&1 || {
	cat "$tmp/make.out"
	exit 1
}
libdir=$(pkg-config --variable=libdir libdroce)
# The binary must have been linked against the staged libdroce.
if [[ $(LD_LIBRARY_PATH=$libdir ldd "$tmp/ex/l2fwd-rdma" | awk '/libdroce/ { print $3 }') != "$libdir"/* ]]; then
	echo "run_l2fwd_rdma: l2fwd-rdma does not use the installed libdroce" >&2
	exit 1
fi

# Raw frames into B's veth, one a millisecond, from before the RDMA
# session until after it: the forwarder sends them on to A. (Those that
# come while the memif link is down, before the client's EAL attached or
# after it left, are the forwarder's drops.) Python may take seconds to
# start on a busy machine: the session waits for its first frame.
python3 - "$vp" "$tmp/injecting" <<-'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
# To a MAC nobody has, with the IEEE's local experimental EtherType.
frame = bytes.fromhex("020000000099" "020000000098" "88b5") + bytes(50)
s.send(frame)
open(sys.argv[2], "w").close()
while True:
    s.send(frame)
    time.sleep(0.001)
EOF
injector=$!
pids+=("$injector")

# 2. The example on CPU 0, its peer on the other CPU.
# shellcheck disable=SC2086 # $mem is several EAL options
LD_LIBRARY_PATH=$libdir "$tmp/ex/l2fwd-rdma" -l 0 $mem --no-pci --no-telemetry \
	--log-level=lib.eal:error \
	--vdev="net_memif0,role=server,socket=$tmp/memif.sock,socket-abstract=no,mac=02:00:00:00:00:01" \
	--vdev="net_af_packet0,iface=$vb" \
	-- -a net_memif0 -b net_af_packet0 --ip 10.0.0.1/24 -p "$tcp_port" -t 25 \
	> "$tmp/l2fwd.out" 2>&1 &
l2fwd=$!
pids+=("$l2fwd")
for (( i = 0; i < 100; i++ )); do
	grep -q "echo server on TCP port" "$tmp/l2fwd.out" && break
	kill -0 "$l2fwd" 2> /dev/null || break
	sleep 0.1
done
if ! grep -q "echo server on TCP port" "$tmp/l2fwd.out"; then
	cat "$tmp/l2fwd.out"
	echo "run_l2fwd_rdma: l2fwd-rdma did not start" >&2
	exit 1
fi

for (( i = 0; i < 300; i++ )); do
	[[ -e $tmp/injecting ]] && break
	sleep 0.1
done
[[ -e $tmp/injecting ]] || { echo "run_l2fwd_rdma: the injector did not start" >&2; exit 1; }

# 3. The RDMA session: Debian's ibv_rc_pingpong against the echo server.
cat > "$tmp/peer.conf" <<-EOF
[eal]
args = -l $client_cpu $mem --no-pci --no-telemetry --log-level=lib.eal:error --vdev=net_memif0,role=client,socket=$tmp/memif.sock,socket-abstract=no
[port0]
device = net_memif0
ipv4 = 10.0.0.2/24
mac = 02:00:00:00:00:02
mtu = 1024
engines = 2
EOF
rc=0
env "${DROPIN_ENV[@]}" DROCE_CONF="$tmp/peer.conf" timeout 20 \
	ibv_rc_pingpong -d droce0 -g 1 -e -n "$iters" -p "$tcp_port" 127.0.0.1 \
	> "$tmp/pingpong.out" 2>&1 || rc=$?

kill "$injector"
cat "$tmp/pingpong.out"
kill -TERM "$l2fwd" 2> /dev/null || true
wait "$l2fwd" || { cat "$tmp/l2fwd.out"; echo "run_l2fwd_rdma: l2fwd-rdma failed" >&2; exit 1; }
cat "$tmp/l2fwd.out"
if (( rc != 0 )); then
	echo "run_l2fwd_rdma: ibv_rc_pingpong failed (exit $rc)" >&2
	exit 1
fi

# 4. Both jobs done, by the counters the example prints.
fail=0
if ! grep -q "rc_echo: 1 sessions, $iters messages echoed, 0 errors" "$tmp/l2fwd.out"; then
	echo "run_l2fwd_rdma: the echo server did not send back all $iters messages" >&2
	fail=1
fi
took=$(sed -n 's/.*droce took \([0-9]*\) frames.*/\1/p' "$tmp/l2fwd.out")
if (( ${took:-0} == 0 )); then
	echo "run_l2fwd_rdma: droce took no frame from the forwarder" >&2
	fail=1
fi
fwd=$(sed -n 's/.*B->A forwarded \([0-9]*\) .*/\1/p' "$tmp/l2fwd.out")
if (( ${fwd:-0} < forwarded_min )); then
	echo "run_l2fwd_rdma: ${fwd:-0} frames forwarded from B to A, not $forwarded_min" >&2
	fail=1
fi
(( fail == 0 )) && echo "run_l2fwd_rdma: forwarded ${fwd} frames B->A while serving $iters RDMA round trips"
exit "$fail"
