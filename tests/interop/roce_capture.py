#!/usr/bin/env python3
"""Check the RoCEv2 frames of pcapng captures between droce and a peer.

  roce_capture.py --local IP --peer IP FILE.pcapng...

For each direction (local -> peer, peer -> local) it counts the UDP 4791
frames, recomputes every ICRC (RoCEv2, IBTA Annex A17: CRC-32 over the
IPv4, UDP and BTH headers with their variant fields set to ones, then the
rest of the packet) and counts request packets sent again with a PSN
already seen on that destination QP (retransmissions). It prints one
`name=value` per line, e.g. `tx=402`, `tx_bad_icrc=0`, `tx_retx=0`,
`rx=...`; `tx` is local -> peer. Exits 1 when a file cannot be read.
"""
import argparse
import ipaddress
import struct
import sys
import zlib

ROCE_PORT = 4791
ETH_IPV4 = 0x0800
LINKTYPE_ETHERNET = 1
# RC opcodes that carry a request (SEND, RDMA WRITE, RDMA READ request,
# atomics, SEND with invalidate); the others are responses and ACKs.
RC_REQUESTS = set(range(0x00, 0x0d)) | {0x13, 0x14, 0x16, 0x17}


def pcapng_frames(path):
    """Yield the Ethernet frames of a pcapng file (enhanced and simple packet blocks)."""
    with open(path, 'rb') as f:
        data = f.read()
    off, endian, linktypes = 0, '<', []
    while off + 12 <= len(data):
        btype = struct.unpack_from(endian + 'I', data, off)[0]
        if btype == 0x0A0D0D0A:
            magic = data[off + 8:off + 12]
            endian = '<' if magic == b'\x4d\x3c\x2b\x1a' else '>'
            linktypes = []
        blen = struct.unpack_from(endian + 'I', data, off + 4)[0]
        if blen < 12 or off + blen > len(data):
            break  # truncated (e.g. the writer was killed): keep what came before
        body = data[off + 8:off + blen - 4]
        if btype == 1:
            linktypes.append(struct.unpack_from(endian + 'H', body, 0)[0])
        elif btype == 6:
            ifid, _, _, caplen = struct.unpack_from(endian + 'IIII', body, 0)
            if ifid < len(linktypes) and linktypes[ifid] == LINKTYPE_ETHERNET:
                yield body[20:20 + caplen]
        elif btype == 3 and linktypes and linktypes[0] == LINKTYPE_ETHERNET:
            yield body[4:]
        off += blen


def icrc(ip):
    """ICRC of an IPv4 RoCEv2 packet given from its IPv4 header to the end of the payload."""
    ihl = (ip[0] & 0x0f) * 4
    iph = bytearray(ip[:ihl])
    iph[1] = 0xff                      # TOS
    iph[8] = 0xff                      # TTL
    iph[10:12] = b'\xff\xff'           # header checksum
    udp = bytearray(ip[ihl:ihl + 8])
    udp[6:8] = b'\xff\xff'             # UDP checksum
    bth = bytearray(ip[ihl + 8:ihl + 20])
    bth[4] = 0xff                      # BTH reserved byte (resv8a)
    return zlib.crc32(b'\xff' * 8 + iph + udp + bth + ip[ihl + 20:]) & 0xffffffff


def roce_packets(frame):
    """Return (src, dst, opcode, dest QP, PSN, ICRC ok) of a RoCEv2 frame over IPv4, or None."""
    if len(frame) < 14 or struct.unpack_from('!H', frame, 12)[0] != ETH_IPV4:
        return None
    ip = frame[14:]
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
        return None
    ihl = (ip[0] & 0x0f) * 4
    total = struct.unpack_from('!H', ip, 2)[0]
    ip = ip[:total]
    if len(ip) < ihl + 8 + 12 + 4 or struct.unpack_from('!H', ip, ihl + 2)[0] != ROCE_PORT:
        return None
    bth = ip[ihl + 8:ihl + 20]
    sent = struct.unpack_from('<I', ip, len(ip) - 4)[0]
    return (ipaddress.ip_address(ip[12:16]), ipaddress.ip_address(ip[16:20]),
            bth[0], int.from_bytes(bth[5:8], 'big'), int.from_bytes(bth[9:12], 'big'),
            icrc(ip[:-4]) == sent)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--local', required=True, type=ipaddress.ip_address)
    ap.add_argument('--peer', required=True, type=ipaddress.ip_address)
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()
    stats = {d: {'': 0, '_bad_icrc': 0, '_retx': 0} for d in ('tx', 'rx')}
    seen = {'tx': set(), 'rx': set()}
    for path in a.files:
        try:
            frames = list(pcapng_frames(path))
        except OSError as e:
            print('roce_capture: %s' % e, file=sys.stderr)
            return 1
        for frame in frames:
            p = roce_packets(frame)
            if p is None:
                continue
            src, dst, opcode, qpn, psn, ok = p
            if (src, dst) == (a.local, a.peer):
                d = 'tx'
            elif (src, dst) == (a.peer, a.local):
                d = 'rx'
            else:
                continue
            stats[d][''] += 1
            stats[d]['_bad_icrc'] += not ok
            if opcode in RC_REQUESTS:
                key = (path, qpn, psn)
                stats[d]['_retx'] += key in seen[d]
                seen[d].add(key)
    for d in ('tx', 'rx'):
        for k, v in stats[d].items():
            print('%s%s=%d' % (d, k, v))
    return 0


if __name__ == '__main__':
    sys.exit(main())
