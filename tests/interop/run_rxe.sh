#!/usr/bin/env bash
# Interoperability with the Linux kernel's Soft-RoCE (rdma_rxe): Debian's
# ibv_rc_pingpong, ib_write_bw and ib_read_bw on droce's drop-in
# libibverbs.so.1 (net_af_packet port) against the same programs on rxe in
# a QEMU guest booted by the rxe-peer harness (../shared/rxe-peer).
#
# Usage: run_rxe.sh [--ipv6] [--vlan] BUILD_DIR
#   --ipv6  the QPs use IPv6 GIDs: droce's port gets fd77::2/64 (GID 2),
#           the guest's eth0 fd77::11/64 (rxe0's GID 2); the guest finds
#           droce's MAC with neighbour discovery, droce the guest's too
#   --vlan  the RoCE traffic goes over VLAN 100: droce's port gets
#           "vlan = 100" and 10.78.0.2/24, the guest a VLAN interface
#           eth0.100 with 10.78.0.11/24 (rxe0 adds its GIDs, with the
#           VLAN, to its table); every RoCE frame captured must carry the
#           tag. The guest's initramfs gets the 8021q module for it (the
#           harness packs only what rxe needs): a copy with it is kept in
#           the cache as initrd-vlan.img. With --ipv6: fd78::2 and fd78::11
#           on the VLAN instead.
#
# Prints one line per test and ends with "N passed, N failed"; exits
# non-zero when a test failed. Exits 77 with "SKIP: <reason>" when the peer
# cannot be built (no QEMU, no Debian mirror) or does not boot.
#
# Environment:
#   DROCE_RXE_PEER   the rxe-peer harness (default: ../shared/rxe-peer
#                    beside the source tree)
#   DROCE_RXE_CACHE  where the guest's kernel and initramfs are built and
#                    kept between runs (default /var/tmp/droce-rxe-peer);
#                    rebuilt when a harness file is newer, or when removed
#   DROCE_INTEROP_KEEP=1  keep the work folder (logs, captures, counters)
#                    even when every test passed
set -uo pipefail

t_start=$(date +%s%N)
here=$(cd "$(dirname "$0")" && pwd)
ipv6=0
vlan=0
while [[ ${1:-} == --* ]]; do
	case $1 in
	--ipv6) ipv6=1 ;;
	--vlan) vlan=1 ;;
	*) echo "usage: run_rxe.sh [--ipv6] [--vlan] BUILD_DIR" >&2; exit 2 ;;
	esac
	shift
done
build=$(realpath "${1:?usage: run_rxe.sh [--ipv6] [--vlan] BUILD_DIR}")
dropin=$build/lib/verbs/dropin
peer=$(realpath -m "${DROCE_RXE_PEER:-$here/../../../shared/rxe-peer}")
cache=${DROCE_RXE_CACHE:-/var/tmp/droce-rxe-peer}

# meson counts exit status 77 as a skipped test.
skip() {
	echo "SKIP: $*"
	exit 77
}

if [[ ! -e $dropin/libibverbs.so.1 ]]; then
	echo "run_rxe: $dropin/libibverbs.so.1 is not built" >&2
	exit 1
fi
(( EUID == 0 )) || skip "needs root (network namespace, QEMU taps)"
[[ -x $peer/up.sh ]] || skip "no rxe-peer harness at $peer"
for p in ibv_rc_pingpong:ibverbs-utils ib_write_bw:perftest ib_read_bw:perftest dumpcap:tshark; do
	if ! command -v "${p%%:*}" > /dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			"${p##*:}" > /dev/null 2>&1 || skip "${p##*:} cannot be installed"
	fi
done

# The peer's state lives in a work folder of our own and its network in a
# namespace of our own, so a developer's running peer is left alone. The
# kernel and initramfs are built once into the cache and linked in.
work=$(mktemp -d /tmp/droce-interop.XXXXXX)
export RXE_BUILD=$work/peer
export RXE_NETNS=droceinterop$$
mkdir -p "$RXE_BUILD"

keep=${DROCE_INTEROP_KEEP:-0}  # 1 after a failure, or a skip the logs explain
cpid=  # dumpcap
hpid=  # a droce server
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[[ -n $cpid ]] && kill -INT "$cpid" 2> /dev/null
	[[ -n $hpid ]] && kill "$hpid" 2> /dev/null
	# In a session of its own: meson kills the test's process group half
	# a second after its SIGTERM, and the guest (a daemon) must go anyway.
	# shellcheck disable=SC2016 # expanded by that bash
	setsid bash -c '"$1" > /dev/null 2>&1; [[ $2 == 1 ]] || rm -rf "$3"' \
		down "$peer/down.sh" "$keep" "$work" &
	wait $!
	[[ $keep == 1 ]] && echo "run_rxe: logs, captures and counters kept in $work"
}
trap cleanup EXIT
# meson's timeout and ^C: stop the guest too (once the command running
# in the foreground has ended, which the same signal usually ends).
trap 'exit 143' TERM
trap 'exit 130' INT

# Build the guest when the cache has none, or an older one than the
# harness (build.sh repacks the whole initramfs, ~15 s, every time).
if [[ ! -f $cache/vmlinuz || ! -f $cache/initrd.img ||
      -n $(find "$peer" -path "$peer/build" -prune -o -type f -newer "$cache/initrd.img" -print -quit) ]] &&
   ! RXE_BUILD=$cache "$peer/build.sh" > "$work/build.log" 2>&1; then
	tail -n 5 "$work/build.log"
	keep=1
	skip "the rxe peer cannot be built (QEMU or the Debian packages missing; $work/build.log)"
fi
command -v qemu-system-x86_64 > /dev/null || skip "qemu-system-x86_64 is not installed"

# vlan_initrd: $cache/initrd-vlan.img, the guest's initramfs with the
# 8021q module and what it depends on (garp, mrp, stp, llc) taken from
# the same Debian kernel package, remade when the initramfs is newer.
vlan_initrd() {
	local k=$work/kpkg root=$work/vlanroot kver deb
	[[ $cache/initrd-vlan.img -nt $cache/initrd.img ]] && return 0
	deb=$(ls "$cache"/debs/linux-image-[0-9]*.deb 2> /dev/null | head -n 1)
	[[ -n $deb && -d $cache/rootfs ]] || return 1
	dpkg-deb -x "$deb" "$k" || return 1
	kver=$(ls "$k/lib/modules")
	depmod -b "$k" "$kver" || return 1
	cp -a "$cache/rootfs" "$root" || return 1
	modprobe -d "$k" -S "$kver" --show-depends 8021q | awk '$1 == "insmod" { print $2 }' |
		while read -r f; do
			mkdir -p "$root$(dirname "${f#"$k"}")" && cp "$f" "$root${f#"$k"}"
		done
	depmod -b "$root" "$kver" || return 1
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) > "$cache/initrd-vlan.img.tmp" &&
		mv "$cache/initrd-vlan.img.tmp" "$cache/initrd-vlan.img"
	rm -rf "$k" "$root"
}
initrd=$cache/initrd.img
if (( vlan )); then
	vlan_initrd > "$work/vlan-initrd.log" 2>&1 ||
		{ keep=1; skip "no initramfs with 8021q ($work/vlan-initrd.log)"; }
	initrd=$cache/initrd-vlan.img
fi
ln -s "$cache/vmlinuz" "$RXE_BUILD/"
ln -s "$initrd" "$RXE_BUILD/initrd.img"
t_boot=$(date +%s%N)
if ! "$peer/up.sh" 1 > "$work/up.log" 2>&1; then
	tail -n 10 "$work/up.log"
	keep=1
	skip "the rxe peer does not boot ($work/up.log)"
fi
boot_ms=$(( ($(date +%s%N) - t_boot) / 1000000 ))
echo "rxe peer up in $(( boot_ms / 1000 )).$(( boot_ms % 1000 / 100 )) s"

# Addresses: droce's port on the veth rxe-dpdk, the netns' kernel on the
# bridge (the TCP side of the QPN/PSN/GID exchange) and guest 0.
droce_ip=10.77.0.2
host_ip=10.77.0.1
rxe_ip=10.77.0.11
gid=1
rgid=1  # rxe0's GID index of the same kind
# The RoCE addresses (the capture check's): IPv4, or IPv6 with --ipv6.
roce_droce=$droce_ip
roce_rxe=$rxe_ip
iters=200
bw_iters=100
limit=60  # seconds for any one program (each takes 1-10 s)

cat > "$work/droce.conf" <<-EOF
	# droce's side of the rxe interop tests, written by run_rxe.sh
	[eal]
	args = -l 0 --no-huge -m 512 --no-shconf --no-pci --no-telemetry --vdev=net_af_packet0,iface=rxe-dpdk,framesz=8192,blocksz=8192,framecnt=512
	[port0]
	device = net_af_packet0
	ipv4 = $droce_ip/24
	mtu = 1024
EOF
if (( vlan )); then
	roce_droce=10.78.0.2
	roce_rxe=10.78.0.11
	sed -i "s|^ipv4 = .*|ipv4 = $roce_droce/24\nvlan = 100|" "$work/droce.conf"
fi
if (( ipv6 )); then
	gid=2
	rgid=2
	roce_droce=fd77::2
	roce_rxe=fd77::11
	if (( vlan )); then
		roce_droce=fd78::2
		roce_rxe=fd78::11
	fi
	echo "ipv6 = $roce_droce/64" >> "$work/droce.conf"
fi

guest() {
	"$peer/guest-run.sh" "$@"
}

# droce ARGS...: run a verbs program on droce in the netns.
droce() {
	"$peer/ns.sh" env LD_LIBRARY_PATH="$dropin" DROCE_CONF="$work/droce.conf" \
		timeout -k 5 "$limit" "$@"
}

# capture_start, capture_stop: capture the RoCE frames of one test into
# $cap, as the kernel sees them on the bridge's end of droce's veth (the
# af_packet port bypasses the qdisc, so its own end does not show what it
# sends).
capture_start() {
	local i
	rm -f "$cap"
	"$peer/ns.sh" dumpcap -q -i rxe-dpdk-br -f "udp port 4791" -w "$cap" \
		> "$work/$name.dumpcap.log" 2>&1 &
	cpid=$!
	for (( i = 0; i < 100; i++ )); do
		[[ -s $cap ]] && return 0
		sleep 0.1
	done
	echo "run_rxe: dumpcap did not start: $(cat "$work/$name.dumpcap.log")" >&2
	return 1
}

capture_stop() {
	# The kernel hands frames to dumpcap in blocks, a block at the latest
	# when its timeout (a fraction of a second) expires: wait for the last
	# one, which an interrupted dumpcap would lose.
	sleep 1
	kill -INT "$cpid" 2> /dev/null
	wait "$cpid"
	cpid=
}

# wait_listen WHERE PORT PID: wait until a TCP server listens on PORT in
# the netns (WHERE=host) or in the guest (WHERE=guest); give up when PID
# (the host server) or the guest's server has ended.
wait_listen() {
	local where=$1 port=$2 pid=${3:-} i hex
	hex=$(printf '%04X' "$port")
	for (( i = 0; i < 60; i++ )); do
		if [[ $where == host ]]; then
			[[ -n $("$peer/ns.sh" ss -Hltn "sport = :$port") ]] && return 0
			kill -0 "$pid" 2> /dev/null || return 1
			sleep 0.5
		else
			guest -t 10 0 "grep -Eqi ':$hex 0+:0000 0A' /proc/net/tcp /proc/net/tcp6" && return 0
			guest -t 10 0 "test ! -s /tmp/$name.rc" || return 1
		fi
	done
	return 1
}

# counters: rxe0's hw_counters as "name value" lines.
counters() {
	# shellcheck disable=SC2016 # expanded by the guest's shell
	guest -t 30 0 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters &&
		for f in *; do [ "$f" = lifespan ] || echo "$f $(cat "$f")"; done'
}

# The rxe counters that must not move: sequence errors seen by rxe's
# responder (out_of_seq_request) and requester (rcvd_seq_err), RNR NAKs
# both ways, retries given up, send errors, link downs.
must_be_zero="out_of_seq_request rcvd_seq_err rcvd_rnr_err send_rnr_err retry_exceeded_err
	retry_rnr_exceeded_err send_err link_downed"

# With --vlan the guest's RoCE address is on eth0.100: rxe0 adds a GID
# for it (a moment after the address), at an index found here.
if (( vlan )); then
	if (( ipv6 )); then
		vaddr="ip -6 addr add $roce_rxe/64 dev eth0.100 nodad" want=fd78:0000:0000:0000:0000:0000:0000:0011
	else
		vaddr="ip addr add $roce_rxe/24 dev eth0.100" want=0000:0000:0000:0000:0000:ffff:0a4e:000b
	fi
	# shellcheck disable=SC2016 # expanded by the guest's shell
	rgid=$(guest -t 60 0 "modprobe 8021q && ip link add link eth0 name eth0.100 type vlan id 100 &&
		ip link set eth0.100 up && $vaddr &&
		for i in \$(seq 50); do
			for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
				[ \"\$(cat \$g)\" = $want ] && { echo \${g##*/}; exit 0; }
			done; sleep 0.1; done; exit 1" 2> "$work/vlan.log") ||
		{ cat "$work/vlan.log"; echo "run_rxe: rxe0 has no GID for $roce_rxe on eth0.100" >&2; exit 1; }
	echo "rxe0's GID $rgid is $roce_rxe on VLAN 100"
elif (( ipv6 )); then
	guest -t 30 0 "ip -6 addr add $roce_rxe/64 dev eth0 nodad &&
		for i in \$(seq 50); do grep -q '^fd77' /sys/class/infiniband/rxe0/ports/1/gids/2 && exit 0;
		sleep 0.1; done; exit 1" > "$work/ipv6.log" 2>&1 ||
		{ cat "$work/ipv6.log"; echo "run_rxe: rxe0 has no GID 2 for $roce_rxe" >&2; exit 1; }
fi

counters > "$work/counters.0" || { echo "run_rxe: cannot read rxe0's counters" >&2; exit 1; }
passed=0
failed=0
n=0
port=18600

# delta NAME: how much rxe's counter NAME moved during test $n.
delta() {
	local now before
	now=$(awk -v k="$1" '$1 == k { print $2 }' "$work/counters.$n")
	before=$(awk -v k="$1" '$1 == k { print $2 }' "$work/counters.$(( n - 1 ))")
	echo $(( ${now:-0} - ${before:-0} ))
}

# check: judge the test that just ran. Both programs must have ended with
# status 0 and printed their result ($expect); every RoCE frame droce
# sent must carry a good ICRC and must have been accepted by rxe
# (rcvd_pkts counts frames that passed rxe's header and ICRC checks), and
# rxe's error counters must stay still, except duplicate_request
# (requests rxe's responder saw again), which droce's retransmissions
# must explain.
check() {
	local why=() d c=$work/$name.cap
	if (( hrc != 0 )); then why+=("droce exit $hrc"); fi
	if (( grc != 0 )); then why+=("rxe exit $grc"); fi
	grep -Eq "$expect" "$work/$name.droce.log" || why+=("no result from droce")
	grep -Eq "$expect" "$work/$name.rxe.log" || why+=("no result from rxe")
	counters > "$work/counters.$n" || why+=("rxe counters unreadable")
	python3 "$here/roce_capture.py" --local "$roce_droce" --peer "$roce_rxe" "$cap" > "$c" ||
		why+=("capture unreadable")
	local tx=0 tx_bad_icrc=0 tx_retx=0 rx=0 rx_bad_icrc=0 rx_retx=0
	# shellcheck disable=SC1090 # sets tx, tx_bad_icrc, tx_retx, rx, rx_bad_icrc, rx_retx
	source "$c"
	local rcvd sent dup
	rcvd=$(delta rcvd_pkts)
	sent=$(delta sent_pkts)
	dup=$(delta duplicate_request)
	(( tx > 0 && rx > 0 )) || why+=("no RoCE traffic captured")
	(( tx_bad_icrc == 0 )) || why+=("$tx_bad_icrc bad ICRCs from droce")
	(( rx_bad_icrc == 0 )) || why+=("$rx_bad_icrc bad ICRCs from rxe")
	(( rcvd == tx )) || why+=("rxe accepted $rcvd of droce's $tx frames")
	(( sent == rx )) || why+=("rxe sent $sent frames, $rx reached droce's veth")
	(( dup <= tx_retx )) || why+=("rxe saw $dup duplicate requests, droce resent $tx_retx")
	for d in $must_be_zero; do
		(( $(delta "$d") == 0 )) || why+=("rxe $d +$(delta "$d")")
	done
	if (( vlan )); then
		d=$(tshark -r "$cap" -Y 'udp.port == 4791 && !(vlan.id == 100)' 2> /dev/null | wc -l)
		(( d == 0 )) || why+=("$d RoCE frames without the tag of VLAN 100")
	fi
	local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	local info="$(( ms / 1000 )).$(( ms % 1000 / 100 )) s; droce->rxe $tx frames (rcvd_pkts +$rcvd, resent $tx_retx, duplicate_request +$dup), rxe->droce $rx (sent_pkts +$sent, resent $rx_retx)"
	if (( ${#why[@]} == 0 )); then
		passed=$(( passed + 1 ))
		echo "PASS $name ($info)"
	else
		failed=$(( failed + 1 ))
		keep=1
		local IFS=';'
		echo "FAIL $name: ${why[*]} ($info)"
		sed 's/^/    droce: /' "$work/$name.droce.log" | grep -v 'EAL:' | tail -n 8
		sed 's/^/    rxe:   /' "$work/$name.rxe.log" | tail -n 8
	fi
}

# run_test NAME SERVER EXPECT DROCE_ARGS -- RXE_ARGS: run a server and
# its client, one on droce, one on rxe (SERVER = droce or rxe), with the
# given program arguments; the client also gets the server's address.
run_test() {
	name=$1
	local server=$2 dargs=() rargs=()
	expect=$3
	shift 3
	while [[ $1 != -- ]]; do dargs+=("$1"); shift; done
	shift
	rargs=("$@")
	n=$(( n + 1 ))
	port=$(( port + 1 ))
	cap=$work/$name.pcapng
	t0=$(date +%s%N)
	capture_start
	if [[ $server == droce ]]; then
		droce "${dargs[@]}" -p "$port" > "$work/$name.droce.log" 2>&1 &
		hpid=$!
		if wait_listen host "$port" "$hpid"; then
			guest -t "$limit" 0 "${rargs[*]} -p $port $host_ip" > "$work/$name.rxe.log" 2>&1
			grc=$?
		else
			grc=-1
			echo "droce's server did not listen" > "$work/$name.rxe.log"
		fi
		wait "$hpid"
		hrc=$?
		hpid=
	else
		guest -t 10 0 "rm -f /tmp/$name.rc; (timeout $limit ${rargs[*]} -p $port > /tmp/$name.log 2>&1;
			echo \$? > /tmp/$name.rc) < /dev/null > /dev/null 2>&1 &"
		if wait_listen guest "$port"; then
			droce "${dargs[@]}" -p "$port" "$rxe_ip" > "$work/$name.droce.log" 2>&1
			hrc=$?
		else
			hrc=-1
			echo "rxe's server did not listen" > "$work/$name.droce.log"
		fi
		guest -t $(( limit + 10 )) 0 "while [ ! -s /tmp/$name.rc ]; do sleep 0.2; done;
			cat /tmp/$name.log; exit \$(cat /tmp/$name.rc)" > "$work/$name.rxe.log" 2>&1
		grc=$?
	fi
	capture_stop
	check
}

# ibv_rc_pingpong: both sides as server, 16 B and 4 KiB messages, busy
# polling and completion events (-e); -c checks the received buffers.
for server in droce rxe; do
	for size in 16 4096; do
		for ev in "" -e; do
			run_test "pingpong-$server-server-$size${ev:+-events}" "$server" "^$iters iters in" \
				ibv_rc_pingpong -d droce0 -g "$gid" -m 1024 -s "$size" -n "$iters" -c $ev -- \
				ibv_rc_pingpong -d rxe0 -g "$rgid" -m 1024 -s "$size" -n "$iters" -c $ev
		done
	done
done

# perftest: RDMA WRITE and READ from each side (the client is the one that
# writes or reads). perftest gives the requester the responder's limit of
# outstanding READs (max_qp_rd_atom): rxe's and droce's are both 128.
for test in write read; do
	for server in rxe droce; do
		client=droce
		[[ $server == droce ]] && client=rxe
		run_test "ib_${test}_bw-$client-to-$server" "$server" "^ *4096 +$bw_iters " \
			"ib_${test}_bw" -d droce0 -x "$gid" -F -n "$bw_iters" -s 4096 -- \
			"ib_${test}_bw" -d rxe0 -x "$rgid" -F -n "$bw_iters" -s 4096
	done
done

echo "rxe0 counters over the whole run:"
LC_ALL=C join <(LC_ALL=C sort "$work/counters.0") <(LC_ALL=C sort "$work/counters.$n") |
	awk '{ printf "    %s +%d\n", $1, $3 - $2 }'
ms=$(( ($(date +%s%N) - t_start) / 1000000 ))
echo "total $(( ms / 1000 )).$(( ms % 1000 / 100 )) s (peer boot $(( boot_ms / 1000 )).$(( boot_ms % 1000 / 100 )) s)"
echo "$passed passed, $failed failed"
(( failed == 0 ))
