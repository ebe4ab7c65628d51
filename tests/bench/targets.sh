#!/usr/bin/env bash
# Issue 12's targets, each measured side by side, for docs/benchmarks.md:
# every round runs, per target, droce, then the ideal RoCE endpoint
# (--raw-l2 --touch), then plain raw-L2, with the same options over one
# memif link, and takes droce's ratio to each from those runs seconds
# apart. Rounds are kept apart (the machine changes state between them,
# see docs/benchmarks.md): the table has each round's ratio and their
# median, and beside droce's the ideal endpoint's own ratio to raw-L2 in
# the same rounds, the most any RoCE endpoint can reach on this port.
# Each kind runs twice in a round, in mirrored order (droce, ideal, raw,
# raw, ideal, droce), and its figure is the geometric mean of the two, so
# a drift of the machine's speed through the round weighs alike on all
# three. Where any kind has two runs in a round that differ by more than
# STEADY (25 %), the machine changed state within the round (raw-L2 at 49
# or 250 Gb/s from one minute to the next, docs/benchmarks.md): the
# round's ratios are shown but left out of the median. So are those of a
# round no single state could give (POSSIBLE): droce faster than the
# ideal endpoint or raw-L2, or the ideal endpoint faster than raw-L2, each
# of which does less on the same port; the machine changed state between
# the middle of the round and its ends, which leaves each kind's two runs
# alike. And
# only rounds of the machine's fast state count: each run's cycles inside
# the port's burst calls per byte (64 KiB) or per message tell its state
# (the slow state's are 3-10 times the fast one's, for every kind alike),
# and a run whose figure is more than FAST times its kind's lowest in the
# whole run met the slow state. In the slow state memif's copy decides
# every kind's rate, and the ratios say little of droce.
#
#   64 KiB WRITE bandwidth     droce/ideal >= 0.90, droce/raw-L2 >= 0.50
#   64 B WRITE, one WR a post  droce/raw-L2 >= 0.50 (perftest's -t 128, a
#                              completion every 100 WRs)
#   64 B WRITE, post lists     droce/raw-L2 >= 0.70 (-l 32 -t 512 -Q 32)
#   8 B WRITE latency          droce/raw-L2 <= 1.3 (typical half round trip)
#   droce's own cycles         64 KiB WRITE <= 0.3 per byte on each side,
#                              64 B WRITE <= 200 per message on the requester
#
# Usage: targets.sh [-d SECONDS] [-n ITERATIONS] [-r ROUNDS] [-i IDLE_S] BUILD_DIR OUT_DIR [DOC]
#   -d  seconds per bandwidth run (default 2)
#   -n  latency iterations (default 20000)
#   -r  rounds (default 5)
#   -i  seconds each run waits at most for idle CPUs (default 20; 0: none)
# Writes OUT_DIR/targets.json (every run's --json output); with DOC
# (docs/benchmarks.md), also the tables between its "<!-- targets:begin -->"
# and "<!-- targets:end -->" lines: the targets, and where each kind's
# cycles went (the whole per message, the port's, its own, the rest).
# Not part of CI: 24 pairs per round, about a minute each round on an
# idle machine.
set -euo pipefail

# shellcheck source=tests/bench/bench_env.sh
source "$(dirname "$0")/bench_env.sh"
usage="usage: targets.sh [-d SECONDS] [-n ITERATIONS] [-r ROUNDS] [-i IDLE_S] BUILD_DIR OUT_DIR [DOC]"
iters=20000
repeats=5
bench_opts "$usage" "$@"
set -- "${bench_args[@]}"
build=${1:?$usage}
out=${2:?$usage}
doc=${3:-}
[[ -z $doc || -f $doc ]] || { echo "targets: $doc: no such file" >&2; exit 1; }

bench_setup targets "$build"
mkdir -p "$out"

bench_targets
load_start=$(cut -d' ' -f1 /proc/loadavg)
for (( r = 1; r <= repeats; r++ )); do
	for t in "${bench_target_list[@]}"; do
		read -r -a opts <<<"${t#*|}"
		bench_run "droce-${t%%|*}-$r" "${opts[@]}" || true
		bench_run "ideal-${t%%|*}-$r" --raw-l2 --touch "${opts[@]}" || true
		bench_run "raw-${t%%|*}-$r" --raw-l2 "${opts[@]}" || true
		bench_run "raw2-${t%%|*}-$r" --raw-l2 "${opts[@]}" || true
		bench_run "ideal2-${t%%|*}-$r" --raw-l2 --touch "${opts[@]}" || true
		bench_run "droce2-${t%%|*}-$r" "${opts[@]}" || true
	done
done
load="$load_start $(cut -d' ' -f1 /proc/loadavg) $busy_runs $idle_s"

python3 - "$tmp" "$out" "$doc" "$repeats" "$secs" "$iters" "$load" <<'EOF'
import json, os, statistics, sys

tmp, out, doc = sys.argv[1], sys.argv[2], sys.argv[3]
rounds, secs, iters = int(sys.argv[4]), sys.argv[5], sys.argv[6]
load_start, load_end, busy_runs, idle_s = sys.argv[7].split()

runs = {}
for name in sorted(os.listdir(tmp)):
    if name.endswith(".json") and ".server." not in name:
        with open(os.path.join(tmp, name)) as f:
            runs[name[:-5]] = json.load(f)
with open(os.path.join(out, "targets.json"), "w") as f:
    json.dump(runs, f, indent=1)

def res(kind, target, r):
    """The client's result row of one run (it holds both sides' cycles), or None."""
    run = runs.get(f"{kind}-{target}-{r}")
    return run["results"][0] if run and run["results"] else None

# Most a kind's two figures in a round may differ by (larger over
# smaller) for the machine to count as steady through them.
STEADY = 1.25
# Most a kind may seem faster than one that does less on the same port
# (droce than the ideal endpoint or raw-L2, the ideal endpoint than
# raw-L2) in a round that held one state.
POSSIBLE = 1.05
# Which kinds do at least the work of which.
MORE_WORK = (("droce", "ideal"), ("droce", "raw"), ("ideal", "raw"))
# Most a run's port cycles per unit may exceed its kind's lowest in the
# whole run for the run to count as the machine's fast state.
FAST = 1.75

def port_cost(run, target):
    """The client's cycles in the port's burst calls per byte (64 KiB) or
    per message of one run's result row, or None."""
    c = run.get("cycles", {}).get("client", {}) if run else {}
    return c.get("port_per_byte" if target == "write64k" else "port_per_msg")

def fast(kind, target, r):
    """Both runs of @kind in round @r met the machine's fast state."""
    def lowest(k):
        v = [port_cost(res(k2, target, q), target) for k2 in (k, k + "2")
             for q in range(1, rounds + 1)]
        v = [x for x in v if x]
        return min(v) if v else None
    low = lowest(kind)
    costs = [port_cost(res(k, target, r), target) for k in (kind, kind + "2")]
    return low is not None and all(c and c <= FAST * low for c in costs)

def figure(kind, target, r, key):
    """A kind's figure in round @r, the geometric mean of its two runs
    there, and whether they agree within STEADY (None, False when either
    run is missing or its figure is not positive)."""
    x, y = res(kind, target, r), res(kind + "2", target, r)
    if not x or not y or x[key] <= 0 or y[key] <= 0:
        return None, False
    return (x[key] * y[key]) ** 0.5, max(x[key], y[key]) / min(x[key], y[key]) <= STEADY

def possible(q, key):
    """Whether @q, a kind's figure over that of a kind doing less, can
    come from one state of the machine: a rate at most POSSIBLE, a
    latency (t_typical) at least its inverse."""
    return q >= 1 / POSSIBLE if key == "t_typical" else q <= POSSIBLE

def ratios(target, key, a, b):
    """@a's figure over @b's in each round that has both, and whether the
    round was steady for all three kinds and possible (only those count)."""
    out = []
    for r in range(1, rounds + 1):
        x, y = figure(a, target, r, key)[0], figure(b, target, r, key)[0]
        if x is not None and y is not None:
            out.append((x / y, steady(target, r, key)))
    return out

def cycles(target, side, key):
    """droce's cycles of one side in each round, the mean of its runs
    there: the engine's own count, which the machine's state moves far
    less, so every round counts."""
    out = []
    for r in range(1, rounds + 1):
        v = [x["cycles"][side][key] for x in (res(k, target, r) for k in ("droce", "droce2"))
             if x and "cycles" in x]
        if v:
            out.append((statistics.mean(v), True))
    return out

def fmt(vals, f, unit=""):
    """Each value; those of unsteady rounds in brackets."""
    return "; ".join(format(v, f) + unit if ok else f"[{format(v, f)}{unit}]"
                     for v, ok in vals) if vals else "-"

def med(vals):
    kept = [v for v, ok in vals if ok]
    return statistics.median(kept) if kept else None

def steady(target, r, key):
    """Round @r held the fast state: every run met it, each kind's two
    runs agree, and no kind beat one that does less."""
    figs = {k: figure(k, target, r, key) for k in ("droce", "ideal", "raw")}
    if not all(ok and fast(k, target, r) for k, (_, ok) in figs.items()):
        return False
    return all(possible(figs[a][0] / figs[b][0], key) for a, b in MORE_WORK)

def figures(target, key, f, unit):
    """The three kinds' own figures (median of the rounds steady for all
    three): the machine's state shows in raw-L2's."""
    out = []
    for kind in ("droce", "ideal", "raw"):
        v = [figure(kind, target, r, key)[0] for r in range(1, rounds + 1) if steady(target, r, key)]
        out.append("-" if not v else format(statistics.median(v), f))
    return " / ".join(out) + " " + unit

def steady_rounds(target, key):
    return sum(1 for r in range(1, rounds + 1) if steady(target, r, key))

rows = []
def row(target_text, what, vals, floor, goal, above, f=".2f", unit="", figs="-"):
    m = med(vals)
    met = "-" if m is None else ("**yes**" if (m >= goal if above else m <= goal) else "no")
    # A median that rounds to the goal it misses (or meets) says so.
    if m is not None and format(m, f) == format(goal, f) and m != goal:
        met += f" ({m:.3f})"
    fl = med(floor) if floor else None
    rows.append(f"| {target_text} | {what} | {'-' if m is None else format(m, f) + unit} | "
                f"{fmt(vals, f, unit)} | {'-' if fl is None else format(fl, f) + unit} | "
                f"{figs} | {met} |")

gbps64k = figures("write64k", "bw_average_gbps", ".1f", "Gb/s")
row("64 KiB WRITE bandwidth, >= 0.90 of the ideal endpoint", "droce / ideal",
    ratios("write64k", "bw_average_gbps", "droce", "ideal"), None, 0.90, True, figs=gbps64k)
row("64 KiB WRITE bandwidth, >= 0.50 of raw-L2", "droce / raw-L2",
    ratios("write64k", "bw_average_gbps", "droce", "raw"),
    ratios("write64k", "bw_average_gbps", "ideal", "raw"), 0.50, True, figs=gbps64k)
row("64 B WRITE, one WR per post (`-t 128 -Q 100`), >= 0.50 of raw-L2 pps", "droce / raw-L2",
    ratios("write64", "msg_rate_mpps", "droce", "raw"),
    ratios("write64", "msg_rate_mpps", "ideal", "raw"), 0.50, True,
    figs=figures("write64", "msg_rate_mpps", ".2f", "Mpps"))
row("64 B WRITE, post lists (`-l 32 -t 512 -Q 32`), >= 0.70 of raw-L2 pps", "droce / raw-L2",
    ratios("write64list", "msg_rate_mpps", "droce", "raw"),
    ratios("write64list", "msg_rate_mpps", "ideal", "raw"), 0.70, True,
    figs=figures("write64list", "msg_rate_mpps", ".2f", "Mpps"))
row("8 B WRITE latency, <= 1.3x raw-L2 (typical half round trip)", "droce / raw-L2",
    ratios("lat8", "t_typical", "droce", "raw"), ratios("lat8", "t_typical", "ideal", "raw"),
    1.3, False, unit="x", figs=figures("lat8", "t_typical", ".2f", "us"))
for side in ("client", "server"):
    row(f"64 KiB WRITE, <= 0.3 own cycles per byte ({side})", "droce own cycles/B",
        cycles("write64k", side, "own_per_byte"), None, 0.3, False, f=".3f")
row("64 B WRITE, <= 200 own cycles per message on the requester", "droce own cycles/msg",
    cycles("write64", "client", "own_per_msg"), None, 200, False, f=".0f")

def split(run, target):
    """Where one run's cycles went, per message on the sender (per byte at
    64 KiB), per typical half round trip of both sides in a latency run:
    the whole (wall: the TSC's rate over the rate, or the half round trip
    in TSC cycles), the port's burst calls, the engine's or loop's own,
    and the rest (the application's verbs calls and loop, idle polls; in
    a latency run also the frames' transit and their wait to be seen);
    and the frames the sender's port sent and received per message (both
    sides' sent per half round trip in a latency run: the answers and
    their ACKs). None without the TSC's rate (droce-perf before it
    printed it); no frames without their counts (before the thirty-first
    session)."""
    c = run.get("cycles", {}) if run else {}
    hz = c.get("tsc_hz")
    if not hz:
        return None
    cl, sv = c["client"], c["server"]
    if target == "lat8":
        wall = run["t_typical"] * hz / 1e6
        own = cl["own_per_msg"] + sv["own_per_msg"]
        port = cl["port_per_msg"] + sv["port_per_msg"]
    elif target == "write64k":
        wall = hz / (run["bw_average_gbps"] * 1e9 / 8)
        own, port = cl["own_per_byte"], cl["port_per_byte"]
    else:
        wall = hz / (run["msg_rate_mpps"] * 1e6)
        own, port = cl["own_per_msg"], cl["port_per_msg"]
    parts = {"wall": wall, "port": port, "own": own, "rest": wall - port - own}
    if "tx_frames_per_msg" in cl:
        if target == "lat8":
            parts["out"] = cl["tx_frames_per_msg"] + sv["tx_frames_per_msg"]
            parts["in"] = cl["rx_frames_per_msg"] + sv["rx_frames_per_msg"]
        else:
            parts["out"], parts["in"] = cl["tx_frames_per_msg"], cl["rx_frames_per_msg"]
    return parts

def split_median(kind, target, key):
    """A kind's split, the mean of its two runs in each round steady for
    all three kinds, the median of those rounds; None when none has it."""
    per_round = []
    for r in range(1, rounds + 1):
        if not steady(target, r, key):
            continue
        v = [split(res(k, target, r), target) for k in (kind, kind + "2")]
        v = [x for x in v if x]
        if v:
            parts = set.intersection(*(set(x) for x in v))
            per_round.append({part: statistics.mean(x[part] for x in v) for part in parts})
    if not per_round:
        return None
    parts = set.intersection(*(set(x) for x in per_round))
    return {part: statistics.median(x[part] for x in per_round) for part in parts}

split_rows = []
for target, key, text, per, f in (
        ("write64", "msg_rate_mpps", "64 B WRITE, one WR per post", "message, sender", ".0f"),
        ("write64list", "msg_rate_mpps", "64 B WRITE, post lists", "message, sender", ".0f"),
        ("lat8", "t_typical", "8 B WRITE latency", "half round trip, both sides", ".0f"),
        ("write64k", "bw_average_gbps", "64 KiB WRITE", "byte, sender", ".3f")):
    kinds = [split_median(k, target, key) for k in ("droce", "ideal", "raw")]
    if not any(kinds):
        continue
    cells = [" / ".join("-" if k is None else format(k[field], f) for k in kinds)
             for field in ("wall", "port", "own", "rest")]
    cells.append(" / ".join(f"{k['out']:.2f} + {k['in']:.3f}" if k and "out" in k else "-"
                            for k in kinds))
    split_rows.append(f"| {text} | {per} | " + " | ".join(cells) + " |")

steady_text = ", ".join(f"{t} {steady_rounds(t, k)}" for t, k in (
    ("write64k", "bw_average_gbps"), ("write64", "msg_rate_mpps"),
    ("write64list", "msg_rate_mpps"), ("lat8", "t_typical")))
lines = [
    f"`tests/bench/targets.sh -r {rounds} -d {secs} -n {iters}`: each round runs every",
    "target twice as droce, the ideal endpoint and raw-L2, in mirrored order",
    "(droce, ideal, raw, raw, ideal, droce), one right after the other, over",
    "one memif link (IB MTU 4096); each kind's figure is the geometric mean of",
    "its two runs, and a ratio is taken within a round only. Where any kind's two",
    f"runs differ by more than {round((STEADY - 1) * 100)} %, or a kind beats one that does less (droce",
    f"the ideal endpoint or raw-L2, the ideal endpoint raw-L2) by more than {round((POSSIBLE - 1) * 100)} %,",
    "the machine changed state during the round; where a run's cycles in the",
    f"port's burst calls (per byte at 64 KiB, else per message) are more than {FAST}",
    "times its kind's lowest of the whole run, the run met the machine's slow",
    "state. Such rounds' ratios are in brackets and left out of the median. The ideal",
    "endpoint's own ratio to raw-L2 in the same rounds (median) is the most a",
    "RoCE endpoint can reach on this port.",
    f"Rounds steady and in the fast state for all three kinds, of {rounds}: {steady_text}.",
    f"Load average {load_start} at the start, {load_end} at the end; {busy_runs} of",
    f"{rounds * 24} runs found no idle CPUs within {idle_s} s and ran anyway.",
    "",
    "| target | figure | median | each round | ideal endpoint / raw-L2 | droce / ideal / raw-L2 (medians) | met? |",
    "|---|---|---|---|---|---|---|",
] + rows
if split_rows:
    lines += [
        "",
        "Where the cycles went, droce / ideal endpoint / raw-L2 (medians of the",
        "same steady rounds, each the mean of a kind's two runs): the whole is the",
        "TSC's cycles per message at the measured rate (per byte at 64 KiB, per",
        "typical half round trip in the latency run); the port's are those inside",
        "its burst calls, own the rest of the busy loop (droce's engine, the",
        "baselines' own loop), and the rest is spent outside both: the",
        "application's verbs calls and loop and idle polls, and in the latency run",
        "the frames' transit through the port and their wait to be seen. A",
        "bandwidth figure is the sender's; a latency figure adds both sides' busy",
        "cycles of a message. The frames are those the sender's port sent + received",
        "per message (in the latency run, both sides' per half round trip): what",
        "the cycles paid for beyond the messages' own frames, such as ACKs.",
        "",
        "| target | cycles per | whole | in the port's burst calls | own | rest | frames out + in |",
        "|---|---|---|---|---|---|---|",
    ] + split_rows
missing = sorted(f"{k}-{t}-{r}" for k in ("droce", "ideal", "raw", "droce2", "ideal2", "raw2")
                 for t in ("write64k", "write64", "write64list", "lat8")
                 for r in range(1, rounds + 1) if f"{k}-{t}-{r}" not in runs)
if missing:
    lines += ["", "Runs that failed (left out): " + ", ".join(missing) + "."]
table = "\n".join(lines) + "\n"
print(table)
if doc:
    text = open(doc).read()
    begin, end = "<!-- targets:begin -->\n", "<!-- targets:end -->"
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < b:
        sys.exit(f"targets: {doc} has no {begin.strip()} ... {end} lines")
    with open(doc, "w") as f:
        f.write(text[:b + len(begin)] + table + text[e:])
EOF
