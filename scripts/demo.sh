#!/usr/bin/env bash
# The main job: install what is missing, build droce, then droce-perf's
# demo: two processes over a memif link measure RDMA WRITE, SEND and READ
# bandwidth and latency, each beside what the same link carries as plain
# Ethernet frames (raw-L2).
# Run from anywhere as root on Debian 12. The build goes to
# $DROCE_BUILD_ROOT/demo (default build/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DROCE_BUILD_ROOT:-build}/demo

bash scripts/install-deps.sh
bash scripts/hugepages.sh || echo "demo: no hugepages; DPDK runs on plain memory"
bash scripts/build.sh "$build" --buildtype=release

echo
exec "$build/apps/droce-perf/droce-perf" --demo
