#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Make fuzz_rx's seed corpus from RoCEv2 captures.

Every RoCEv2 frame of each pcap becomes one frame record of fuzz_rx's
input format (see fuzz_rx.c): the QP kind its service names, its opcode,
AckReq/SE/pad, its extension headers and the first bytes of its payload
(the rest comes back as filler of about the same length). The frames of
one capture, in order, are cut into inputs of at most FRAMES_PER_SEED
frames, each after a setup byte that posts every kind of send, so the
captured responses find requests to answer.

Usage: make_corpus.py OUT_DIR PCAP...
"""
import os
import struct
import sys

FRAMES_PER_SEED = 24
PAYLOAD_KEPT = 32
SETUP = 0x7f            # FZ_POST_*: every kind once
UDP_ROCE = 4791
ICRC_LEN = 4
BTH_LEN = 12

# Extension header bytes after the BTH, by opcode operation (bits 4:0),
# before the service-specific DETH (UD) or XRCETH (XRC) that comes first.
EXT_LEN = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,        # SEND
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0a: 16, 0x0b: 20,     # WRITE
    0x0c: 16,                                                     # READ request
    0x0d: 4, 0x0e: 0, 0x0f: 4, 0x10: 4,                          # READ responses
    0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28,                        # ACK, atomics
    0x16: 4, 0x17: 4,                                             # SEND with invalidate
}
# fz_qp_kind for a request (to a responder) and a response (to a requester).
QP_OF_SERVICE = {0x00: (0, 0), 0x20: (1, 1), 0x60: (2, 2), 0xa0: (4, 3)}
F_ACKREQ = 0x10
F_SE = 0x20


def pcap_frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise SystemExit(f"{path}: not a classic pcap")
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "IIII", data[off:off + 16])[2]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def roce_l4(frame):
    """The bytes from the BTH to the end of the ICRC, or None."""
    off = 14
    etype = struct.unpack(">H", frame[12:14])[0]
    if etype == 0x8100:
        etype = struct.unpack(">H", frame[16:18])[0]
        off = 18
    if etype == 0x0800:
        ihl = (frame[off] & 0x0f) * 4
        if frame[off + 9] != 17:
            return None
        end = off + struct.unpack(">H", frame[off + 2:off + 4])[0]
        off += ihl
    elif etype == 0x86dd:
        if frame[off + 6] != 17:
            return None
        end = off + 40 + struct.unpack(">H", frame[off + 4:off + 6])[0]
        off += 40
    else:
        return None
    if struct.unpack(">H", frame[off + 2:off + 4])[0] != UDP_ROCE:
        return None
    return frame[off + 8:end]


def record(l4):
    opcode, flags = l4[0], l4[1]
    service, operation = opcode & 0xe0, opcode & 0x1f
    if service not in QP_OF_SERVICE or operation not in EXT_LEN:
        return None
    request = operation <= 0x0c or operation in (0x13, 0x14, 0x16, 0x17)
    # UD packets carry a DETH, XRC requests an XRCETH.
    ext = EXT_LEN[operation] + (8 if service == 0x60 else 4 if service == 0xa0 and request else 0)
    pad = (flags >> 4) & 3
    qp = QP_OF_SERVICE[service][0 if request else 1]
    rec_flags = (F_ACKREQ if l4[8] & 0x80 else 0) | (F_SE if flags & 0x80 else 0)
    headers = bytearray(l4[BTH_LEN:BTH_LEN + ext])
    if operation in (0x06, 0x0a, 0x0b, 0x0c, 0x13, 0x14):
        # The RETH or AtomicETH, after a DETH/XRCETH if any. fuzz_rx maps
        # the address into a region the low bits of the key pick: the
        # first 4 KiB of the usual one here.
        at = ext - EXT_LEN[operation]
        va, rkey = struct.unpack(">QI", headers[at:at + 12])
        headers[at:at + 12] = struct.pack(">QI", va % 4096, rkey & ~3)
        if operation <= 0x0c:
            # Bits 31:30 = 2: the RETH length as captured.
            length = struct.unpack(">I", headers[at + 12:at + 16])[0]
            headers[at + 12:at + 16] = struct.pack(">I", 0x80000000 | length & 0xffff)
    payload = l4[BTH_LEN + ext:len(l4) - pad - ICRC_LEN]
    # Keep as much as makes the rest a whole number of 64-byte units, so
    # the length comes back exactly (FIRST and MIDDLE packets must be MTU).
    keep = len(payload) % 64
    if keep < PAYLOAD_KEPT and len(payload) >= keep + 64:
        keep += 64
    while (len(payload) - keep) // 64 > 63:
        keep += 64
    kept = payload[:keep]
    extend = min((len(payload) - len(kept)) // 64, 63) | pad << 6
    # split 32: a chained variant would cut right after the headers.
    body = bytes([qp, operation, rec_flags, 0, 32, extend]) + bytes(headers) + kept
    return struct.pack("<H", len(body)) + body


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        recs = [r for r in (record(l4) for l4 in
                            filter(None, map(roce_l4, pcap_frames(path)))) if r]
        stem = os.path.splitext(os.path.basename(path))[0]
        for n in range(0, len(recs), FRAMES_PER_SEED):
            name = os.path.join(out, f"{stem}-{n // FRAMES_PER_SEED:02d}")
            with open(name, "wb") as f:
                f.write(bytes([SETUP]) + b"".join(recs[n:n + FRAMES_PER_SEED]))
        seeds = (len(recs) + FRAMES_PER_SEED - 1) // FRAMES_PER_SEED
        print(f"{path}: {len(recs)} frames, {seeds} seeds")


if __name__ == "__main__":
    main()
