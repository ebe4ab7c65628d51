#!/usr/bin/env bash
# droce beside its two yardsticks, for docs/benchmarks.md: RDMA WRITE,
# SEND and READ bandwidth at 64 B, 4 KiB and 64 KiB (IB MTU 4096), each
# run as droce, as the ideal RoCE endpoint (--raw-l2 --touch: CRC32 and
# one copy each side) and as plain raw-L2 (the same frames, payload
# untouched), the three alternating, over one memif link between two
# droce-perf processes; with both sides' cycles per message and per byte.
#
# Usage: compare.sh [-d SECONDS] [-r REPEATS] [-i IDLE_S] BUILD_DIR OUT_DIR [DOC]
#   -d  seconds per run (-D; default 2, of which the middle half is measured)
#   -r  runs of each (default 3); per row the best is kept: the highest
#       bandwidth, and the lowest cycles of each side (noise only adds);
#       and droce's ratios to the other two in each round, from runs
#       seconds apart (the machine's state may change between rounds)
#   -i  seconds each run waits at most for idle CPUs (default 20; 0: none)
# Writes OUT_DIR/compare.json (every run's --json output, both sides),
# OUT_DIR/compare.csv (one line per test and size) and OUT_DIR/compare.png
# (gnuplot); with DOC (docs/benchmarks.md), also the tables between its
# "<!-- compare:begin -->" and "<!-- compare:end -->" lines. Not part of
# CI: 27 pairs per repeat, about 2 minutes each repeat on an idle machine.
set -euo pipefail

# shellcheck source=tests/bench/bench_env.sh
source "$(dirname "$0")/bench_env.sh"
usage="usage: compare.sh [-d SECONDS] [-r REPEATS] [-i IDLE_S] BUILD_DIR OUT_DIR [DOC]"
bench_opts "$usage" "$@"
set -- "${bench_args[@]}"
build=${1:?$usage}
out=${2:?$usage}
doc=${3:-}
[[ -z $doc || -f $doc ]] || { echo "compare: $doc: no such file" >&2; exit 1; }

bench_setup compare "$build"
mkdir -p "$out"

# The three kinds of a point, one right after the other, so that whatever
# else the machine does falls on all three alike.
start=$(date +%s)
load_start=$(cut -d' ' -f1 /proc/loadavg)
for (( r = 1; r <= repeats; r++ )); do
	for test in write send read; do
		for size in 64 4096 65536; do
			opts=(--test "$test" --mode bw -s "$size" -D "$secs" -m 4096)
			bench_run "droce-$test-$size-$r" "${opts[@]}" || true
			bench_run "ideal-$test-$size-$r" --raw-l2 --touch "${opts[@]}" || true
			bench_run "raw-$test-$size-$r" --raw-l2 "${opts[@]}" || true
		done
	done
done
echo "compare: $(( $(date +%s) - start )) s of runs, $repeats repeat(s) of $secs s"
load="$load_start $(cut -d' ' -f1 /proc/loadavg) $busy_runs $idle_s"

python3 - "$tmp" "$out" "$doc" "$repeats" "$secs" "$load" <<'EOF'
import csv, json, math, os, sys

tmp, out, doc, repeats, secs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
load_start, load_end, busy_runs, idle_s = sys.argv[6].split()
kinds = ("droce", "ideal", "raw")
tests = ("write", "send", "read")
sizes = (64, 4096, 65536)
sides = ("client", "server")

runs = {}
for name in sorted(os.listdir(tmp)):
    if name.endswith(".json") and ".server." not in name:
        with open(os.path.join(tmp, name)) as f:
            runs[name[:-5]] = json.load(f)
with open(os.path.join(out, "compare.json"), "w") as f:
    json.dump(runs, f, indent=1)

def result(kind, test, size, r):
    """The result row of one run (the client's: it holds both sides' cycles), or None."""
    run = runs.get(f"{kind}-{test}-{size}-{r}")
    return run["results"][0] if run and run["results"] else None

def results(kind, test, size):
    """The result rows of every run of a point."""
    return [x for x in (result(kind, test, size, r) for r in range(1, repeats + 1)) if x]

def round_ratios(test, size, key, base):
    """droce's rate over @base's, in each round that has both: the three kinds
    of a round run seconds apart, and the machine may change its state
    (memif's copy 3x cheaper or dearer) between rounds, which best-of
    ratios from different rounds would mix."""
    out = []
    for r in range(1, repeats + 1):
        a, b = result("droce", test, size, r), result(base, test, size, r)
        if a and b and b[key] > 0:
            out.append(f"{100 * a[key] / b[key]:.0f} %")
    return "; ".join(out) if out else "-"

nan = float("nan")
rows = []
for test in tests:
    for size in sizes:
        row = {"test": test, "bytes": size}
        rate_key = "msg_rate_mpps" if size < 4096 else "bw_average_gbps"
        row["droce_ideal_rounds"] = round_ratios(test, size, rate_key, "ideal")
        row["droce_raw_rounds"] = round_ratios(test, size, rate_key, "raw")
        for kind in kinds:
            rs = results(kind, test, size)
            row[f"{kind}_runs"] = len(rs)
            row[f"{kind}_gbps"] = max((r["bw_average_gbps"] for r in rs), default=nan)
            row[f"{kind}_mpps"] = max((r["msg_rate_mpps"] for r in rs), default=nan)
            for side in sides:
                for key in ("own_per_msg", "port_per_msg", "own_per_byte", "port_per_byte"):
                    row[f"{kind}_{side}_{key}"] = min((r["cycles"][side][key] for r in rs), default=nan)
        rows.append(row)
with open(os.path.join(out, "compare.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
# gnuplot: one line per point, x = its index
with open(os.path.join(tmp, "plot.dat"), "w") as f:
    for i, r in enumerate(rows):
        f.write(f'{i} "{r["test"].upper()} {r["bytes"] // 1024 or r["bytes"]}{"K" if r["bytes"] >= 1024 else ""}"')
        for kind in kinds:
            f.write(f' {r[kind + "_gbps"]}')
        for kind in kinds:
            for side in sides:
                f.write(f' {r[kind + "_" + side + "_own_per_byte"]}')
        f.write("\n")

def num(v, fmt):
    return "-" if math.isnan(v) else format(v, fmt)

def ratio(a, b):
    return "-" if math.isnan(a) or math.isnan(b) or b <= 0 else f"{100 * a / b:.0f} %"

def pair(r, kind, key, fmt):
    return " / ".join(num(r[f"{kind}_{side}_{key}"], fmt) for side in sides)

def size_name(b):
    return f"{b // 1024} KiB" if b >= 1024 else f"{b} B"

lines = [
    f"`tests/bench/compare.sh -r {repeats} -d {secs}`: RDMA bandwidth over one memif link,",
    "IB MTU 4096, best of the runs (highest rate; lowest cycles); each round's",
    "ratios too, from runs made seconds apart. ideal: the same frames as an",
    "ideal RoCE endpoint (`--raw-l2 --touch`); raw-L2: the same frames,",
    "payload untouched. The machine's load average was",
    f"{load_start} at the start and {load_end} at the end; {busy_runs} of",
    f"{repeats * len(tests) * len(sizes) * len(kinds)} runs found no idle CPUs within {idle_s} s and ran anyway.",
    "",
    "| test | size | droce | ideal | raw-L2 | droce/ideal | droce/raw-L2 | droce/ideal, each round | droce/raw-L2, each round |",
    "|---|---|---|---|---|---|---|---|---|",
]
for r in rows:
    unit, key, fmt = ("Mpps", "mpps", ".2f") if r["bytes"] < 4096 else ("Gb/s", "gbps", ".1f")
    vals = [r[f"{k}_{key}"] for k in kinds]
    lines.append(f"| {r['test'].upper()} | {size_name(r['bytes'])} | "
                 + " | ".join(f"{num(v, fmt)} {unit}" for v in vals)
                 + f" | {ratio(vals[0], vals[1])} | {ratio(vals[0], vals[2])}"
                 + f" | {r['droce_ideal_rounds']} | {r['droce_raw_rounds']} |")
lines += [
    "",
    "Cycles, client / server: each side's busy cycles outside the port's",
    "burst calls (own) and inside them (port), per message and per byte of",
    "the test.",
    "",
    "| test | size | droce own/msg | droce port/msg | ideal own/msg | raw-L2 own/msg | droce own/B | ideal own/B | raw-L2 own/B |",
    "|---|---|---|---|---|---|---|---|---|",
]
for r in rows:
    lines.append(f"| {r['test'].upper()} | {size_name(r['bytes'])} | "
                 f"{pair(r, 'droce', 'own_per_msg', '.0f')} | {pair(r, 'droce', 'port_per_msg', '.0f')} | "
                 f"{pair(r, 'ideal', 'own_per_msg', '.0f')} | {pair(r, 'raw', 'own_per_msg', '.0f')} | "
                 f"{pair(r, 'droce', 'own_per_byte', '.3f')} | {pair(r, 'ideal', 'own_per_byte', '.3f')} | "
                 f"{pair(r, 'raw', 'own_per_byte', '.3f')} |")
missing = [f"{r['test']} {r['bytes']} {k}" for r in rows for k in kinds if r[f"{k}_runs"] < repeats]
if missing:
    lines += ["", "Runs that failed (left out): " + ", ".join(missing) + "."]
table = "\n".join(lines) + "\n"
print(table)
if doc:
    text = open(doc).read()
    begin, end = "<!-- compare:begin -->\n", "<!-- compare:end -->"
    b, e = text.find(begin), text.find(end)
    if b < 0 or e < b:
        sys.exit(f"compare: {doc} has no {begin.strip()} ... {end} lines")
    with open(doc, "w") as f:
        f.write(text[:b + len(begin)] + table + text[e:])
EOF

gnuplot <<EOF
set terminal pngcairo size 1500,500 font ",10"
set output "$out/compare.png"
set multiplot layout 1,2 title "droce beside the ideal RoCE endpoint and raw-L2 (same frames), memif, IB MTU 4096"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -45
set grid ytics
set logscale y 10
set key top left
set title "bandwidth (Gb/s of message bytes)"
plot "$tmp/plot.dat" using 3:xtic(2) title "droce", "" using 4 title "ideal", "" using 5 title "raw-L2"
set title "own cycles per byte (busy outside the port's burst calls)"
set key top right
plot "$tmp/plot.dat" using 6:xtic(2) title "droce client", "" using 7 title "droce server", \
     "" using 8 title "ideal client", "" using 9 title "ideal server", \
     "" using 10 title "raw-L2 client", "" using 11 title "raw-L2 server"
unset multiplot
EOF
echo "compare: $out/compare.json, $out/compare.csv, $out/compare.png${doc:+, $doc}"
