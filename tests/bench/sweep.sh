#!/usr/bin/env bash
# The benchmark sweep behind docs/benchmarks.md: RDMA WRITE bandwidth,
# message rate and latency from 64 B to 1 MiB at IB MTU 1024 and 4096,
# each beside the ideal RoCE endpoint (--raw-l2 --touch) and plain
# --raw-l2 (the same frames as plain Ethernet on the same port), over one
# memif link between two droce-perf processes.
#
# Usage: sweep.sh [-d SECONDS] [-n ITERS] [-r REPEATS] BUILD_DIR OUT_DIR
#   -d  seconds per bandwidth point (-D; default 0.6, of which the middle
#       half is measured)
#   -n  iterations per latency point (default 2000)
#   -r  runs of each test (default 2); the best of them is kept per size
#       (highest bandwidth and message rate, lowest typical latency)
#   -i  seconds each run waits at most for idle CPUs (default 20)
# Writes OUT_DIR/sweep.json (every run's --json output), OUT_DIR/sweep.csv
# (one line per MTU and size, the best of the runs) and OUT_DIR/sweep.png
# (gnuplot). Not part of CI: it takes about 12 minutes.
#
# Each run waits (up to 20 s) until the CPUs are idle (bench_env.sh), and
# each test runs -r times. Progress goes to stderr.
set -euo pipefail

# shellcheck source=tests/bench/bench_env.sh
source "$(dirname "$0")/bench_env.sh"
usage="usage: sweep.sh [-d SECONDS] [-n ITERS] [-r REPEATS] [-i IDLE_S] BUILD_DIR OUT_DIR"
secs=0.6
repeats=2
bench_opts "$usage" "$@"
set -- "${bench_args[@]}"
build=${1:?$usage}
out=${2:?$usage}
bench_setup sweep "$build"
mkdir -p "$out"

# One pair per point, so a burst of other work on the machine spoils one
# point of one run, not a whole curve.
start=$(date +%s)
sizes="64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576"
for (( r = 1; r <= repeats; r++ )); do
	for mtu in 1024 4096; do
		for size in $sizes; do
			bench_run "droce-bw-$mtu-$size-$r" --test write --mode bw -s "$size" -D "$secs" -m "$mtu" || true
			bench_run "ideal-bw-$mtu-$size-$r" --raw-l2 --touch --test write --mode bw -s "$size" -D "$secs" -m "$mtu" || true
			bench_run "raw-bw-$mtu-$size-$r" --raw-l2 --test write --mode bw -s "$size" -D "$secs" -m "$mtu" || true
		done
		# 8 B too: the latency target is stated for it
		for size in 8 $sizes; do
			bench_run "droce-lat-$mtu-$size-$r" --test write --mode lat -s "$size" -n "$iters" -m "$mtu" || true
			bench_run "ideal-lat-$mtu-$size-$r" --raw-l2 --touch --test write --mode lat -s "$size" -n "$iters" -m "$mtu" || true
			bench_run "raw-lat-$mtu-$size-$r" --raw-l2 --test write --mode lat -s "$size" -n "$iters" -m "$mtu" || true
		done
	done
done
echo "sweep: $(( $(date +%s) - start )) s of runs"

# One JSON document of everything, and the CSV the plot reads.
python3 - "$tmp" "$out" <<'EOF'
import csv, json, os, sys

tmp, out = sys.argv[1], sys.argv[2]
runs = {}
for name in sorted(os.listdir(tmp)):
    if name.endswith(".json") and ".server." not in name:
        with open(os.path.join(tmp, name)) as f:
            runs[name[:-5]] = json.load(f)
with open(os.path.join(out, "sweep.json"), "w") as f:
    json.dump(runs, f, indent=1)

def best(test, key, pick):
    """Per size, the result of the runs of test whose key pick() prefers."""
    out = {}
    for name, run in runs.items():
        if not name.startswith(test + "-"):
            continue
        for r in run["results"]:
            if r["bytes"] not in out or pick(r[key], out[r["bytes"]][key]) == r[key]:
                out[r["bytes"]] = r
    return out

rows = []
for mtu in (1024, 4096):
    dbw, rbw = best(f"droce-bw-{mtu}", "bw_average", max), best(f"raw-bw-{mtu}", "bw_average", max)
    dlat, rlat = best(f"droce-lat-{mtu}", "t_typical", min), best(f"raw-lat-{mtu}", "t_typical", min)
    ibw, ilat = best(f"ideal-bw-{mtu}", "bw_average", max), best(f"ideal-lat-{mtu}", "t_typical", min)
    # 8 B for the latency target; the sweep itself is 64 B .. 1 MiB
    size = 8
    def val(d, key):
        # a size every run of a test failed at has no figure (gnuplot skips NaN)
        return d[size][key] if size in d else float("nan")
    while size <= 1 << 20:
        rows.append({
            "mtu": mtu, "bytes": size,
            "droce_gbps": val(dbw, "bw_average_gbps"), "raw_gbps": val(rbw, "bw_average_gbps"),
            "droce_mpps": val(dbw, "msg_rate_mpps"), "raw_mpps": val(rbw, "msg_rate_mpps"),
            "raw_frame_mpps": val(rbw, "frame_rate_mpps"),
            "droce_lat_us": val(dlat, "t_typical"), "raw_lat_us": val(rlat, "t_typical"),
            "ideal_gbps": val(ibw, "bw_average_gbps"), "ideal_mpps": val(ibw, "msg_rate_mpps"),
            "ideal_lat_us": val(ilat, "t_typical"),
        })
        size = 64 if size == 8 else size * 2
with open(os.path.join(out, "sweep.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
# The same, split by MTU, for gnuplot.
for mtu in (1024, 4096):
    with open(os.path.join(tmp, f"plot-{mtu}.dat"), "w") as f:
        for r in rows:
            if r["mtu"] == mtu and r["bytes"] >= 64:
                f.write(" ".join(str(r[k]) for k in r) + "\n")
EOF

gnuplot <<EOF
set terminal pngcairo size 1500,460 font ",10"
set output "$out/sweep.png"
set multiplot layout 1,3 title "droce RDMA WRITE vs the ideal endpoint and raw-L2 (same frames), memif, two processes on two cores"
set logscale x 2
set format x "%.0b%B"
set xlabel "message size"
set grid
set key top left
set title "bandwidth (Gb/s of message bytes)"
plot "$tmp/plot-4096.dat" using 2:3 with linespoints title "droce, MTU 4096", \
     "$tmp/plot-4096.dat" using 2:10 with linespoints dashtype 3 title "ideal, MTU 4096", \
     "$tmp/plot-4096.dat" using 2:4 with linespoints dashtype 2 title "raw-L2, MTU 4096", \
     "$tmp/plot-1024.dat" using 2:3 with linespoints title "droce, MTU 1024", \
     "$tmp/plot-1024.dat" using 2:10 with linespoints dashtype 3 title "ideal, MTU 1024", \
     "$tmp/plot-1024.dat" using 2:4 with linespoints dashtype 2 title "raw-L2, MTU 1024"
set key top right
set title "message rate (Mpps)"
set logscale y 10
plot "$tmp/plot-4096.dat" using 2:5 with linespoints title "droce, MTU 4096", \
     "$tmp/plot-4096.dat" using 2:11 with linespoints dashtype 3 title "ideal, MTU 4096", \
     "$tmp/plot-4096.dat" using 2:6 with linespoints dashtype 2 title "raw-L2, MTU 4096", \
     "$tmp/plot-1024.dat" using 2:5 with linespoints title "droce, MTU 1024", \
     "$tmp/plot-1024.dat" using 2:11 with linespoints dashtype 3 title "ideal, MTU 1024", \
     "$tmp/plot-1024.dat" using 2:6 with linespoints dashtype 2 title "raw-L2, MTU 1024"
set key top left
set title "latency, half round trip (typical, us)"
plot "$tmp/plot-4096.dat" using 2:8 with linespoints title "droce, MTU 4096", \
     "$tmp/plot-4096.dat" using 2:12 with linespoints dashtype 3 title "ideal, MTU 4096", \
     "$tmp/plot-4096.dat" using 2:9 with linespoints dashtype 2 title "raw-L2, MTU 4096", \
     "$tmp/plot-1024.dat" using 2:8 with linespoints title "droce, MTU 1024", \
     "$tmp/plot-1024.dat" using 2:12 with linespoints dashtype 3 title "ideal, MTU 1024", \
     "$tmp/plot-1024.dat" using 2:9 with linespoints dashtype 2 title "raw-L2, MTU 1024"
unset multiplot
EOF
echo "sweep: $out/sweep.json, $out/sweep.csv, $out/sweep.png"
