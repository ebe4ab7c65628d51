#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Run a droce-testpmd script on the loopback port (net_ring0, no
# hugepages) and check its output against an expectation file.
#
#   run_script.sh [--telemetry] <droce-testpmd> <script> <expect>
#
# In the script, @TMP@ stands for a fresh temporary directory. The
# expectation file holds one check per line:
#   <ERE>            some output line matches
#   !<ERE>           no output line matches
#   <N> x <ERE>      exactly N output lines match
#   @exit <N>        droce-testpmd exits with N (default 0: no command failed)
#   @pcapng <name>   @TMP@/<name> is a non-empty pcapng file
#   # ...            a comment
# --telemetry runs the EAL with telemetry (and a file prefix of its own),
# so `show qp` can print the per-QP counters.
set -u

telemetry=--no-telemetry
prefix=
if [ "${1:-}" = --telemetry ]; then
	prefix=testpmd$$
	telemetry="--file-prefix=$prefix"
	shift
fi
if [ $# -ne 3 ]; then
	echo "usage: $0 [--telemetry] <droce-testpmd> <script> <expect>" >&2
	exit 2
fi
testpmd=$1 script=$2 expect=$3
tmp=$(mktemp -d /tmp/droce-testpmd.XXXXXX) || exit 2
# The EAL leaves its (empty) runtime directory behind: under /var/run/dpdk
# for root, else under $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk.
cleanup() {
	rm -rf "$tmp"
	if [ -n "$prefix" ]; then
		for d in /var/run/dpdk "${XDG_RUNTIME_DIR:-/tmp}/dpdk" /tmp/dpdk; do
			rm -rf "${d:?}/$prefix"
		done
	fi
}
trap cleanup EXIT
sed "s|@TMP@|$tmp|g" "$script" > "$tmp/script"

"$testpmd" -l 0 --no-huge -m 512 --no-shconf --no-pci $telemetry --vdev=net_ring0 \
	-- --cmdline-file "$tmp/script" > "$tmp/out" 2> "$tmp/err"
status=$?
cat "$tmp/out"

failed=0
fail() {
	echo "CHECK FAILED: $*"
	failed=1
}

want_status=0
while IFS= read -r line; do
	case $line in
	'' | '#'*)
		;;
	'@exit '*)
		want_status=${line#@exit }
		;;
	'@pcapng '*)
		f=$tmp/${line#@pcapng }
		# A pcapng file starts with a Section Header Block, type 0x0a0d0d0a.
		if [ ! -s "$f" ]; then
			fail "$f is missing or empty"
		elif [ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" != 0a0d0d0a ]; then
			fail "$f is not a pcapng file"
		fi
		;;
	'!'*)
		grep -qE -- "${line#!}" "$tmp/out" && fail "unexpected output: ${line#!}"
		;;
	[0-9]*' x '*)
		n=${line%% x *}
		pat=${line#* x }
		got=$(grep -cE -- "$pat" "$tmp/out")
		[ "$got" -eq "$n" ] || fail "$n lines should match '$pat', $got do"
		;;
	*)
		grep -qE -- "$line" "$tmp/out" || fail "missing output: $line"
		;;
	esac
done < "$expect"

if [ "$status" -ne "$want_status" ]; then
	fail "exit status $status, expected $want_status"
fi
if [ $failed -ne 0 ]; then
	echo "--- stderr:"
	cat "$tmp/err"
fi
exit $failed
