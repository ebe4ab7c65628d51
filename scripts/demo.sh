#!/usr/bin/env bash
# The demo: install what is missing, build droce, then two processes
# exchange RDMA traffic over a memif link and check every byte of it.
# Run from anywhere as root on Debian 12. The build goes to
# $DROCE_BUILD_ROOT/demo (default build/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DROCE_BUILD_ROOT:-build}/demo

bash scripts/install-deps.sh
bash scripts/hugepages.sh || echo "demo: no hugepages; DPDK runs on plain memory"
bash scripts/build.sh "$build" --buildtype=release

# The demo itself: a server and a client, 2000 RDMA operations each way.
echo
echo "demo: two verbs programs (tests/e2e/rc_verify.c) over droce and memif"
exec bash tests/e2e/run_memif.sh "$build" -n 2000 -v
