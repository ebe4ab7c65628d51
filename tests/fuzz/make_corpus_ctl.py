#!/usr/bin/env python3
"""Seed corpus of fuzz_ctl (tests/fuzz/corpus-ctl): one valid frame of each
message the port's own protocols take (ND, IGMP, MLD), each after a shape
byte of 0 (one segment, untagged). Usage: make_corpus_ctl.py OUT_DIR"""
import struct, os, sys
out = sys.argv[1]

def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return s

def eth(dst, src, etype):
    return bytes(dst) + bytes(src) + struct.pack('!H', etype)

src_mac = [2, 0, 0, 0, 0, 2]
def ip6(s):
    import ipaddress
    return ipaddress.IPv6Address(s).packed

def icmp6(src, dst, msg, nh_chain=b''):
    ph = src + dst + struct.pack('!I', len(msg)) + b'\0\0\0' + bytes([58])
    ck = 0xffff - csum(ph + msg)
    msg = msg[:2] + struct.pack('!H', ck) + msg[4:]
    return msg

def v6frame(dst_mac, src, dst, hop, nh, payload):
    hdr = struct.pack('!IHBB', 6 << 28, len(payload), nh, hop) + src + dst
    return eth(dst_mac, src_mac, 0x86dd) + hdr + payload

def mld(typ, src, dst, group, extra=b''):
    msg = bytes([typ, 0, 0, 0]) + struct.pack('!HH', 1000, 0) + group + extra
    msg = icmp6(src, dst, msg)
    hbh = bytes([58, 0, 5, 2, 0, 0, 1, 0])
    return v6frame([0x33, 0x33] + list(dst[12:]), src, dst, 1, 0, hbh + msg)

def nd(typ, src, dst, target, opt):
    msg = bytes([typ, 0, 0, 0]) + (b'\x60\0\0\0' if typ == 136 else b'\0' * 4) + target + opt
    msg = icmp6(src, dst, msg)
    return v6frame([0x33, 0x33] + list(dst[12:]), src, dst, 255, 58, msg)

def igmp(typ, src, dst, group, extra=b'', ttl=1):
    msg = bytes([typ, 100, 0, 0]) + struct.pack('!I', group) + extra
    ck = 0xffff - csum(msg)
    msg = msg[:2] + struct.pack('!H', ck) + msg[4:]
    ihl = 6
    hdr = struct.pack('!BBHHHBBHII', 0x40 | ihl, 0xc0, ihl * 4 + len(msg), 0, 0x4000, ttl, 2, 0, src, dst) + b'\x94\x04\0\0'
    ck = 0xffff - csum(hdr)
    hdr = hdr[:10] + struct.pack('!H', ck) + hdr[12:]
    return eth([1, 0, 0x5e, (dst >> 16) & 0x7f, (dst >> 8) & 0xff, dst & 0xff], src_mac, 0x0800) + hdr + msg

ll = ip6('fe80::2'); allnodes = ip6('ff02::1'); grp = ip6('ff0e::1234')
seeds = {
  'mld-query-v1': mld(130, ll, allnodes, b'\0' * 16),
  'mld-query-v2': mld(130, ll, grp, grp, b'\x02\x7d\0\0'),
  'mld-report': mld(131, ll, grp, grp),
  'mld-done': mld(132, ll, ip6('ff02::2'), grp),
  'nd-ns': nd(135, ip6('fd00::2'), ip6('ff02::1:ff00:1'), ip6('fd00::1'), bytes([1, 1] + src_mac)),
  'nd-na': nd(136, ip6('fd00::1'), ip6('fd00::2'), ip6('fd00::1'), bytes([2, 1] + src_mac)),
  'igmp-query-v2': igmp(0x11, 0x0a000002, 0xe0000001, 0),
  'igmp-query-v3': igmp(0x11, 0x0a000002, 0xef010101, 0xef010101, b'\x02\x7d\0\0'),
  'igmp-report': igmp(0x16, 0x0a000002, 0xef010101, 0xef010101),
}
for name, f in seeds.items():
    open(os.path.join(out, name), 'wb').write(bytes([0]) + f)
