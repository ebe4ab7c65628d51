#!/usr/bin/env bash
# Where droce's own cycles go, stage by stage, for docs/benchmarks.md:
# droce-perf runs over one memif link with DROCE_STAGE_CYCLES set, both
# sides' engine cycles per message split into rx, icrc, validity,
# responder, copy, completion, requester, tx and the rest
# (lib/transport/droce_stage.h says what each covers).
#
# Usage: stages.sh [-d SECONDS] [-n ITERATIONS] [-r REPEATS] [-i IDLE_S] BUILD_DIR [POINT...]
#   POINT  TEST:SIZE, a bandwidth run (e.g. write:64), or the name of one
#          of issue 12's targets as targets.sh runs them: write64k,
#          write64, write64list, lat8 (bench_targets in bench_env.sh)
#          (default: write:64 write:65536 send:64 read:64)
#   -d  seconds per bandwidth run (default 2)   -n  latency iterations
#   (default 20000)   -r  runs of each, the lowest own cycles kept
#   (default 3)   -i  seconds to wait for idle CPUs (default 20)
# Prints a markdown table: per point and side, own cycles per message and
# the stages, from the run with the lowest own cycles. The TSC reads at
# each stage's end cost some 20 cycles each, a few per message: compare
# stages with each other, and own cycles with runs without them. Not
# part of CI.
set -euo pipefail

# shellcheck source=tests/bench/bench_env.sh
source "$(dirname "$0")/bench_env.sh"
usage="usage: stages.sh [-d SECONDS] [-n ITERATIONS] [-r REPEATS] [-i IDLE_S] BUILD_DIR [POINT...]"
iters=20000
bench_opts "$usage" "$@"
set -- "${bench_args[@]}"
build=${1:?$usage}
shift
points=("$@")
(( ${#points[@]} > 0 )) || points=(write:64 write:65536 send:64 read:64)

bench_setup stages "$build"
bench_targets
export DROCE_STAGE_CYCLES=1

# opts POINT: the droce-perf options of a point, in $point_opts.
opts() {
	local t
	for t in "${bench_target_list[@]}"; do
		if [[ ${t%%|*} == "$1" ]]; then
			read -r -a point_opts <<<"${t#*|}"
			return
		fi
	done
	[[ $1 == *:* ]] || { echo "stages: $1: neither TEST:SIZE nor a target's name" >&2; exit 2; }
	point_opts=(--test "${1%%:*}" --mode bw -s "${1##*:}" -D "$secs" -m 4096)
}

# Every point is checked before the first run.
for p in "${points[@]}"; do
	opts "$p"
done
for (( r = 1; r <= repeats; r++ )); do
	for p in "${points[@]}"; do
		opts "$p"
		bench_run "${p/:/-}-$r" "${point_opts[@]}" || true
	done
done

python3 - "$tmp" "$repeats" "${points[@]}" <<'PY'
import json, os, sys

tmp, repeats = sys.argv[1], int(sys.argv[2])
points = sys.argv[3:]
stages = None
rows = []
# A target's name, or TEST:SIZE, as the table shows it.
TARGETS = {"write64k": "WRITE 64 KiB", "write64": "WRITE 64 B, one WR per post",
           "write64list": "WRITE 64 B, post lists", "lat8": "WRITE 8 B latency"}

def label(p):
    if p in TARGETS:
        return TARGETS[p]
    test, size = p.split(":")
    size = f"{int(size) // 1024} KiB" if int(size) >= 1024 else f"{size} B"
    return f"{test.upper()} {size}"

for p in points:
    for side in ("client", "server"):
        best = None
        for r in range(1, repeats + 1):
            path = os.path.join(tmp, f"{p.replace(':', '-', 1)}-{r}.json")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                res = json.load(f)["results"]
            if not res or "cycles" not in res[0]:
                continue
            s = res[0]["cycles"][side]
            if "stages_per_msg" in s and (best is None or s["own_per_msg"] < best["own_per_msg"]):
                best = s
        if best is None:
            continue
        stages = stages or list(best["stages_per_msg"])
        rows.append((label(p), side, best))
if not rows:
    sys.exit("stages: no run gave stage cycles")
print("| run | side | own/msg | " + " | ".join(stages) + " |")
print("|---|---|---|" + "---|" * len(stages))
for name, side, s in rows:
    print(f"| {name} | {side} | {s['own_per_msg']:.0f} | " +
          " | ".join(f"{s['stages_per_msg'][k]:.0f}" for k in stages) + " |")
PY
