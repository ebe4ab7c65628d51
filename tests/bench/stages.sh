#!/usr/bin/env bash
# Where droce's own cycles go, stage by stage, for docs/benchmarks.md:
# droce-perf bandwidth runs over one memif link with DROCE_STAGE_CYCLES
# set, both sides' engine cycles per message split into rx, icrc,
# validity, responder, copy, completion, requester, tx and the rest
# (lib/transport/droce_stage.h says what each covers).
#
# Usage: stages.sh [-d SECONDS] [-r REPEATS] [-i IDLE_S] BUILD_DIR [TEST:SIZE...]
#   TEST:SIZE  e.g. write:64 (default: write:64 write:65536 send:64 read:64)
#   -d  seconds per run (default 2)   -r  runs of each, the lowest own
#   cycles kept (default 3)           -i  seconds to wait for idle CPUs (default 20)
# Prints a markdown table: per point and side, own cycles per message and
# the stages, from the run with the lowest own cycles. Not part of CI.
set -euo pipefail

# shellcheck source=tests/bench/bench_env.sh
source "$(dirname "$0")/bench_env.sh"
usage="usage: stages.sh [-d SECONDS] [-r REPEATS] [-i IDLE_S] BUILD_DIR [TEST:SIZE...]"
bench_opts "$usage" "$@"
set -- "${bench_args[@]}"
build=${1:?$usage}
shift
points=("$@")
(( ${#points[@]} > 0 )) || points=(write:64 write:65536 send:64 read:64)

bench_setup stages "$build"
export DROCE_STAGE_CYCLES=1

for (( r = 1; r <= repeats; r++ )); do
	for p in "${points[@]}"; do
		bench_run "${p%%:*}-${p##*:}-$r" --test "${p%%:*}" --mode bw -s "${p##*:}" -D "$secs" \
			-m 4096 || true
	done
done

python3 - "$tmp" "$repeats" "${points[@]}" <<'PY'
import json, os, sys

tmp, repeats = sys.argv[1], int(sys.argv[2])
points = sys.argv[3:]
stages = None
rows = []
for p in points:
    test, size = p.split(":")
    for side in ("client", "server"):
        best = None
        for r in range(1, repeats + 1):
            path = os.path.join(tmp, f"{test}-{size}-{r}.json")
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
        rows.append((test.upper(), size, side, best))
if not rows:
    sys.exit("stages: no run gave stage cycles")
print("| test | size | side | own/msg | " + " | ".join(stages) + " |")
print("|---|---|---|---|" + "---|" * len(stages))
for test, size, side, s in rows:
    size = f"{int(size) // 1024} KiB" if int(size) >= 1024 else f"{size} B"
    print(f"| {test} | {size} | {side} | {s['own_per_msg']:.0f} | " +
          " | ".join(f"{s['stages_per_msg'][k]:.0f}" for k in stages) + " |")
PY
