#!/usr/bin/env bash
# A profile-guided build: build DIR instrumented (meson's b_pgo=generate),
# run droce-perf over a memif link through the common RC operations, then
# build DIR again from that profile (b_pgo=use). GCC then lays out the hot
# paths straight, groups the hot functions and inlines by the counts: a
# latency round trip's code no longer spreads over more cache lines than
# the CPU's instruction cache holds (docs/benchmarks.md, "Thirtieth
# session"). Code the training does not run (UD, XRC, SRQs, memory
# windows, ...) is compiled as without a profile
# (-fprofile-partial-training), not for size.
#
# The training covers WRITE, SEND, READ and atomics, bandwidth at 64 B,
# 4 KiB and 64 KiB and latency at 8 B, one QP and post lists; and
# droce-perf's own baselines (--raw-l2, --raw-l2 --touch) alike, so that
# droce's comparisons with them stay fair. It needs what the benchmarks
# need: root, hugepages (scripts/hugepages.sh), two CPUs.
#
# Usage: build-pgo.sh [-q] DIR [meson options...]
#   -q  a short training (seconds, for CI): the profile is thinner
# The profile stays in DIR: ninja rebuilds with it, and after a change
# of the sources the functions changed lose their part of it (GCC warns);
# run this again then.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
if [[ ${1:-} == -q ]]; then
	quick=true
	shift
fi
dir=${1:?usage: build-pgo.sh [-q] DIR [meson options...]}
shift
# The flags of both phases (the first phase ignores those for the second).
pgo_args="['-fprofile-partial-training', '-Wno-missing-profile']"

setup=(meson setup "$dir" "$@" -Db_pgo=generate "-Dc_args=$pgo_args")
[[ -f $dir/build.ninja ]] && setup+=(--reconfigure)
"${setup[@]}" > /dev/null
# A profile of an earlier build would be merged into this one's.
find "$dir" -name '*.gcda' -delete
ninja -C "$dir"

# shellcheck source=tests/bench/bench_env.sh
source tests/bench/bench_env.sh
# Training, not measuring: no wait for idle CPUs.
idle_tries=0
bench_pairs build-pgo "$dir"
secs=2 iters=20000
$quick && secs=1 iters=2000

# train NAME OPTIONS...: one droce-perf pair over memif (bench_run); a
# run that fails stops the build.
train() {
	bench_run "$@" || { echo "build-pgo: the training run $1 failed" >&2; exit 1; }
}

for test in write send read atomic; do
	sizes=(64 4096 65536)
	[[ $test == atomic ]] && sizes=(8)
	for size in "${sizes[@]}"; do
		train "$test-bw-$size" --test "$test" --mode bw -s "$size" -D "$secs" -m 4096
	done
	train "$test-lat" --test "$test" --mode lat -s 8 -n "$iters" -m 4096
done
train write-bw-64-window --test write --mode bw -s 64 -D "$secs" -m 4096 -t 128 -Q 100
train write-bw-64-lists --test write --mode bw -s 64 -D "$secs" -m 4096 -l 32 -t 512 -Q 32
for base in "--raw-l2" "--raw-l2 --touch"; do
	read -r -a b <<<"$base"
	for size in 64 65536; do
		train "write-bw-$size${base// /}" --test write --mode bw -s "$size" -D "$secs" -m 4096 "${b[@]}"
	done
	train "write-lat${base// /}" --test write --mode lat -s 8 -n "$iters" -m 4096 "${b[@]}"
done

# No profile would leave the second build as the first but silent.
[[ -n $(find "$dir" -name '*.gcda' -print -quit) ]] ||
	{ echo "build-pgo: the training left no profile in $dir" >&2; exit 1; }
meson configure "$dir" -Db_pgo=use > /dev/null
ninja -C "$dir"
# What was built from the profile runs.
train check-write-lat --test write --mode lat -s 8 -n "$iters" -m 4096
echo "build-pgo: $dir is built from its profile"
