#!/usr/bin/env bash
# Run a libFuzzer target a fixed number of times (never for a fixed time)
# from its seed corpus, then once on every input in regressions/. New
# corpus entries go to a scratch directory, not into the tree; a crashing
# input is kept as ./<target>-crash-<sha1> in the working directory.
# A crash exits 1: libFuzzer's own code for it is 77, which meson (and
# so scripts/test.sh) takes for a skipped test.
# Usage: run_fuzz.sh BINARY SOURCE_DIR RUNS [NAME]
#   NAME picks the target's seed corpus and regressions: SOURCE_DIR/corpus
#   and SOURCE_DIR/regressions without it (fuzz_rx's), else
#   SOURCE_DIR/corpus-NAME and SOURCE_DIR/regressions-NAME.
set -euo pipefail
bin=$1
src=$2
runs=$3
suffix=${4:+-$4}
name=$(basename "$bin")
work=$(mktemp -d "/tmp/droce-$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

"$bin" -runs="$runs" -seed=1 -max_len=4096 -timeout=30 -error_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$PWD/$name-" "$work" "$src/corpus$suffix"
shopt -s nullglob
regressions=("$src"/regressions"$suffix"/*)
if (( ${#regressions[@]} > 0 )); then
	"$bin" -timeout=30 -error_exitcode=1 "${regressions[@]}"
fi
