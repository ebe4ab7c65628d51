#!/usr/bin/env bash
# Configure (or reconfigure) a build directory and build it.
# Usage: build.sh DIR [meson options...]
# NINJA_JOBS sets ninja's parallelism (default: one job per CPU).
set -euo pipefail

dir=${1:?usage: build.sh DIR [meson options...]}
shift
if [[ -f $dir/build.ninja ]]; then
	meson setup --reconfigure "$dir" "$@" > /dev/null
else
	meson setup "$dir" "$@" > /dev/null
fi
ninja -C "$dir" -j "${NINJA_JOBS:-$(nproc)}"
