#!/usr/bin/env bash
# Every test: install what is missing, build with warnings as errors and
# run all suites (unit, e2e), then build again with AddressSanitizer and
# UBSan (DPDK runs under them) and run those suites again, for the
# corei7 baseline (the wire and port suites), with ThreadSanitizer
# for the tests where threads meet, and profile-guided (a short training
# and one run of what it built, counted as one test). Ends with
# "N passed, N failed"; exits non-zero when anything failed. Run as root
# on Debian 12. Builds go under $DROCE_BUILD_ROOT (default build/).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=${DROCE_BUILD_ROOT:-build}

passed=0
failed=0
# What failed, with the end of its output: printed again last, where a
# CI that keeps only the tail of a run's output still shows it.
report=$(mktemp)
trap 'rm -f "$report"' EXIT

# count DIR: add DIR's test results (meson's testlog.json) to the totals.
count() {
	local log=$1/meson-logs/testlog.json p f
	if [[ ! -f $log ]]; then
		echo "test: no results in $1" | tee -a "$report" >&2
		failed=$(( failed + 1 ))
		return
	fi
	read -r p f < <(python3 - "$log" "$1" "$report" <<-'PY'
		import json, sys
		ok = bad = 0
		with open(sys.argv[3], "a") as report:
		    for line in open(sys.argv[1]):
		        t = json.loads(line)
		        r = t["result"]
		        if r in ("OK", "EXPECTEDFAIL"):
		            ok += 1
		        elif r != "SKIP":
		            bad += 1
		            tail = ((t.get("stdout") or "").splitlines()[-6:] +
		                    (t.get("stderr") or "").splitlines()[-10:])
		            report.write("FAILED %s: %s (%s, %.0f s)\n" % (sys.argv[2], t["name"], r, t["duration"]))
		            report.write("".join("    %s\n" % l[:200] for l in tail))
		print(ok, bad)
		PY
	)
	passed=$(( passed + p ))
	failed=$(( failed + f ))
}

# run DIR [meson test options...]: run the tests of DIR and count them.
run() {
	local dir=$1
	shift
	rm -f "$dir/meson-logs/testlog.json"
	meson test -C "$dir" --print-errorlogs "$@"
	count "$dir"
}

bash scripts/install-deps.sh || exit 1
bash scripts/hugepages.sh || echo "test: no hugepages; the e2e tests run DPDK on plain memory"

echo "== $root/ci: warnings are errors, every suite"
if bash scripts/build.sh "$root/ci" --werror; then
	run "$root/ci"
else
	echo "test: $root/ci does not build" | tee -a "$report" >&2
	failed=$(( failed + 1 ))
fi

echo "== $root/asan: AddressSanitizer and UBSan, unit, stress and e2e suites"
if bash scripts/build.sh "$root/asan" --werror -Db_lto=false -Db_sanitize=address,undefined; then
	ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		run "$root/asan" --suite unit --suite stress --suite e2e
else
	echo "test: $root/asan does not build" | tee -a "$report" >&2
	failed=$(( failed + 1 ))
fi

echo "== $root/fuzz: clang with libFuzzer, AddressSanitizer and UBSan, the fuzz suite"
if CC=clang bash scripts/build.sh "$root/fuzz" --werror -Db_lto=false -Dfuzz=true -Db_sanitize=address,undefined; then
	run "$root/fuzz" --suite fuzz
else
	echo "test: $root/fuzz does not build" | tee -a "$report" >&2
	failed=$(( failed + 1 ))
fi

# The other builds are for this CPU (-Dcpu=native): code that the build's
# ISA chooses at compile time (the header prediction's compare: AVX2 or
# 8 bytes at a time) takes only one way there. This one is for Debian's
# DPDK baseline (corei7: no AVX), the suites of lib/wire and lib/port.
echo "== $root/base: the corei7 baseline, the wire and port suites"
base_setup=(meson setup "$root/base" --werror -Db_lto=false -Dcpu=corei7)
[[ -f $root/base/build.ninja ]] && base_setup+=(--reconfigure)
if "${base_setup[@]}" > /dev/null && ninja -C "$root/base" tests/wire/test_wire tests/port/test_port; then
	run "$root/base" --no-rebuild wire port
else
	echo "test: $root/base does not build" | tee -a "$report" >&2
	failed=$(( failed + 1 ))
fi

echo "== $root/tsan: ThreadSanitizer, the threaded tests (stress, verbs, two-process e2e)"
if bash scripts/build.sh "$root/tsan" --werror -Db_lto=false -Db_sanitize=thread; then
	TSAN_OPTIONS=halt_on_error=1:history_size=4:suppressions=$PWD/tests/tsan.supp \
		run "$root/tsan" destroy-stress verbs unreliable fork engines e2e-memif \
		debian-rc-pingpong-4096-e
else
	echo "test: $root/tsan does not build" | tee -a "$report" >&2
	failed=$(( failed + 1 ))
fi

echo "== $root/pgo: the profile-guided build (scripts/build-pgo.sh -q), its training and a run of what it built"
if bash scripts/build-pgo.sh -q "$root/pgo" -Dtests=false; then
	passed=$(( passed + 1 ))
else
	echo "FAILED $root/pgo: scripts/build-pgo.sh -q" | tee -a "$report" >&2
	failed=$(( failed + 1 ))
fi

cat "$report"
echo "$passed passed, $failed failed"
(( failed == 0 ))
