# shellcheck shell=bash
# Sourced by tests that run Debian's (uninstrumented) verbs programs on the
# drop-in libibverbs.so.1: dropin_env BUILD_DIR sets DROPIN_ENV to the
# environment they need. In a sanitizer build the drop-in needs its ASan
# or TSan runtime loaded first, so it is preloaded; leak reports are off
# there, since they would be the programs' own (droce's leaks are checked
# by the tests that link it).
dropin_env() {
	local dir=$1/lib/verbs/dropin asan tsan
	DROPIN_ENV=(LD_LIBRARY_PATH="$dir")
	asan=$(ldd "$dir/libibverbs.so.1" | awk '/libasan\.so/ { print $3 }')
	tsan=$(ldd "$dir/libibverbs.so.1" | awk '/libtsan\.so/ { print $3 }')
	if [[ -n $asan ]]; then
		DROPIN_ENV+=(LD_PRELOAD="$asan" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
	elif [[ -n $tsan ]]; then
		DROPIN_ENV+=(LD_PRELOAD="$tsan")
	fi
}
