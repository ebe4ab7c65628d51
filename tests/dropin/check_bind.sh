#!/usr/bin/env bash
# Every binary on this machine that links libibverbs.so.1 must bind to the
# drop-in: no undefined symbol, no missing symbol version, and the
# libibverbs.so.1 the loader picks is the drop-in's.
#
# Usage: check_bind.sh BUILD_DIR
# Checked: the ELF programs of ibverbs-utils and perftest, the provider
# libraries of ibverbs-providers (libmlx5, libmlx4, libefa, and the
# dlopen()ed ones under libibverbs/), librdmacm, and every DPDK driver
# (PMD) that links libibverbs, since the EAL loads them all at start.
# Installs nothing: a missing package fails the test and is named.
set -euo pipefail

build=${1:?usage: check_bind.sh BUILD_DIR}
dropin=$build/lib/verbs/dropin
if [[ ! -e $dropin/libibverbs.so.1 ]]; then
	echo "check_bind: $dropin/libibverbs.so.1 is not built" >&2
	exit 1
fi
dropin_lib=$(realpath "$dropin/libibverbs.so.1")

missing=()
for pkg in ibverbs-utils perftest ibverbs-providers librdmacm1; do
	if [[ $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null) != "install ok installed" ]]; then
		missing+=("$pkg")
	fi
done
if (( ${#missing[@]} )); then
	echo "check_bind: not installed: ${missing[*]} (scripts/install-deps.sh installs them)" >&2
	exit 1
fi

is_elf() {
	[[ $(od -An -c -N 4 "$1" 2>/dev/null | tr -d ' ') == '177ELF' ]]
}

# (No grep -q at the end of a pipe: with pipefail, objdump's SIGPIPE
# would turn a match into a failure.)
links_ibverbs() {
	local needed

	needed=$(objdump -p "$1" 2>/dev/null) || return 1
	grep -q 'NEEDED *libibverbs\.so\.1$' <<< "$needed"
}

declare -A seen
targets=()
add() {
	local real

	real=$(realpath "$1")
	if [[ -z ${seen[$real]:-} ]]; then
		seen[$real]=1
		targets+=("$real")
	fi
}

while read -r f; do
	if [[ $f == /usr/bin/* && -f $f ]] && is_elf "$f"; then
		add "$f"
	fi
done < <(dpkg -L ibverbs-utils perftest)
while read -r f; do
	if [[ -f $f && $f == *.so* ]] && is_elf "$f" && links_ibverbs "$f"; then
		add "$f"
	fi
done < <(dpkg -L ibverbs-providers librdmacm1)
for f in /usr/lib/*/dpdk/pmds-*/*.so; do
	if [[ -e $f ]] && links_ibverbs "$f"; then
		add "$f"
	fi
done

fails=0
for f in "${targets[@]}"; do
	out=$(LD_LIBRARY_PATH=$dropin ldd -r "$f" 2>&1) || true
	why=
	if grep -q 'undefined symbol' <<< "$out"; then
		why=$(grep -m3 'undefined symbol' <<< "$out" | sed 's/[[:space:]]*(.*)$//' | paste -sd ';')
	elif grep -q 'not found' <<< "$out"; then
		why=$(grep -m3 'not found' <<< "$out" | paste -sd ';')
	else
		got=$(awk '$1 == "libibverbs.so.1" { print $3 }' <<< "$out")
		if [[ -z $got ]]; then
			why="does not load libibverbs.so.1"
		elif [[ $(realpath "$got") != "$dropin_lib" ]]; then
			why="libibverbs.so.1 is $got, not the drop-in"
		fi
	fi
	if [[ -n $why ]]; then
		echo "FAIL $f: $why"
		fails=$((fails + 1))
	else
		echo "ok   $f"
	fi
done
echo "check_bind: ${#targets[@]} binaries, $((${#targets[@]} - fails)) bind to $dropin_lib, $fails fail"
(( ${#targets[@]} > 0 && fails == 0 ))
