#!/usr/bin/env bash
# test_engines' af_packet case: two droce devices with 2 engines each on
# af_packet ports with qpairs=2, on the two ends of a veth pair made for
# the run (and removed after it).
#
# Usage: run_af_packet.sh TEST_ENGINES
# Exits 77 (meson's "skipped") when this machine cannot make a veth pair.
set -euo pipefail

exe=${1:?usage: run_af_packet.sh TEST_ENGINES}
# shellcheck source=tests/common/veth_env.sh
source "$(dirname "$0")/../common/veth_env.sh"
# Interface names are at most 15 characters; the PID keeps runs apart.
a=dea$$
trap 'ip link del "$a" 2> /dev/null || true' EXIT
veth_pair "$a" deb$$
CK_RUN_CASE=af_packet DROCE_TEST_VETH="$a,deb$$" "$exe"
