/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3): CRC-32 with the Ethernet
 * polynomial, as zlib computes it, over
 *   8 bytes of ones (the LRH an InfiniBand packet would have)
 *   || the IP header with the fields routers change masked to ones
 *   || the UDP header with its checksum masked to ones
 *   || the BTH with resv8a (FECN/BECN) masked to ones
 *   || everything after the BTH up to the ICRC.
 * The CRC is sent little-endian.
 *
 * A frame in one segment without IP options (nearly every frame) goes
 * through droce_crc32_masked() when short, droce_crc32_beside_masked()
 * when long: both set the masked bits as they read (the 8 bytes before
 * the IP header belong to the Ethernet header and read as the ones), and
 * the frame is only read (but for a long one on a CPU without PCLMULQDQ,
 * whose rte_net_crc takes no mask: its first bytes are masked in place
 * and put back). Others: droce_crc32() takes one contiguous buffer and
 * no seed, so the masked bytes are
 * written in place, the whole frame goes through one call, and the saved
 * bytes are put back. Chained mbufs get one call per segment, joined as
 * zlib's crc32_combine() does (icrc_join()).
 */
#include <stddef.h>
#include <string.h>
#include <zlib.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>
#include <rte_vect.h>

#include "droce_wire.h"

/* The most bytes masking touches: LRH, IPv4 with options (or IPv6), UDP, BTH. */
#define ICRC_MASK_MAX (DROCE_ICRC_LRH_LEN + 60 + sizeof(struct rte_udp_hdr) + \
		       sizeof(struct droce_bth))

/*
 * What the masking does to a frame without IP options, as a mask from
 * the LRH's first byte for droce_crc32_masked(): runs shorter than
 * DROCE_CRC_MASKED_MAX in one segment (the common frame) take it instead
 * of the masking in place.
 */
#define ONES(off) [16 + (off)] = 0xff
#define LRH_ONES ONES(0), ONES(1), ONES(2), ONES(3), ONES(4), ONES(5), ONES(6), ONES(7)
#define V4_UDP (DROCE_ICRC_LRH_LEN + sizeof(struct rte_ipv4_hdr))
#define V6_UDP (DROCE_ICRC_LRH_LEN + sizeof(struct rte_ipv6_hdr))
#define BTH_RESV8A (sizeof(struct rte_udp_hdr) + offsetof(struct droce_bth, resv8a))

static const struct droce_crc_mask icrc_mask_v4 = { .b = {
	LRH_ONES,
	ONES(DROCE_ICRC_LRH_LEN + offsetof(struct rte_ipv4_hdr, type_of_service)),
	ONES(DROCE_ICRC_LRH_LEN + offsetof(struct rte_ipv4_hdr, time_to_live)),
	ONES(DROCE_ICRC_LRH_LEN + offsetof(struct rte_ipv4_hdr, hdr_checksum)),
	ONES(DROCE_ICRC_LRH_LEN + offsetof(struct rte_ipv4_hdr, hdr_checksum) + 1),
	ONES(V4_UDP + offsetof(struct rte_udp_hdr, dgram_cksum)),
	ONES(V4_UDP + offsetof(struct rte_udp_hdr, dgram_cksum) + 1),
	ONES(V4_UDP + BTH_RESV8A),
} };

static const struct droce_crc_mask icrc_mask_v6 = { .b = {
	LRH_ONES,
	/* Traffic class and flow label, keeping the version. */
	[16 + DROCE_ICRC_LRH_LEN] = 0x0f, ONES(DROCE_ICRC_LRH_LEN + 1), ONES(DROCE_ICRC_LRH_LEN + 2),
	ONES(DROCE_ICRC_LRH_LEN + 3),
	ONES(DROCE_ICRC_LRH_LEN + offsetof(struct rte_ipv6_hdr, hop_limits)),
	ONES(V6_UDP + offsetof(struct rte_udp_hdr, dgram_cksum)),
	ONES(V6_UDP + offsetof(struct rte_udp_hdr, dgram_cksum) + 1),
	ONES(V6_UDP + BTH_RESV8A),
} };

const struct droce_crc_mask *
droce_icrc_mask(bool ipv6)
{
	return ipv6 ? &icrc_mask_v6 : &icrc_mask_v4;
}

/* Where the ICRC of a frame starts and ends, from its own IP header. */
struct icrc_span {
	uint32_t start;     /**< first byte of the masked LRH */
	uint32_t l4_off;    /**< UDP header */
	uint32_t mask_end;  /**< end of the BTH: the last byte masking touches */
	uint32_t end;       /**< first byte of the ICRC */
	bool ipv6;
};

/*
 * Find the span from the IP header at @p l3_off. The IP length, not the
 * mbuf's, ends the packet, so Ethernet padding after it is ignored.
 * @return false when the frame is too short to hold the headers it names.
 */
static bool
icrc_span(const struct rte_mbuf *m, uint16_t l3_off, struct icrc_span *s)
{
	const uint8_t *ip = rte_pktmbuf_mtod_offset(m, const uint8_t *, l3_off);
	uint32_t first_len = rte_pktmbuf_data_len(m);
	uint32_t l3_len, ip_len;

	if (l3_off < DROCE_ICRC_LRH_LEN || first_len <= l3_off)
		return false;
	s->ipv6 = (ip[0] >> 4) == 6;
	if (s->ipv6) {
		const struct rte_ipv6_hdr *h = (const struct rte_ipv6_hdr *)ip;

		if (first_len - l3_off < sizeof(*h))
			return false;
		l3_len = sizeof(*h);
		ip_len = l3_len + rte_be_to_cpu_16(h->payload_len);
	} else {
		const struct rte_ipv4_hdr *h = (const struct rte_ipv4_hdr *)ip;

		if ((ip[0] >> 4) != 4 || first_len - l3_off < sizeof(*h))
			return false;
		l3_len = rte_ipv4_hdr_len(h);
		if (l3_len < sizeof(*h))
			return false;
		ip_len = rte_be_to_cpu_16(h->total_length);
	}
	s->start = l3_off - DROCE_ICRC_LRH_LEN;
	s->l4_off = l3_off + l3_len;
	s->mask_end = s->l4_off + sizeof(struct rte_udp_hdr) +
		      sizeof(struct droce_bth);
	if (s->mask_end > first_len ||
	    ip_len < s->mask_end - l3_off + DROCE_ICRC_LEN)
		return false;
	s->end = l3_off + ip_len - DROCE_ICRC_LEN;
	return s->end <= rte_pktmbuf_pkt_len(m);
}

/* Mask the headers before the BTH of a frame whose IP header (of @p
 * ip_hdr_len bytes) is at @p ip: the 8 bytes before it (the LRH) and the
 * fields routers change become ones, and the UDP checksum after it. */
static void
icrc_mask_l3(uint8_t *ip, bool ipv6, unsigned ip_hdr_len)
{
	memset(ip - DROCE_ICRC_LRH_LEN, 0xff, DROCE_ICRC_LRH_LEN);
	if (ipv6) {
		struct rte_ipv6_hdr *h = (struct rte_ipv6_hdr *)ip;

		/* Traffic class and flow label, keeping the version. */
		h->vtc_flow |= RTE_BE32(0x0fffffff);
		h->hop_limits = 0xff;
	} else {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		h->type_of_service = 0xff;
		h->time_to_live = 0xff;
		h->hdr_checksum = 0xffff;
	}
	((struct rte_udp_hdr *)(ip + ip_hdr_len))->dgram_cksum = 0xffff;
}

static void
icrc_mask(uint8_t *p, const struct icrc_span *s)
{
	uint8_t *ip = p + s->start + DROCE_ICRC_LRH_LEN;

	icrc_mask_l3(ip, s->ipv6, s->l4_off - (s->start + DROCE_ICRC_LRH_LEN));
	((struct droce_bth *)(p + s->l4_off + sizeof(struct rte_udp_hdr)))->resv8a = 0xff;
}

/*
 * Joining the CRCs of two runs: crc(A || B) = crc(A) x^(8|B|) mod P ^
 * crc(B), which zlib's crc32_combine() computes in about 400 cycles. The
 * product is linear in crc(A), so for a length that keeps coming (a
 * zero-copy frame's payload at the path MTU, a PMD's segment size) a
 * table per byte of crc(A) makes it four lookups. Built once the same
 * length came ICRC_JOIN_HOT times in a row; per thread, as each engine
 * sees its own lengths.
 */
#define ICRC_JOIN_HOT 8

struct icrc_join {
	uint32_t len;            /* the length the table is for; 0: none */
	uint32_t cand, streak;   /* the last other length, and how often in a row */
	uint32_t t[4][256];
};
static __thread struct icrc_join icrc_join_tab;

static uint32_t
icrc_join(uint32_t crc1, uint32_t crc2, uint32_t len2)
{
	struct icrc_join *j = &icrc_join_tab;

	if (len2 != j->len) {
		j->streak = len2 == j->cand ? j->streak + 1 : 1;
		j->cand = len2;
		if (j->streak < ICRC_JOIN_HOT)
			return (uint32_t)crc32_combine(crc1, crc2, len2);
		uLong op = crc32_combine_gen(len2);

		for (unsigned k = 0; k < 4; k++)
			for (unsigned v = 0; v < 256; v++)
				j->t[k][v] = (uint32_t)crc32_combine_op((uLong)v << (8 * k), 0, op);
		j->len = len2;
	}
	return j->t[0][crc1 & 0xff] ^ j->t[1][(crc1 >> 8) & 0xff] ^
	       j->t[2][(crc1 >> 16) & 0xff] ^ j->t[3][crc1 >> 24] ^ crc2;
}

/* The ICRC of the @p len bytes at @p p (from the LRH's place) of a frame
 * in one segment without IP options: its mask ORed in as the bytes are
 * read. With @p side (not NULL), the copy it holds is made on the way
 * where the frame is long. */
static __rte_always_inline uint32_t
icrc_flat(uint8_t *p, uint32_t len, bool ipv6, struct droce_side_copy *side)
{
	if (len < DROCE_CRC_MASKED_MAX)
		return droce_crc32_masked(p, len, droce_icrc_mask(ipv6));
	return droce_crc32_beside_masked(p, len, droce_icrc_mask(ipv6), side);
}

/* The ICRC of the frame @p s spans; with @p side (not NULL), the copy it
 * holds is made on the way where the frame is long and in one segment. */
static uint32_t
icrc_compute(struct rte_mbuf *m, const struct icrc_span *s, struct droce_side_copy *side)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t first_len = rte_pktmbuf_data_len(m);
	uint32_t mask_len = s->mask_end - s->start;
	uint8_t saved[ICRC_MASK_MAX];
	const struct rte_mbuf *seg;
	uint32_t crc, left;

	if (s->end <= first_len && mask_len == (s->ipv6 ? V6_UDP : V4_UDP) +
			sizeof(struct rte_udp_hdr) + sizeof(struct droce_bth))
		return icrc_flat(p + s->start, s->end - s->start, s->ipv6, side);
	/* IP options, or chained: masked in place, and put back. */
	memcpy(saved, p + s->start, mask_len);
	icrc_mask(p, s);
	if (s->end <= first_len) {
		crc = side != NULL ? droce_crc32_beside(p + s->start, s->end - s->start, side) :
		      droce_crc32(p + s->start, s->end - s->start);
	} else {
		crc = droce_crc32(p + s->start, first_len - s->start);
		left = s->end - first_len;
		for (seg = m->next; seg != NULL && left != 0; seg = seg->next) {
			uint32_t n = RTE_MIN(left, (uint32_t)rte_pktmbuf_data_len(seg));

			if (n == 0)
				continue;
			crc = icrc_join(crc, droce_crc32(rte_pktmbuf_mtod(seg, const void *), n),
					n);
			left -= n;
		}
	}
	memcpy(p + s->start, saved, mask_len);
	return crc;
}

uint32_t
droce_icrc_calc(struct rte_mbuf *m, uint16_t l3_off)
{
	struct icrc_span s;

	if (!icrc_span(m, l3_off, &s))
		return 0;
	return icrc_compute(m, &s, NULL);
}

int
droce_icrc_append(struct rte_mbuf *m, uint16_t l3_off)
{
	struct icrc_span s;
	uint32_t crc;
	uint8_t *t;

	/* The IP length counts the ICRC: the frame must end where it goes. */
	if (!icrc_span(m, l3_off, &s) || s.end != rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	crc = icrc_compute(m, &s, NULL);
	t = (uint8_t *)rte_pktmbuf_append(m, DROCE_ICRC_LEN);
	if (t == NULL)
		return -ENOMEM;
	crc = rte_cpu_to_le_32(crc);
	memcpy(t, &crc, DROCE_ICRC_LEN);
	return 0;
}

/* droce_icrc_check(), with @p side as icrc_compute() takes it. */
static bool
icrc_check(struct rte_mbuf *m, uint16_t l3_off, struct droce_side_copy *side)
{
	struct icrc_span s;
	uint32_t wire, buf;
	const void *p;

	if (!icrc_span(m, l3_off, &s) ||
	    rte_pktmbuf_pkt_len(m) - s.end < DROCE_ICRC_LEN)
		return false;
	/* The ICRC may straddle two segments. */
	p = rte_pktmbuf_read(m, s.end, DROCE_ICRC_LEN, &buf);
	if (p == NULL)
		return false;
	memcpy(&wire, p, sizeof(wire));
	return rte_le_to_cpu_32(wire) == icrc_compute(m, &s, side);
}

bool
droce_icrc_check(struct rte_mbuf *m, uint16_t l3_off)
{
	return icrc_check(m, l3_off, NULL);
}

/* The ICRC's span of the parsed frame @p pkt, from the LRH's place to
 * the ICRC. @return whether it is the common frame: in one segment with
 * its ICRC, no IP options. */
static inline bool
icrc_pkt_flat(const struct rte_mbuf *m, const struct droce_pkt *pkt, uint32_t *start,
	      uint32_t *end)
{
	*start = pkt->l3_off - DROCE_ICRC_LRH_LEN;
	*end = pkt->payload_off + pkt->payload_len + pkt->pad;
	return *end + DROCE_ICRC_LEN <= rte_pktmbuf_data_len(m) &&
	       pkt->l4_off == pkt->l3_off + (pkt->ipv6 ? V6_UDP : V4_UDP) - DROCE_ICRC_LRH_LEN;
}

const uint8_t *
droce_icrc_short_span(const struct rte_mbuf *m, const struct droce_pkt *pkt, uint32_t *len)
{
	uint32_t start, end;

	if (!icrc_pkt_flat(m, pkt, &start, &end) || end - start >= DROCE_CRC_MASKED_MAX)
		return NULL;
	*len = end - start;
	return rte_pktmbuf_mtod_offset(m, const uint8_t *, start);
}

bool
droce_icrc_check_pkt(struct rte_mbuf *m, const struct droce_pkt *pkt,
		     struct droce_side_copy *side)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t start, end;
	uint32_t wire;
	bool ok;

	if (icrc_pkt_flat(m, pkt, &start, &end)) {
		memcpy(&wire, p + end, sizeof(wire));
		ok = rte_le_to_cpu_32(wire) == icrc_flat(p + start, end - start, pkt->ipv6, side);
	} else {
		ok = icrc_check(m, pkt->l3_off, side);
	}
	/* Whatever was not made on the way (or a frame too short to tell). */
	if (side != NULL)
		droce_side_copy_run(side);
	return ok;
}

const char *
droce_icrc_init(void)
{
	droce_crc32_init();
	droce_copy_init();
#ifdef RTE_ARCH_X86
	/*
	 * rte_net_crc picks AVX-512 only when the EAL allows 512-bit SIMD,
	 * which it does not by default, and falls back without telling: so
	 * raise the limit first (it stays lower when the user forced it with
	 * --force-max-simd-bitwidth) and check the same conditions it does.
	 */
	bool avx512 = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512F) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512BW) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512DQ) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX512VL) > 0 &&
		      rte_cpu_get_flag_enabled(RTE_CPUFLAG_VPCLMULQDQ) > 0;
	bool pclmul = rte_cpu_get_flag_enabled(RTE_CPUFLAG_PCLMULQDQ) > 0;

	if (avx512 && pclmul) {
		if (rte_vect_get_max_simd_bitwidth() < RTE_VECT_SIMD_512)
			rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
		if (rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_512) {
			rte_net_crc_set_alg(RTE_NET_CRC_AVX512);
			return "avx512";
		}
	}
	if (pclmul && rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_128) {
		rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
		return "sse42";
	}
#endif
	rte_net_crc_set_alg(RTE_NET_CRC_SCALAR);
	return "scalar";
}
