#!/usr/bin/env python3
"""Check the RoCEv2 frames of pcapng captures between droce and a peer.

  roce_capture.py --local IP --peer IP FILE.pcapng...

For each direction (local -> peer, peer -> local) it counts the UDP 4791
frames (IPv4 or IPv6, tagged or not), recomputes every ICRC (RoCEv2, IBTA
Annex A17: CRC-32 over the IP, UDP and BTH headers with their variant
fields set to ones, then the rest of the packet) and counts request packets sent again with a PSN
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
ETH_IPV6 = 0x86dd
ETH_VLAN = 0x8100
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
    """ICRC of a RoCEv2 packet given from its IP header to the end of the payload."""
    if ip[0] >> 4 == 6:
        ihl = 40
        iph = bytearray(ip[:ihl])
        iph[0] |= 0x0f                 # traffic class and flow label, not the version
        iph[1:4] = b'\xff\xff\xff'
        iph[7] = 0xff                  # hop limit
    else:
        ihl = (ip[0] & 0x0f) * 4
        iph = bytearray(ip[:ihl])
        iph[1] = 0xff                  # TOS
        iph[8] = 0xff                  # TTL
        iph[10:12] = b'\xff\xff'       # header checksum
    udp = bytearray(ip[ihl:ihl + 8])
    udp[6:8] = b'\xff\xff'             # UDP checksum
    bth = bytearray(ip[ihl + 8:ihl + 20])
    bth[4] = 0xff                      # BTH reserved byte (resv8a)
    return zlib.crc32(b'\xff' * 8 + iph + udp + bth + ip[ihl + 20:]) & 0xffffffff


def ip_packet(frame):
    """The IP packet of an Ethernet frame (802.1Q tag allowed) as (packet, header length),
    cut to the IP length, when it is UDP over IPv4 or IPv6 without extension headers."""
    off = 14
    if len(frame) >= 18 and struct.unpack_from('!H', frame, 12)[0] == ETH_VLAN:
        off = 18
    if len(frame) < off:
        return None, 0
    etype = struct.unpack_from('!H', frame, off - 2)[0]
    ip = frame[off:]
    if etype == ETH_IPV4 and len(ip) >= 20 and ip[0] >> 4 == 4 and ip[9] == 17:
        return ip[:struct.unpack_from('!H', ip, 2)[0]], (ip[0] & 0x0f) * 4
    if etype == ETH_IPV6 and len(ip) >= 40 and ip[0] >> 4 == 6 and ip[6] == 17:
        return ip[:40 + struct.unpack_from('!H', ip, 4)[0]], 40
    return None, 0


def roce_packets(frame):
    """Return (src, dst, opcode, dest QP, PSN, ICRC ok) of a RoCEv2 frame, or None."""
    ip, ihl = ip_packet(frame)
    if ip is None:
        return None
    if len(ip) < ihl + 8 + 12 + 4 or struct.unpack_from('!H', ip, ihl + 2)[0] != ROCE_PORT:
        return None
    bth = ip[ihl + 8:ihl + 20]
    sent = struct.unpack_from('<I', ip, len(ip) - 4)[0]
    addr = (ip[8:24], ip[24:40]) if ihl == 40 else (ip[12:16], ip[16:20])
    return (ipaddress.ip_address(addr[0]), ipaddress.ip_address(addr[1]),
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
