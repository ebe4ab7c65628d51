#!/usr/bin/env bash
# Short droce-perf runs whose output is checked (not their figures: the
# machine is shared and the numbers swing).
#
# Usage: run_perf.sh BUILD_DIR
#
# Each test is a server and a client droce-perf over one memif link: the
# exit codes, the result table's header and a data row with the size, and
# --json (python3 -m json.tool, and one result per size) are checked; the
# cycles of both sides (droce, the ideal endpoint of --raw-l2 --touch, and
# raw-L2) are there, non-zero and sane, and so are the frames each side's
# port moved (exact where a message's frames are known); then droce-perf
# --demo runs once,
# short. Exits 0 when every check passes.
set -uo pipefail

build=${1:?usage: run_perf.sh BUILD_DIR}
me=run_perf
# shellcheck source=tests/perf/perf_pairs.sh
source "$(dirname "$0")/perf_pairs.sh"

# table NAME SIDE SIZE HEADER: SIDE's output has the header and a row for SIZE.
table() {
	local f=$tmp/$1.$2.out
	if ! grep -q -- "$4" "$f"; then
		fail "$1 ($2): no '$4' header"
		return
	fi
	if ! grep -qE "^ $3 +[0-9]+ +[0-9.]+" "$f"; then
		fail "$1 ($2): no result row for $3 bytes"
		cat "$f" >&2
	fi
}

bw_head='#bytes     #iterations    BW peak'
lat_head='#bytes #iterations    t_min\[usec\]'

# json NAME SIDE COUNT: SIDE printed JSON (and nothing else) with COUNT results.
json() {
	local f=$tmp/$1.$2.out
	if ! python3 -m json.tool "$f" >/dev/null; then
		fail "$1 ($2): --json output does not parse"
		cat "$f" >&2
		return
	fi
	if ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d["results"]) == int(sys.argv[2]) else 1)' "$f" "$3"; then
		fail "$1 ($2): not $3 result(s) in the JSON"
	fi
}

# cycles NAME SIDE: SIDE's table has a cycles line for each side.
cycles() {
	local f=$tmp/$1.$2.out side
	for side in client server; do
		if ! grep -qE "^   cycles $side: +[0-9.]+/msg \(own +[0-9.]+ \+ port +[0-9.]+\) +[0-9.]+/B" "$f"; then
			fail "$1 ($2): no cycles line for the $side"
			cat "$f" >&2
			return
		fi
	done
}

# json_cycles NAME SIDE: every result of SIDE's JSON has both sides'
# cycles: the TSC's rate, busy > 0 with the burst calls within it, the
# messages both sent, own + port = the whole, under 20 million cycles per
# message; and the frames each side's port moved: at least a frame for
# each message it sent, and on the lossless memif link a frame received
# for each message the peer sent, each count over all messages as its
# per_msg.
json_cycles() {
	if ! python3 - "$tmp/$1.$2.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    c = r["cycles"]
    assert c["messages"] > 0 and c["bytes"] == c["messages"] * r["bytes"], c
    assert 1e8 < c["tsc_hz"] < 1e10, c
    assert c["client"]["sent"] + c["server"]["sent"] == c["messages"], c
    for side in ("client", "server"):
        s = c[side]
        assert s["busy"] > 0 and s["rx_burst"] + s["tx_burst"] <= s["busy"], (side, s)
        assert 0 < s["per_msg"] < 2e7 and s["own_per_msg"] >= 0 and s["port_per_msg"] >= 0, (side, s)
        assert abs(s["per_msg"] - s["own_per_msg"] - s["port_per_msg"]) < 1e-2 * s["per_msg"], (side, s)
        assert abs(s["per_byte"] * r["bytes"] - s["per_msg"]) <= 1e-3 * s["per_msg"] + 1e-3, (side, s)
        peer = c["server" if side == "client" else "client"]
        assert s["tx_frames"] >= s["sent"] and s["rx_frames"] >= peer["sent"], (side, s, peer)
        for k in ("tx", "rx"):
            assert abs(s[k + "_frames_per_msg"] * c["messages"] - s[k + "_frames"]) <= \
                1e-3 * s[k + "_frames"] + 1, (side, k, s)
EOF
	then
		fail "$1 ($2): the cycles in the JSON are missing or insane"
		cat "$tmp/$1.$2.out" >&2
	fi
}

# json_frames NAME SIDE WHO DIR [N]: in every result of SIDE's JSON, WHO's
# port moved (DIR: tx or rx) N frames per message, within 1 % (ARP may add
# a few); without N the row's own frames_per_msg (raw-L2). Where the
# frames of a message are known, a count that is off (twice, or the
# other direction's) fails here, not only one that is short.
json_frames() {
	if ! python3 - "$tmp/$1.$2.out" "$3" "$4" "${5:-}" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
who, way, n = sys.argv[2], sys.argv[3], sys.argv[4]
for r in d["results"]:
    want = float(n) if n else r["frames_per_msg"]
    got = r["cycles"][who][way + "_frames_per_msg"]
    assert want <= got <= want * 1.01, (r["bytes"], who, way, got, want)
EOF
	then
		fail "$1 ($2): the $3's $4 frames per message are not ${5:-frames_per_msg}"
	fi
}

# json_cc NAME SIDE: every result of SIDE's JSON has both sides'
# congestion control, every counter there.
json_cc() {
	if ! python3 - "$tmp/$1.$2.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    for side in ("client", "server"):
        c = r["cc"][side]
        for k in ("ce_received", "cnps_sent", "cnps_received", "rate_decreases",
                  "rate_increases", "paced", "paced_qps", "rate_min_mbps", "rate_max_mbps",
                  "lowest_rate_mbps"):
            assert c[k] >= 0, (side, k)
EOF
	then
		fail "$1 ($2): no congestion control in the JSON"
		cat "$tmp/$1.$2.out" >&2
	fi
}

# Every test, both modes, a page and a few bytes.
for test in write send read atomic; do
	for mode in bw lat; do
		sizes="4096 8"
		[[ $test == atomic ]] && sizes=8
		for size in $sizes; do
			name=$test-$mode-$size
			opts=(--test "$test" --mode "$mode" -n 1000)
			[[ $test != atomic ]] && opts+=(-s "$size")
			pair "$name" "${opts[@]}" || continue
			if [[ $mode == bw ]]; then
				table "$name" client "$size" "$bw_head"
				# a SEND receiver measures too
				[[ $test == send ]] && table "$name" server "$size" "$bw_head"
			else
				table "$name" client "$size" "$lat_head"
				# both ends of a ping-pong measure
				[[ $test == write || $test == send ]] && table "$name" server "$size" "$lat_head"
			fi
		done
	done
done

cycles write-bw-4096 client
cycles send-lat-8 server

# Two engines per side (a memif queue pair each) and 4 QPs spread over
# them: a cycles line per engine of the side, and in the JSON each
# engine's cycles and messages, every engine busy.
pair write-bw-engines --test write --engines 2 -q 4 -n 1000 -s 4096 &&
	table write-bw-engines client 4096 "$bw_head" &&
	if (( $(grep -cE '^   cycles client engine +[01]: +[0-9.]+/msg \(own +-?[0-9.]+ \+ port +[0-9.]+\) over [1-9][0-9]* messages' \
		"$tmp/write-bw-engines.client.out") != 2 )); then
		fail "write-bw-engines (client): not a cycles line for each of 2 engines"
		cat "$tmp/write-bw-engines.client.out" >&2
	fi
pair write-bw-engines-json --test write --engines 2 -q 4 -n 1000 -s 4096 --json &&
	if ! python3 - "$tmp/write-bw-engines-json.client.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    e = r["cycles"]["engines"]
    assert e["side"] == "client" and len(e["per_engine"]) == 2, e
    for x in e["per_engine"]:
        assert x["messages"] > 0 and x["busy"] > 0 and x["per_msg"] > 0, x
EOF
	then
		fail "write-bw-engines-json (client): no per-engine cycles in the JSON"
		cat "$tmp/write-bw-engines-json.client.out" >&2
	fi

# Congestion control: every droce side reports its CE marks, CNPs, DCQCN
# rate changes and paced QPs (all zero here: memif does not congest).
{ grep -E "^   cc client: ce_received [0-9]+ cnps_sent [0-9]+ cnps_received [0-9]+ rate_decreases [0-9]+ rate_increases [0-9]+ paced [0-9]+; paced QPs [0-9]+" "$tmp/write-bw-4096.client.out" &&
  grep -E "^   cc server: ce_received [0-9]+ " "$tmp/write-bw-4096.client.out"; } >/dev/null ||
	fail "write-bw-4096 (client): no congestion-control line for each side"
# Through a 1 Gb/s bottleneck on each port (--cc, the port's key): the
# server sees CE marks and sends CNPs, the client's QPs are cut and paced,
# in the table and in the JSON.
cc_opt=--cc=bottleneck=rate_mbps=1000,queue=524288,mark=32768
if pair write-bw-cc --test write -q 2 -n 300 -s 65536 "$cc_opt"; then
	c=$(grep -E '^   cc client: ' "$tmp/write-bw-cc.client.out")
	s=$(grep -E '^   cc server: ' "$tmp/write-bw-cc.client.out")
	if ! [[ $s =~ ce_received\ [1-9][0-9]*\ cnps_sent\ [1-9] &&
		$c =~ cnps_received\ [1-9][0-9]*\ rate_decreases\ [1-9] &&
		$c =~ paced\ QPs\ [12]\ at\ [0-9]+\.\.[0-9]+\ Mb/s\ \(lowest\ [1-9] ]]; then
		fail "write-bw-cc (client): no CE marks, CNPs or rate cuts through the bottleneck"
		cat "$tmp/write-bw-cc.client.out" >&2
	fi
fi
pair write-bw-cc-json --json --test write -q 2 -n 300 -s 65536 "$cc_opt" &&
	if ! python3 - "$tmp/write-bw-cc-json.client.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    c, s = r["cc"]["client"], r["cc"]["server"]
    assert s["ce_received"] > 0 and s["cnps_sent"] > 0, s
    assert c["cnps_received"] > 0 and c["rate_decreases"] > 0 and c["paced_qps"] > 0, c
    assert 0 < c["lowest_rate_mbps"] <= c["rate_min_mbps"] <= c["rate_max_mbps"], c
EOF
	then
		fail "write-bw-cc-json (client): no CE marks, CNPs or rate cuts in the JSON"
		cat "$tmp/write-bw-cc-json.client.out" >&2
	fi
# A --cc value droce does not take is refused before anything starts.
runs=$((runs + 1))
if "$exe" --no-huge -m 64 --no-shconf --no-pci --no-telemetry -- --cc=bottleneck=rate_mbps=1,mark=9 \
	127.0.0.1 >/dev/null 2>"$tmp/cc-bad.err" || ! grep -q -- '--cc: bottleneck' "$tmp/cc-bad.err"; then
	fail "a bad --cc was not refused"
	cat "$tmp/cc-bad.err" >&2
fi

# Bidirectional, several QPs, post lists, -D, every size.
pair write-bw-bidir --test write -b -q 2 -l 4 -n 1000 -s 4096 &&
	table write-bw-bidir client 4096 "$bw_head"
pair send-bw-bidir --test send -b -n 1000 -s 4096 &&
	table send-bw-bidir server 4096 "$bw_head"
pair write-bw-duration --test write -D 1 -s 4096 &&
	table write-bw-duration client 4096 "$bw_head"
pair send-lat-duration --test send --mode lat -D 1 -s 8 &&
	table send-lat-duration client 8 't_avg\[usec\]    tps average'
pair write-lat-all --test write --mode lat -a -n 5 &&
	table write-lat-all client 8388608 "$lat_head"

# The raw-L2 twins, and the ideal endpoint (--touch): its receiver checks
# every CRC, and says so when one fails or when the payloads it received
# are not in its destination buffer.
pair raw-bw --raw-l2 --mode bw -n 1000 -s 65536 &&
	table raw-bw client 65536 "$bw_head" && cycles raw-bw client
pair raw-lat --raw-l2 --mode lat -n 1000 -s 8 &&
	table raw-lat client 8 "$lat_head"
pair touch-bw --raw-l2 --touch --mode bw -n 1000 -s 10000 &&
	table touch-bw client 10000 "$bw_head" && cycles touch-bw client
pair touch-lat --raw-l2 --touch --mode lat -n 1000 -s 10000 &&
	table touch-lat client 10000 "$lat_head" && cycles touch-lat server
grep -q 'ideal endpoint' "$tmp/touch-bw.client.out" 2>/dev/null ||
	fail "touch-bw: no ideal endpoint in the banner"
# IB MTU 4096 asked over 2 KiB memif buffers: the ideal endpoint comes
# down to 1024, as droce's port does, so that each frame fits in one
# buffer. Its 4 KiB frames used to span three, and DPDK 22.11's memif TX
# takes a ring slot more than is free when such a frame meets an almost
# full ring: a slow receiver (the asan build) lost frames and failed CRCs
# (docs/config.md, "memif buffers").
bsize=2048 pair touch-bsize-2048 --raw-l2 --touch --mode bw -n 200 -s 65536 &&
	{ grep -q 'the port offers 1024' "$tmp/touch-bsize-2048.client.err" ||
	  fail "touch-bsize-2048: the ideal endpoint did not come down to IB MTU 1024"; }

# droce asked for IB MTU 4096 over memif's default 2 KiB buffers: the
# port offers 1024, whose frames fit in one buffer (drivers/memif). With
# 4096 a WRITE ping-pong's ACKs swallowed the WRITEs after them, and the
# QPs failed with retry errors.
bsize=2048 pair memif-bsize-2048 --test write --mode lat -n 300 -s 4096 -m 4096 &&
	{ grep -q 'the port offers 1024' "$tmp/memif-bsize-2048.client.err" ||
	  fail "memif-bsize-2048: the port did not come down to IB MTU 1024"; }
# The same over af_packet with its default ring frames (framesz=2048), on
# a veth pair of its own: its TX dropped longer frames and the kernel cut
# them (drivers/af_packet). Skipped where no veth pair can be made. Its
# ends' interface indexes are 0x4000 apart: DPDK 22.11's af_packet joins
# the PACKET_FANOUT group (PID xor ifindex) & 0xffff, and two processes of
# near PIDs on near indexes meet in one group on two interfaces, which
# the kernel refuses (tests/net/run_net.sh).
veth=pf$$
veth_index=$(( 0x2000 + $$ % 0x1000 ))
if ip link add "${veth}a" index "$veth_index" type veth \
	peer name "${veth}b" index $(( veth_index + 0x4000 )) 2>/dev/null; then
	for i in a b; do
		sysctl -qw "net.ipv6.conf.$veth$i.disable_ipv6=1"
		ip link set "$veth$i" up
	done
	afp="${veth}a,${veth}b" framesz=2048 pair af-packet-framesz-2048 --test write --mode lat \
		-n 300 -s 4096 -m 4096 &&
		{ grep -q 'the port offers 1024' "$tmp/af-packet-framesz-2048.client.err" ||
		  fail "af-packet-framesz-2048: the port did not come down to IB MTU 1024"; }
	ip link del "${veth}a"
else
	echo "$me: no veth pair here: af_packet's frame size not checked"
fi
# --touch is a raw-L2 baseline.
runs=$((runs + 1))
if "$exe" --no-huge -m 64 --no-shconf --no-pci --no-telemetry -- --touch 127.0.0.1 \
	>/dev/null 2>"$tmp/touch-alone.err" || ! grep -q 'give --raw-l2' "$tmp/touch-alone.err"; then
	fail "--touch without --raw-l2 was not refused"
fi

# --json: one document, one result per size.
pair json-bw --json --test write -n 1000 -s 4096 && json json-bw client 1 &&
	json_cycles json-bw client && json_cc json-bw client &&
	json_frames json-bw client client tx 1 && json_frames json-bw client server rx 1
pair json-lat --json --test send --mode lat -n 1000 -s 8 && json json-lat client 1 &&
	json json-lat server 1 && json_cycles json-lat server
pair json-read --json --test read -n 1000 -s 65536 && json json-read client 1 &&
	json_cycles json-read client && json_frames json-read client server tx 16 &&
	json_frames json-read client client rx 16
pair json-raw --json --raw-l2 --mode bw -n 1000 -s 4096 -a && json json-raw client 23 &&
	json_cycles json-raw client
pair json-touch --json --raw-l2 --touch --mode bw -n 1000 -s 4096 -a &&
	json json-touch client 23 && json_cycles json-touch client &&
	json_frames json-touch client client tx && json_frames json-touch client server rx

# Every --touch run's receiver checked each CRC and its buffer: json-touch's
# sizes from 2 bytes on take the short frames' path (CRCs written a burst
# at a time and checked four at a time), the others the long frames'.
touch_errs=("$tmp"/touch-*.err "$tmp"/json-touch.*.err)
if grep -Eq 'failed their CRC|not what the peer sent|lost on the port' "${touch_errs[@]}"; then
	fail "--touch: frames failed their CRC, did not land or were lost"
	grep -E 'failed their CRC|not what the peer sent|lost on the port' "${touch_errs[@]}" >&2
fi

# A server and a client that run different tests: both stop, and say why.
runs=$((runs + 1))
start_server mismatch --test write -n 1000 -s 8
s=$side_pid
side client mismatch --test write -n 1000 -s 16
c=$side_pid
wait "$c"; rc=$?
wait "$s"; rs=$?
pids=()
if (( rc == 0 || rs == 0 )) ||
   ! grep -q 'runs another test' "$tmp/mismatch.server.err" ||
   ! grep -q 'the server refused' "$tmp/mismatch.client.err"; then
	fail "mismatch: client exit $rc, server exit $rs, or no reason given"
fi

# The demo, short.
runs=$((runs + 1))
if ! timeout 300 "$exe" --demo --demo-seconds 1 >"$tmp/demo.out" 2>"$tmp/demo.err"; then
	if grep -q 'hugepages' "$tmp/demo.err" && [[ $mem != --in-memory ]]; then
		echo "run_perf: --demo skipped: no hugepages"
	else
		fail "--demo failed"
		cat "$tmp/demo.out" "$tmp/demo.err" >&2
	fi
elif ! grep -q 'droce/ideal droce/raw-L2' "$tmp/demo.out" ||
     ! grep -qE 'RDMA WRITE bw 64 KiB +[0-9.]+ Gb/s +[0-9.]+ Gb/s +[0-9.]+ Gb/s' "$tmp/demo.out" ||
     ! grep -qE 'RDMA WRITE lat 8 B +[0-9]+ / [0-9]+ +[0-9]+ / [0-9]+ +[0-9]+ / [0-9]+' "$tmp/demo.out"; then
	fail "--demo printed no summary"
	cat "$tmp/demo.out" >&2
fi

echo "run_perf: $runs runs, $failures failure(s)"
(( failures == 0 ))
