#!/usr/bin/env bash
# Plot cc_bench --csv output: each QP's goodput over time (two senders), in 10 ms bins
# (one 64 KiB WRITE completes in a millisecond at 500 Mb/s, so the raw
# per-millisecond samples are all or nothing), DCQCN off above, on below.
# Usage: plot.sh CSV PNG
set -euo pipefail
csv=${1:?usage: plot.sh CSV PNG}
png=${2:?usage: plot.sh CSV PNG}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run,ms,qp0,qp1,... -> one file per run: time in ms, then each QP's mean
# goodput over the 10 ms bin.
awk -F, -v dir="$tmp" '
	{ bin = int(($2 - 1) / 10); key = $1 SUBSEP bin; n[key]++; runs[$1] = 1
	  if (bin > last[$1]) last[$1] = bin
	  for (i = 3; i <= NF; i++) sum[key, i] += $i; nf = NF }
	END {
		for (r in runs)
			for (b = 0; b <= last[r]; b++) {
				key = r SUBSEP b
				if (n[key] == 0) continue
				line = (b + 1) * 10
				for (i = 3; i <= nf; i++) line = line " " sum[key, i] / n[key]
				print line > (dir "/" r ".dat")
			}
	}' "$csv"
nqp=$(head -1 "$csv" | awk -F, '{ print NF - 2 }')
# The first half of the QPs are sender 0's, the rest sender 1's: solid
# and dashed lines.
plots() {
	local f=$1 s="" i q half=$((nqp / 2))
	for ((i = 2; i <= nqp + 1; i++)); do
		q=$((i - 2))
		s+="${s:+, }'$f' using 1:$i with lines dt $((q / half + 1)) title 'sender $((q / half)) QP $((q % half))'"
	done
	echo "$s"
}
gnuplot <<GP
set terminal png size 900,700
set output '$png'
set multiplot layout 2,1
set xlabel 'ms'
set ylabel 'Mb/s'
set yrange [0:*]
set title 'DCQCN off: goodput per QP through the bottleneck (10 ms bins)'
plot $(plots "$tmp/off.dat")
set title 'DCQCN on'
plot $(plots "$tmp/on.dat")
unset multiplot
GP
