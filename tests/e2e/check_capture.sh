#!/usr/bin/env bash
# Run rc_verify over memif with capture on, then check every captured
# frame with droce's own parser (ICRC included, check_capture) and, where
# tshark is installed, with Wireshark's dissectors (nothing malformed).
#
# Usage: check_capture.sh BUILD_DIR [rc_verify options other than -n]
# Each side posts $ops operations, so each capture must hold at least as
# many RoCEv2 frames (more with multi-packet messages and ACKs).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: check_capture.sh BUILD_DIR [rc_verify options other than -n]}
shift
dir=$(mktemp -d /tmp/droce-capture.XXXXXX)
trap 'rm -rf "$dir"' EXIT

ops=300
bash "$here/run_memif.sh" --capture "$dir" "$build" -n "$ops" "$@"
files=("$dir/server.pcapng" "$dir/client.pcapng")
"$build/tests/e2e/check_capture" -m "$ops" "${files[@]}"
if ! command -v tshark > /dev/null; then
	echo "check_capture: no tshark, Wireshark's check skipped"
	exit 0
fi
# Wireshark guesses at what a payload carries (RPC-over-RDMA, SMB Direct,
# ...) and calls random test bytes malformed: turn the guesses off, those
# this tshark knows.
guesses=()
for h in rpcrdma_infiniband iser_infiniband smb_direct_infiniband smcr_infiniband lnet_ib \
	 sdp_infiniband fc_infiniband eth_over_ib nvme_rdma; do
	if tshark --disable-heuristic "$h" -r "${files[0]}" -c 1 > /dev/null 2>&1; then
		guesses+=(--disable-heuristic "$h")
	fi
done
bad_filter='_ws.malformed || _ws.expert.severity == error'
for f in "${files[@]}"; do
	bad=$(tshark "${guesses[@]}" -r "$f" -Y "$bad_filter" 2> /dev/null | wc -l)
	ib=$(tshark "${guesses[@]}" -r "$f" -Y infiniband 2> /dev/null | wc -l)
	if (( bad > 0 || ib == 0 )); then
		echo "check_capture: tshark finds $bad malformed frames and $ib InfiniBand frames in $f:" >&2
		tshark "${guesses[@]}" -r "$f" -Y "$bad_filter" 2> /dev/null | head -20 >&2
		exit 1
	fi
	echo "check_capture: tshark decodes $ib InfiniBand frames in $f, none malformed"
done
