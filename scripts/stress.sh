#!/usr/bin/env bash
# The destroy-while-active stress (tests/stress/test_destroy_stress.c) at
# any length: brings the build up to date and runs CYCLES create /
# traffic / destroy cycles on the loopback device (CI runs 2000; the full
# run is 100,000). Prints the test's summary and the time it took; exits
# non-zero when it fails.
#
# Usage: stress.sh [--asan | --tsan] [CYCLES]
#   --asan  AddressSanitizer and UBSan build ($DROCE_BUILD_ROOT/asan)
#   --tsan  ThreadSanitizer build ($DROCE_BUILD_ROOT/tsan)
# Without either, the build scripts/test.sh makes first ($DROCE_BUILD_ROOT/ci).
# Run as root on Debian 12 once scripts/install-deps.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${DROCE_BUILD_ROOT:-build}

dir=$root/ci
opts=(--werror)
case ${1:-} in
--asan)
	dir=$root/asan
	opts+=(-Db_lto=false "-Db_sanitize=address,undefined")
	export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	shift
	;;
--tsan)
	dir=$root/tsan
	opts+=(-Db_lto=false -Db_sanitize=thread)
	export TSAN_OPTIONS=halt_on_error=1:history_size=4:suppressions=$PWD/tests/tsan.supp
	shift
	;;
esac
cycles=${1:-100000}

bash scripts/build.sh "$dir" "${opts[@]}"
start=$SECONDS
rc=0
DROCE_CONF=tests/verbs/loopback.conf "$dir/tests/stress/test_destroy_stress" "$cycles" || rc=$?
echo "stress: $cycles cycles in $dir, $(( SECONDS - start )) s, exit $rc"
exit $rc
