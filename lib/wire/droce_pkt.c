/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parsing and building the Ethernet, IP and UDP layers of RoCEv2 frames.
 * Every length a frame claims is checked against the bytes it has before
 * anything is read, so a malformed frame is rejected, never read past.
 */
#include <string.h>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "droce_wire.h"

/* The GID of an IPv4 address: ::ffff:a.b.c.d (the IPv4-mapped prefix
 * ::ffff:0:0/96). Written as two 8-byte halves: the GID lookup reads it
 * so right after, and a read that spans two stores (the prefix's last
 * bytes and the address) cannot take its data from the store buffer. It
 * waited some 15 cycles for them, on every received frame. */
static void
gid_from_ipv4(uint8_t gid[16], rte_be32_t addr)
{
	const uint64_t lo = 0;
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	const uint64_t hi = UINT64_C(0xffff0000) | (uint64_t)addr << 32;
#else
	const uint64_t hi = UINT64_C(0x0000ffff) << 32 | addr;
#endif

	memcpy(gid, &lo, sizeof(lo));
	memcpy(gid + 8, &hi, sizeof(hi));
}

/* What the IP layer tells the UDP layer. */
struct l3_info {
	uint32_t hdr_len;
	uint32_t l4_len;	/**< IP payload length */
	bool more_frags;	/**< first fragment of a fragmented datagram */
};

/* IPv4: checks the header; returns 0 or a parse error. */
static enum droce_parse_err
parse_ipv4(const uint8_t *p, uint32_t first_len, uint32_t frame_len,
	   struct droce_pkt *pkt, struct l3_info *l3)
{
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;
	uint32_t ihl, total;
	uint16_t frag;

	if (first_len < sizeof(*ip))
		return DROCE_PARSE_MALFORMED;
	ihl = (ip->version_ihl & RTE_IPV4_HDR_IHL_MASK) * RTE_IPV4_IHL_MULTIPLIER;
	total = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    ihl > first_len || total < ihl || total > frame_len)
		return DROCE_PARSE_MALFORMED;
	if (ip->next_proto_id != IPPROTO_UDP)
		return DROCE_PARSE_NOT_ROCE;
	/*
	 * Only a first fragment has the UDP header that would say it is
	 * RoCE; later ones are somebody else's.
	 */
	frag = rte_be_to_cpu_16(ip->fragment_offset);
	if (frag & RTE_IPV4_HDR_OFFSET_MASK)
		return DROCE_PARSE_NOT_ROCE;
	pkt->ipv6 = false;
	pkt->tclass = ip->type_of_service;
	gid_from_ipv4(pkt->sgid, ip->src_addr);
	gid_from_ipv4(pkt->dgid, ip->dst_addr);
	l3->hdr_len = ihl;
	l3->l4_len = total - ihl;
	l3->more_frags = (frag & RTE_IPV4_HDR_MF_FLAG) != 0;
	return DROCE_PARSE_OK;
}

/* IPv6 without extension headers, as parse_ipv4(). */
static enum droce_parse_err
parse_ipv6(const uint8_t *p, uint32_t first_len, uint32_t frame_len,
	   struct droce_pkt *pkt, struct l3_info *l3)
{
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)p;
	uint32_t plen;

	if (first_len < sizeof(*ip))
		return DROCE_PARSE_MALFORMED;
	plen = rte_be_to_cpu_16(ip->payload_len);
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6 ||
	    sizeof(*ip) + plen > frame_len)
		return DROCE_PARSE_MALFORMED;
	if (ip->proto != IPPROTO_UDP)
		return DROCE_PARSE_NOT_ROCE;
	pkt->ipv6 = true;
	pkt->tclass = (uint8_t)(rte_be_to_cpu_32(ip->vtc_flow) >> 20);
	memcpy(pkt->sgid, ip->src_addr, 16);
	memcpy(pkt->dgid, ip->dst_addr, 16);
	l3->hdr_len = sizeof(*ip);
	l3->l4_len = plen;
	l3->more_frags = false;
	return DROCE_PARSE_OK;
}

static enum droce_parse_err
parse(struct rte_mbuf *m, struct droce_pkt *pkt)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t first_len = rte_pktmbuf_data_len(m);
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)p;
	const struct rte_udp_hdr *udp;
	const struct droce_bth *bth;
	const struct droce_opcode_info *op;
	struct l3_info l3;
	enum droce_parse_err err;
	uint32_t off, udp_len, rest;
	uint16_t ether_type;

	if (first_len < sizeof(*eth))
		return DROCE_PARSE_MALFORMED;
	off = sizeof(*eth);
	ether_type = rte_be_to_cpu_16(eth->ether_type);
	pkt->vlan_tci = 0;
	if (ether_type == RTE_ETHER_TYPE_VLAN) {
		const struct rte_vlan_hdr *vlan =
			(const struct rte_vlan_hdr *)(p + off);

		if (first_len < off + sizeof(*vlan))
			return DROCE_PARSE_MALFORMED;
		pkt->vlan_tci = rte_be_to_cpu_16(vlan->vlan_tci);
		ether_type = rte_be_to_cpu_16(vlan->eth_proto);
		off += sizeof(*vlan);
	}
	rte_ether_addr_copy(&eth->src_addr, &pkt->src_mac);
	pkt->l3_off = (uint16_t)off;

	/* The IP length, not the frame's, ends the packet: Ethernet pads short frames. */
	if (ether_type == RTE_ETHER_TYPE_IPV4)
		err = parse_ipv4(p + off, first_len - off,
				 rte_pktmbuf_pkt_len(m) - off, pkt, &l3);
	else if (ether_type == RTE_ETHER_TYPE_IPV6)
		err = parse_ipv6(p + off, first_len - off,
				 rte_pktmbuf_pkt_len(m) - off, pkt, &l3);
	else
		err = DROCE_PARSE_NOT_ROCE;
	if (err != DROCE_PARSE_OK)
		return err;
	off += l3.hdr_len;
	pkt->l4_off = (uint16_t)off;

	udp = (const struct rte_udp_hdr *)(p + off);
	if (l3.l4_len < sizeof(*udp) || first_len < off + sizeof(*udp))
		return DROCE_PARSE_MALFORMED;
	if (udp->dst_port != RTE_BE16(DROCE_UDP_PORT))
		return DROCE_PARSE_NOT_ROCE;
	/* RoCE is never fragmented: nobody reassembles it. */
	if (l3.more_frags)
		return DROCE_PARSE_MALFORMED;
	udp_len = rte_be_to_cpu_16(udp->dgram_len);
	if (udp_len != l3.l4_len ||
	    udp_len < sizeof(*udp) + sizeof(*bth) + DROCE_ICRC_LEN)
		return DROCE_PARSE_MALFORMED;
	pkt->udp_sport = rte_be_to_cpu_16(udp->src_port);
	off += sizeof(*udp);
	pkt->bth_off = (uint16_t)off;

	if (first_len < off + sizeof(*bth))
		return DROCE_PARSE_MALFORMED;
	bth = (const struct droce_bth *)(p + off);
	op = &droce_opcode_table[bth->opcode];
	if (op->name == NULL)
		return DROCE_PARSE_BAD_OPCODE;
	/* TVer is the low nibble of the flags byte and must be 0. */
	if ((bth->flags & 0x0f) != 0)
		return DROCE_PARSE_MALFORMED;
	/* Bytes after the extension headers: payload, pad and ICRC. */
	rest = udp_len - (uint32_t)sizeof(*udp);
	if (first_len < off + op->hdr_len ||
	    rest < op->hdr_len + droce_bth_pad(bth) + DROCE_ICRC_LEN)
		return DROCE_PARSE_MALFORMED;
	pkt->op = op;
	pkt->opcode = bth->opcode;
	pkt->pad = (uint8_t)droce_bth_pad(bth);
	pkt->payload_off = (uint16_t)(off + op->hdr_len);
	pkt->payload_len = rest - op->hdr_len - pkt->pad - DROCE_ICRC_LEN;
	/* Nothing, not even pad, follows the headers of an ACK, a READ request... */
	if ((pkt->payload_len != 0 || pkt->pad != 0) &&
	    !(op->flags & DROCE_OPF_PAYLOAD))
		return DROCE_PARSE_MALFORMED;
	pkt->qpn = droce_bth_qpn(bth);
	pkt->psn = droce_bth_psn(bth);
	return DROCE_PARSE_OK;
}

enum droce_parse_err
droce_pkt_parse(struct rte_mbuf *m, struct droce_pkt *pkt, bool check_icrc)
{
	enum droce_parse_err err = parse(m, pkt);

	if (err == DROCE_PARSE_OK && check_icrc && !droce_icrc_check_pkt(m, pkt, NULL))
		err = DROCE_PARSE_BAD_ICRC;
	return err;
}

/*
 * Header prediction (droce_pkt_predict()). A frame's bytes up to the
 * BTH's destination QP, but for the lengths, the checksums, IPv4's
 * identification, the opcode and the pad count, are compared with the
 * last frame's under a mask (predict_same()). There is one layout per
 * IP version and 802.1Q tag (no IP options or IPv6 extension headers),
 * each compiled on its own: its offsets, its length and the place of its
 * mask are constants. Whatever
 * else differs from the last frame (another QP, an ECN mark) leaves the
 * frame to parse(). The opcode may differ, as it does from a message's
 * FIRST packet to its MIDDLE and LAST ones: it only decides the
 * extension headers, which the opcode table's row says, and parse()
 * judges nothing else by it.
 */

#define PREDICT_WORDS (DROCE_PKT_PREDICT_LEN / 8) /* the longest, 802.1Q + IPv6, needs 74 */

/* [IPv6][802.1Q tag][word]: ones where the layout's bytes are compared. */
static uint64_t predict_masks[2][2][PREDICT_WORDS];

/* Which bytes a layout compares, its IP header at @p l3: all of the
 * headers but the IP length (and IPv4's identification and checksum),
 * the UDP length and checksum; the BTH to its QPN but for the opcode. */
RTE_INIT(droce_pkt_predict_init)
{
	for (unsigned v6 = 0; v6 < 2; v6++) {
		for (unsigned tag = 0; tag < 2; tag++) {
			unsigned l3 = sizeof(struct rte_ether_hdr) +
				      (tag ? sizeof(struct rte_vlan_hdr) : 0);
			unsigned l4 = l3 + (v6 ? sizeof(struct rte_ipv6_hdr) :
						 sizeof(struct rte_ipv4_hdr));
			unsigned bth = l4 + sizeof(struct rte_udp_hdr);
			uint8_t mask[PREDICT_WORDS * 8] = { 0 };

			if (v6) {
				memset(mask, 0xff, l3 + 4);
				memset(mask + l3 + 6, 0xff, l4 + 4 - (l3 + 6));
			} else {
				memset(mask, 0xff, l3 + 2);
				memset(mask + l3 + 6, 0xff, 4);
				memset(mask + l3 + 12, 0xff, l4 + 4 - (l3 + 12));
			}
			memset(mask + bth, 0xff, 8);
			/* The opcode and the pad count may differ (read from the frame). */
			mask[bth] = 0;
			mask[bth + 1] = (uint8_t)~DROCE_BTH_PAD_MASK;
			memcpy(predict_masks[v6][tag], mask, sizeof(mask));
		}
	}
}

#ifdef __AVX2__
/* Where the 32 bytes at @p off of @p a and @p b differ under @p mask. */
static inline __attribute__((always_inline)) __m256i
predict_diff32(const uint8_t *a, const uint8_t *b, const uint8_t *mask, unsigned off)
{
	__m256i x = _mm256_loadu_si256((const __m256i *)(a + off));
	__m256i y = _mm256_loadu_si256((const __m256i *)(b + off));

	return _mm256_and_si256(_mm256_xor_si256(x, y),
				_mm256_loadu_si256((const __m256i *)(mask + off)));
}
#endif

/*
 * The @p n bytes at @p a and @p b (@p n a constant, 56 to 80) are the
 * same where @p mask has ones. With AVX2 32 bytes at a time, the last
 * step ending at byte n (it reads again some bytes the one before read):
 * two steps for IPv4, three for IPv6, where 8 bytes at a time took seven
 * to ten and some 25 instructions more per frame. Without, 8 at a time.
 */
static inline __attribute__((always_inline)) bool
predict_same(const uint8_t *a, const uint8_t *b, const uint64_t *mask, const unsigned n)
{
#ifdef __AVX2__
	const uint8_t *mk = (const uint8_t *)mask;
	__m256i diff = predict_diff32(a, b, mk, n - 32);

	for (unsigned off = 0; off + 32 < n; off += 32)
		diff = _mm256_or_si256(diff, predict_diff32(a, b, mk, off));
	return _mm256_testz_si256(diff, diff);
#else
	uint64_t diff = 0;

#pragma GCC unroll 10
	for (unsigned i = 0; i < n / 8; i++) {
		uint64_t x, y;

		memcpy(&x, a + 8 * i, sizeof(x));
		memcpy(&y, b + 8 * i, sizeof(y));
		diff |= (x ^ y) & mask[i];
	}
	return diff == 0;
#endif
}

/* droce_pkt_predict() for the layout of @p l3 and @p v6 (constants). */
static inline __attribute__((always_inline)) bool
predict_layout(const uint8_t *a, uint32_t prev_len, const struct droce_pkt *prev_pkt,
	       const struct rte_mbuf *m, struct droce_pkt *pkt, const unsigned l3, const bool v6)
{
	const unsigned l4 = l3 + (v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr));
	const unsigned bth_off = l4 + sizeof(struct rte_udp_hdr);
	const unsigned words = (bth_off + 8 + 7) / 8;
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct droce_bth *bth = (const struct droce_bth *)(b + bth_off);
	const struct droce_opcode_info *op;
	uint32_t frame_len = rte_pktmbuf_pkt_len(m) - l3;
	uint32_t l4_len, udp_len, rest, payload_len, payload_off;
	unsigned pad;
	uint16_t v;

	RTE_BUILD_BUG_ON((sizeof(struct rte_ether_hdr) + sizeof(struct rte_vlan_hdr) +
			  sizeof(struct rte_ipv6_hdr) + sizeof(struct rte_udp_hdr) + 8 + 7) / 8 >
			 PREDICT_WORDS);
	/* The words compared, in both frames. */
	if (rte_pktmbuf_data_len(m) < words * 8 || prev_len < words * 8)
		return false;
	if (!predict_same(a, b, predict_masks[v6][l3 != sizeof(struct rte_ether_hdr)], words * 8))
		return false;
	/* Its own opcode (the last frame's, mostly), and every extension
	 * header it has in the first segment, as parse() requires. */
	if (likely(bth->opcode == prev_pkt->opcode)) {
		op = prev_pkt->op;
		payload_off = prev_pkt->payload_off;
	} else {
		op = &droce_opcode_table[bth->opcode];
		if (op->name == NULL)
			return false;
		payload_off = bth_off + op->hdr_len;
	}
	if (rte_pktmbuf_data_len(m) < payload_off)
		return false;
	/* The same headers: only what parse() checks of the lengths is left. */
	memcpy(&v, b + l3 + (v6 ? offsetof(struct rte_ipv6_hdr, payload_len) :
			       offsetof(struct rte_ipv4_hdr, total_length)), sizeof(v));
	l4_len = rte_be_to_cpu_16(v);
	if (v6) {
		if (sizeof(struct rte_ipv6_hdr) + l4_len > frame_len)
			return false;
	} else {
		if (l4_len < sizeof(struct rte_ipv4_hdr) || l4_len > frame_len)
			return false;
		l4_len -= sizeof(struct rte_ipv4_hdr);
	}
	memcpy(&v, b + l4 + offsetof(struct rte_udp_hdr, dgram_len), sizeof(v));
	udp_len = rte_be_to_cpu_16(v);
	if (udp_len != l4_len ||
	    udp_len < sizeof(struct rte_udp_hdr) + sizeof(struct droce_bth) + DROCE_ICRC_LEN)
		return false;
	rest = udp_len - (uint32_t)sizeof(struct rte_udp_hdr);
	pad = droce_bth_pad(bth);
	if (rest < (uint32_t)op->hdr_len + pad + DROCE_ICRC_LEN)
		return false;
	payload_len = rest - op->hdr_len - pad - DROCE_ICRC_LEN;
	if ((payload_len != 0 || pad != 0) && !(op->flags & DROCE_OPF_PAYLOAD))
		return false;
	*pkt = *prev_pkt;
	pkt->op = op;
	pkt->opcode = bth->opcode;
	pkt->payload_off = (uint16_t)payload_off;
	pkt->pad = (uint8_t)pad;
	pkt->payload_len = payload_len;
	pkt->psn = droce_bth_psn(bth);
	return true;
}

bool
droce_pkt_predict(const uint8_t *prev, uint32_t prev_len, const struct droce_pkt *prev_pkt,
		  const struct rte_mbuf *m, struct droce_pkt *pkt)
{
	const unsigned eth = sizeof(struct rte_ether_hdr), tag = sizeof(struct rte_vlan_hdr);
	const bool v6 = prev_pkt->ipv6;

	/* No IP options, no IPv6 extension headers. */
	if ((size_t)(prev_pkt->l4_off - prev_pkt->l3_off) !=
	    (v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr)))
		return false;
	/* Each layout with its own constants. */
	if (prev_pkt->l3_off == eth)
		return v6 ? predict_layout(prev, prev_len, prev_pkt, m, pkt, eth, true) :
			    predict_layout(prev, prev_len, prev_pkt, m, pkt, eth, false);
	if (prev_pkt->l3_off == eth + tag)
		return v6 ? predict_layout(prev, prev_len, prev_pkt, m, pkt, eth + tag, true) :
			    predict_layout(prev, prev_len, prev_pkt, m, pkt, eth + tag, false);
	return false;
}

unsigned
droce_l3_hdr_len(const struct droce_l3_addr *a)
{
	return (unsigned)(sizeof(struct rte_ether_hdr) +
			  (a->vlan_tci ? sizeof(struct rte_vlan_hdr) : 0) +
			  (a->ipv6 ? sizeof(struct rte_ipv6_hdr) :
				     sizeof(struct rte_ipv4_hdr)) +
			  sizeof(struct rte_udp_hdr));
}

static void
write_ipv4(struct rte_ipv4_hdr *ip, const struct droce_l3_addr *a,
	   uint32_t udp_len)
{
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = a->tclass;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + udp_len));
	ip->packet_id = rte_cpu_to_be_16(a->ip_id);
	/* RoCE must not be fragmented: the receiver cannot reassemble. */
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = a->ttl;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	memcpy(&ip->src_addr, a->sgid + 12, sizeof(ip->src_addr));
	memcpy(&ip->dst_addr, a->dgid + 12, sizeof(ip->dst_addr));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static void
write_ipv6(struct rte_ipv6_hdr *ip, const struct droce_l3_addr *a,
	   uint32_t udp_len)
{
	ip->vtc_flow = rte_cpu_to_be_32((6u << 28) | ((uint32_t)a->tclass << 20) |
					(a->flow_label & 0xfffff));
	ip->payload_len = rte_cpu_to_be_16((uint16_t)udp_len);
	ip->proto = IPPROTO_UDP;
	ip->hop_limits = a->ttl;
	memcpy(ip->src_addr, a->sgid, sizeof(ip->src_addr));
	memcpy(ip->dst_addr, a->dgid, sizeof(ip->dst_addr));
}

unsigned
droce_l3_hdr_write(struct rte_mbuf *m, const struct droce_l3_addr *a,
		   uint32_t l4_payload_len)
{
	return droce_l3_hdr_write_buf(rte_pktmbuf_mtod(m, uint8_t *), a, l4_payload_len);
}

unsigned
droce_l3_hdr_write_buf(uint8_t *p, const struct droce_l3_addr *a, uint32_t l4_payload_len)
{
	uint32_t udp_len = (uint32_t)sizeof(struct rte_udp_hdr) + l4_payload_len +
			   DROCE_ICRC_LEN;
	struct rte_udp_hdr *udp;
	unsigned off;

	off = droce_eth_hdr_write(p, &a->dst_mac, &a->src_mac, a->vlan_tci,
				  a->ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (a->ipv6) {
		write_ipv6((struct rte_ipv6_hdr *)(p + off), a, udp_len);
		off += sizeof(struct rte_ipv6_hdr);
	} else {
		write_ipv4((struct rte_ipv4_hdr *)(p + off), a, udp_len);
		off += sizeof(struct rte_ipv4_hdr);
	}
	udp = (struct rte_udp_hdr *)(p + off);
	udp->src_port = rte_cpu_to_be_16(a->udp_sport);
	udp->dst_port = RTE_BE16(DROCE_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)udp_len);
	udp->dgram_cksum = 0;
	return off + (unsigned)sizeof(*udp);
}
