#!/usr/bin/env bash
# Every program of rdmacm-utils and perftest that links librdmacm.so.1
# must bind to droce's drop-in: no undefined symbol, no missing symbol
# version, and the librdmacm.so.1 the loader picks is the drop-in's. And
# tests/cma/cma_dpdk, a DPDK application on rdma_cm, needs libdroce alone.
#
# Usage: check_bind.sh BUILD_DIR
set -euo pipefail

build=${1:?usage: check_bind.sh BUILD_DIR}
dir=$build/lib/rdmacm/dropin
lib=$(realpath "$dir/librdmacm.so.1")
export LD_LIBRARY_PATH=$build/lib/verbs/dropin:$dir
n=0
fail=0
for f in $(dpkg -L rdmacm-utils perftest | grep '^/usr/bin/'); do
	[[ -f $f && ! -L $f ]] || continue
	readelf -d "$f" 2> /dev/null | grep -q 'Shared library: \[librdmacm\.so\.1\]' || continue
	n=$((n + 1))
	out=$(ldd -r "$f" 2>&1)
	if grep -Eq 'undefined symbol|not found' <<< "$out" ||
	   [[ $(awk '$1 == "librdmacm.so.1" { print $3 }' <<< "$out" | xargs -r realpath) != "$lib" ]]; then
		echo "FAIL $f"
		grep -E 'undefined symbol|not found|librdmacm' <<< "$out" | head -5
		fail=$((fail + 1))
	else
		echo "ok   $f"
	fi
done
echo "check_bind: $n binaries, $((n - fail)) bind to $lib, $fail fail"
app=$build/tests/cma/cma_dpdk
needed=$(readelf -d "$app" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
if grep -q '^libdroce\.so' <<< "$needed" && ! grep -Eq '^lib(rdmacm|ibverbs)\.so' <<< "$needed" &&
   ! LD_LIBRARY_PATH='' ldd -r "$app" 2>&1 | grep -Eq 'undefined symbol|not found'; then
	echo "ok   $app: libdroce alone"
else
	echo "FAIL $app: $(tr '\n' ' ' <<< "$needed")"
	fail=$((fail + 1))
fi
(( n > 0 && fail == 0 ))
