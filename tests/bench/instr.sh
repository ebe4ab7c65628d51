#!/usr/bin/env bash
# droce's engine in instructions per message, which no other load on the
# machine moves: engine_bench's cases under valgrind's callgrind, counting
# only inside droce_dev_poll() (and ibv_post_send() for write_tx), split
# by the part of droce the instructions are in. Two builds compared this
# way differ by what their code does, to the instruction; cycles (what
# engine_bench and droce-perf report) add the machine's state, which on a
# shared VM moves them by 1.5-3x from one minute to the next.
#
# Usage: instr.sh [-r RUNS] BUILD_DIR [CASE...]
#   CASE  write_rx, write_tx, pingpong or idle, with :N for N messages
#         per run (default: write_rx:32 write_tx:32 write_rx:1 write_tx:1
#         pingpong idle); pingpong is one side's half round trip of an
#         8-byte WRITE ping-pong, what a latency test pays per message.
#         pair_tx and pair_rx, with :SIZE for WRITEs of SIZE bytes
#         (default 65536): engine_bench has messages of one frame only,
#         so these run droce-perf over a memif pair, the sender (pair_tx)
#         or the receiver (pair_rx) under callgrind and its peer from the
#         same build beside it, counting inside engine_iteration() (and
#         ibv_post_send(), less the engine turns a post runs: callgrind
#         turns counting off in a listed function called from another),
#         per frame (IB MTU 4096): a long message's MIDDLE packets, what
#         its bandwidth is made of
#         sender and sender_ideal, with :SIZE (default 64): the whole
#         sender of SIZE-byte WRITEs with post lists, as targets.sh runs
#         it (-l 32 -t 512 -Q 32), per message: droce-perf's bandwidth
#         loop under callgrind, posts, polls, every engine turn and the
#         loop's own work (group droce-perf) counted; sender_ideal the
#         ideal endpoint's (--raw-l2 --touch), its work in that group
#         receiver and receiver_ideal, with :SIZE (default 64): the same
#         runs' receiving side whole, the other side native: droce-perf's
#         server in its rdma_bw() (where its engine runs, in the polls
#         of its waits) or the ideal endpoint's in its loop, per message
#   -r    runs per case (default 2000; the first few warm up, and count);
#         for the pair, sender and receiver cases, messages
#   -c    also the L1 data cache's misses per message, reads/writes, by
#         the same groups: callgrind's cache model (--cache-sim=yes: the
#         host's L1, LRU, no prefetcher, one process: the misses a peer's
#         writes to shared rings cause are not seen). Two builds compared
#         this way differ by the cache lines their code touches; runs
#         take some twice as long
# BUILD_DIR must be built for a CPU without AVX-512, which valgrind cannot
# run: scripts/build.sh build/instr -Dcpu=x86-64-v3. Without AVX-512 the
# ICRC takes another path than on such a CPU (droce_crc.c's SSE path: its
# first block shuffled into place, not a masked load, and no 512-bit
# folds), so the CRC is reported apart and left out of the groups.
# Prints a markdown table. Not part of CI; about 30 s per case.
set -euo pipefail

usage="usage: instr.sh [-r RUNS] [-c] BUILD_DIR [CASE...]"
runs=2000
cache=()
while getopts r:c opt; do
	case $opt in
	r) runs=$OPTARG ;;
	c) cache=(--cache-sim=yes) ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
build=${1:?$usage}
shift
cases=("$@")
(( ${#cases[@]} > 0 )) || cases=(write_rx:32 write_tx:32 write_rx:1 write_tx:1 pingpong idle)
exe=$build/tests/bench/engine_bench
[[ -x $exe ]] || { echo "instr: $exe is not built" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "instr: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/droce-instr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# pair_tx or pair_rx ($1) of $2-byte WRITEs: one side under callgrind,
# the other natively, over memif; callgrind's output in $3.
pair_run() {
	local perf=$build/apps/droce-perf/droce-perf sock=$tmp/memif.sock port=$((20000 + RANDOM % 1000))
	local vdev="socket=$sock,socket-abstract=no,bsize=4352"
	local -a opts=(--test write --mode bw -s "$2" -n "$runs" -m 4096)
	local -a vg=(valgrind --tool=callgrind "${cache[@]}" --toggle-collect=engine_iteration
		     --toggle-collect=droce_post_send --callgrind-out-file="$3")
	case $1 in
	sender | receiver)
		opts=(--test write --mode bw -s "$2" -n "$runs" -l 32 -t 512 -Q 32)
		vg=(valgrind --tool=callgrind "${cache[@]}" --toggle-collect=rdma_bw --callgrind-out-file="$3") ;;
	sender_ideal | receiver_ideal)
		opts=(--test write --mode bw -s "$2" -n "$runs" -l 32 -t 512 -Q 32 --raw-l2 --touch)
		vg=(valgrind --tool=callgrind "${cache[@]}" --toggle-collect="raw_bw_loop*" --callgrind-out-file="$3") ;;
	esac
	local on_server=false
	[[ $1 == pair_rx || $1 == receiver* ]] && on_server=true
	local -a sv=(-l 0 --no-pci --no-telemetry --file-prefix "is$port"
		     --vdev="net_memif0,role=server,$vdev" -- -p "$port" --ip 10.0.0.1/24
		     --mac 02:00:00:00:00:01 "${opts[@]}")
	local -a cl=(-l 1 --no-pci --no-telemetry --file-prefix "ic$port"
		     --vdev="net_memif0,role=client,$vdev" -- -p "$port" --ip 10.0.0.2/24
		     --mac 02:00:00:00:00:02 "${opts[@]}" 127.0.0.1)
	local server rc=0 i
	[[ -x $perf ]] || { echo "instr: $perf is not built" >&2; return 1; }
	rm -f "$sock"
	# valgrind takes no hugepages: its side runs with --no-huge
	if $on_server; then
		timeout 120 "${vg[@]}" "$perf" --no-huge -m 1024 "${sv[@]}" >"$tmp/server.log" 2>&1 &
	else
		timeout 120 "$perf" --in-memory "${sv[@]}" >"$tmp/server.log" 2>&1 &
	fi
	server=$!
	for (( i = 0; i < 600; i++ )); do
		[[ -S $sock ]] && break
		sleep 0.05
	done
	if ! $on_server; then
		timeout 120 "${vg[@]}" "$perf" --no-huge -m 1024 "${cl[@]}" >"$tmp/client.log" 2>&1 || rc=1
	else
		timeout 120 "$perf" --in-memory "${cl[@]}" >"$tmp/client.log" 2>&1 || rc=1
	fi
	wait "$server" || rc=1
	return $rc
}

# callgrind's output $1.out per function, one event per file: $1.txt
# instructions, with -c $1.D1mr.txt and $1.D1mw.txt its L1 misses.
annotate() {
	local ev
	callgrind_annotate --threshold=100 --auto=no --show-percs=no --show=Ir "$1.out" >"$1.txt"
	(( ${#cache[@]} > 0 )) || return 0
	for ev in D1mr D1mw; do
		callgrind_annotate --threshold=100 --auto=no --show-percs=no --show="$ev" --sort="$ev" \
			"$1.out" >"$1.$ev.txt"
	done
}

for c in "${cases[@]}"; do
	name=${c%%:*}
	n=1
	[[ $name == pair_* ]] && n=65536
	whole=false
	[[ $name =~ ^(sender|receiver)(_ideal)?$ ]] && whole=true n=64
	[[ $c == *:* ]] && n=${c##*:}
	if [[ $name == pair_tx || $name == pair_rx ]] || $whole; then
		if ! pair_run "$name" "$n" "$tmp/$name-$n.out"; then
			echo "instr: $c failed:" >&2
			tail -n 5 "$tmp/server.log" "$tmp/client.log" >&2
			exit 1
		fi
		annotate "$tmp/$name-$n"
		echo "$name $n $runs" >>"$tmp/cases"
		continue
	fi
	toggles=(--toggle-collect=droce_dev_poll)
	[[ $name == write_tx || $name == pingpong ]] && toggles+=(--toggle-collect=droce_post_send)
	[[ $name == pingpong ]] && toggles+=(--toggle-collect=droce_poll_cq)
	args=(-r "$runs" -t -c "$name" -e "--no-huge -m 512")
	[[ $name == idle || $name == pingpong ]] || args+=(-n "$n")
	[[ $name == pingpong ]] && args+=(-s 8)
	if ! valgrind --tool=callgrind "${cache[@]}" "${toggles[@]}" --callgrind-out-file="$tmp/$name-$n.out" \
		"$exe" "${args[@]}" >"$tmp/$name-$n.log" 2>&1; then
		echo "instr: $c failed (a build for a CPU with AVX-512?):" >&2
		grep -v '^==' "$tmp/$name-$n.log" | tail -n 5 >&2
		exit 1
	fi
	annotate "$tmp/$name-$n"
	echo "$name $n $runs" >>"$tmp/cases"
done

python3 - "$tmp" "${#cache[@]}" <<'PY'
import os, re, sys

tmp, cache = sys.argv[1], sys.argv[2] != "0"
# Where a source file's instructions go. A header's lines count for the
# function they were inlined into, and so for that function's file.
groups = [
    ("post", ("lib/verbs/droce_verbs_post.c", "lib/verbs/droce_verbs_qpx.c")),
    ("rx", ("lib/wire/droce_pkt.c", "lib/port/droce_port_rx.c", "lib/port/droce_gid.c")),
    ("icrc (less the CRC)", ("lib/wire/droce_icrc.c",)),
    ("validity", ("lib/transport/droce_rx_check.c",)),
    ("responder", ("lib/transport/droce_resp.c",)),
    ("copy", ("lib/mr/", "lib/transport/droce_payload.c", "lib/wire/droce_mbuf.c", "memmove", "memcpy")),
    ("completion", ("lib/transport/droce_comp.c", "lib/qp/droce_cq")),
    ("requester", ("lib/transport/droce_req.c", "lib/transport/droce_tx.c",
                   "lib/transport/droce_hdr_tmpl.c", "lib/transport/droce_zcopy.c")),
    ("tx", ("lib/port/droce_port_tx.c",)),
    ("droce-perf", ("apps/droce-perf/",)),
    ("port (ring or memif PMD, ethdev, mbufs)", ("librte_net_ring", "librte_net_memif", "rte_ethdev.h",
                                                 "librte_mbuf", "rte_mbuf.h", "rte_mempool.h",
                                                 # DPDK's per-lcore variables, read across
                                                 # shared libraries (the memif PMD's)
                                                 "tls_get_addr")),
]
crc = ("lib/wire/droce_crc.c", "rte_net_crc", "librte_net.so")
line = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+?):(\S+)(?:\s+\[(.*)\])?\s*$")

def group_of(text):
    for name, keys in groups:
        if any(k in text for k in keys):
            return name
    return None

# Calls of the function named fn (or fn.isra.0 and the like) in a
# callgrind output: the frames built or checked. Names are compressed:
# "(id) name" the first time, "(id)" after.
def frames(path, fn):
    names, total, cur = {}, 0, None
    for l in open(path):
        m = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", l.rstrip("\n"))
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2)
            cur = names.get(m.group(1)) if l.startswith("cfn=") else None
        elif l.startswith("calls=") and cur is not None and cur.split(".")[0] == fn:
            total += int(l.split("=")[1].split()[0])
    if total == 0:
        sys.exit(f"instr: {path}: no calls of {fn} (inlined now?) to count frames by")
    return total

def entries_of(path):
    """(count, file, function, object) of each function in an annotation."""
    out = []
    for l in open(path):
        m = line.match(l)
        if m and m.group(2) != "PROGRAM":
            out.append((int(m.group(1).replace(",", "")), m.group(2), m.group(3), m.group(4) or ""))
    return out

def homes(entries):
    """A function inlined from several files counts its headers' lines
    for the file it has the most instructions in."""
    home, most = {}, {}
    for ir, f, fn, obj in entries:
        if f.endswith(".c") and "/lib/" in f and ir > most.get(fn, -1):
            home[fn], most[fn] = f, ir
    return home

def split(entries, home):
    """An event's total, the CRC's part, each group's and the rest."""
    sums = {g: 0 for g, _ in groups}
    crc_n = rest = total = 0
    for n, f, fn, obj in entries:
        total += n
        where = f"{f} {obj}"
        if any(k in where for k in crc) or home.get(fn, "").endswith("droce_crc.c"):
            crc_n += n
            continue
        if f.endswith(".h"):
            g = group_of(home.get(fn, "")) or group_of(where)
        else:
            g = group_of(where)
        if g is None:
            rest += n
        else:
            sums[g] += n
    return [total, crc_n] + [sums[g] for g, _ in groups] + [rest]

def messages(name, n, runs):
    if name.startswith("pair_"):
        # Out of line by design: tx_copy_icrc() (__rte_noinline) for each
        # frame sent with a copied payload, droce_port_rx_verify() (called
        # across libraries) for each frame received.
        return frames(os.path.join(tmp, f"{name}-{n}.out"),
                      "tx_copy_icrc" if name == "pair_tx" else "droce_port_rx_verify")
    if name.startswith(("sender", "receiver")):
        return int(runs)
    return int(n) * int(runs)

def header(what):
    print(f"| case | messages (pair, sender, receiver: size) per run | {what} | CRC (apart) | "
          + " | ".join(g for g, _ in groups) + " | engine and the rest |")
    print("|---|---|---|---|" + "---|" * (len(groups) + 1))

cases = [spec.split() for spec in open(os.path.join(tmp, "cases"))]
header("instructions per message (pair: frame)")
for name, n, runs in cases:
    base = os.path.join(tmp, f"{name}-{n}")
    msgs = messages(name, n, runs)
    cells = split(entries_of(base + ".txt"), homes(entries_of(base + ".txt")))
    print(f"| {name} | {n} | " + " | ".join(f"{c / msgs:.0f}" for c in cells) + " |")
if cache:
    print()
    header("L1 data misses per message (pair: frame), reads/writes")
    for name, n, runs in cases:
        base = os.path.join(tmp, f"{name}-{n}")
        msgs = messages(name, n, runs)
        home = homes(entries_of(base + ".txt"))
        r, w = (split(entries_of(f"{base}.{ev}.txt"), home) for ev in ("D1mr", "D1mw"))
        print(f"| {name} | {n} | " + " | ".join(f"{a / msgs:.2f}/{b / msgs:.2f}" for a, b in zip(r, w)) + " |")
PY
