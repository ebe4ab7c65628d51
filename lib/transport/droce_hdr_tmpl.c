/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_hdr_tmpl.h"

struct droce_hdr_tmpl *
droce_hdr_tmpl_get(struct droce_hdr_tmpl *t, const struct droce_l3_addr *l3, uint16_t udp_sport,
		   uint8_t tclass)
{
	if (likely(t->valid && t->udp_sport == udp_sport && t->tclass == tclass &&
		   memcmp(&t->l3, l3, sizeof(*l3)) == 0))
		return t;
	return droce_hdr_tmpl_build(t, l3, udp_sport, tclass);
}

struct droce_hdr_tmpl *
droce_hdr_tmpl_build(struct droce_hdr_tmpl *t, const struct droce_l3_addr *l3,
		     uint16_t udp_sport, uint8_t tclass)
{
	struct droce_l3_addr a;
	uint8_t *ip;

	memcpy(&t->l3, l3, sizeof(*l3));
	t->udp_sport = udp_sport;
	t->tclass = tclass;
	a = *l3;
	a.udp_sport = udp_sport;
	a.tclass = tclass;
	RTE_BUILD_BUG_ON(DROCE_HDR_TMPL_COPY < DROCE_HDR_TMPL_MAX);
	memset(t->sent, 0, sizeof(t->sent));
	t->len = (uint8_t)droce_l3_hdr_write_buf(t->sent, &a, 0);
	t->l2_len = (uint8_t)(RTE_ETHER_HDR_LEN + (l3->vlan_tci ? sizeof(struct rte_vlan_hdr) : 0));
	ip = t->sent + t->l2_len;
	/* What the checksum sums, for the update per frame. */
	t->ip_sum = l3->ipv6 ? 0 : (uint16_t)~((struct rte_ipv4_hdr *)ip)->hdr_checksum;
	t->tx_offload = rte_mbuf_tx_offload(t->l2_len,
					    t->len - t->l2_len - sizeof(struct rte_udp_hdr),
					    sizeof(struct rte_udp_hdr), 0, 0, 0, 0);
	t->local = -1;
	t->valid = true;
	return t;
}

/* Where the ICRC of a frame to seal starts, and what it covers. */
struct seal_span {
	uint8_t *p;              /* the LRH's place */
	uint32_t len;            /* bytes up to the ICRC */
	bool ipv6;
};

static inline struct seal_span
seal_span(struct rte_mbuf *m)
{
	uint32_t start = m->l2_len - DROCE_ICRC_LRH_LEN;

	return (struct seal_span){
		.p = rte_pktmbuf_mtod_offset(m, uint8_t *, start),
		.len = rte_pktmbuf_data_len(m) - DROCE_ICRC_LEN - start,
		.ipv6 = m->l3_len == sizeof(struct rte_ipv6_hdr),
	};
}

static inline void
seal_put(const struct seal_span *s, uint32_t crc)
{
	crc = rte_cpu_to_le_32(crc);
	memcpy(s->p + s->len, &crc, DROCE_ICRC_LEN);
}

/* Seal one frame by its span. */
static inline void
seal_one(const struct seal_span *s)
{
	seal_put(s, droce_crc32_masked(s->p, s->len, droce_icrc_mask(s->ipv6)));
}

void
droce_hdr_tmpl_seal(struct rte_mbuf *m)
{
	struct seal_span s = seal_span(m);

	seal_one(&s);
}

/* Seal four frames whose spans have one length and IP version. The
 * CRCs are written one by one: GCC 12 turns a loop of these four stores
 * into a scatter with 32-bit addresses, which faults. */
static void
seal4(const struct seal_span s[4])
{
	const uint8_t *p[4] = { s[0].p, s[1].p, s[2].p, s[3].p };
	uint32_t crc[4];

	droce_crc32_masked4(p, s[0].len, droce_icrc_mask(s[0].ipv6), crc);
	seal_put(&s[0], crc[0]);
	seal_put(&s[1], crc[1]);
	seal_put(&s[2], crc[2]);
	seal_put(&s[3], crc[3]);
}

/* Seal the frames of @p which from its lowest bit on that are alike (one
 * ICRC length and IP version), up to four: four together, fewer one by
 * one. @return how many it sealed. */
static unsigned
seal_run(struct rte_mbuf *const *pkts, uint64_t which)
{
	struct seal_span s[4];
	unsigned k, i;

	for (k = 0; k < 4; k++, which &= which - 1) {
		s[k] = seal_span(pkts[rte_bsf64(which)]);
		if (k > 0 && (s[k].len != s[0].len || s[k].ipv6 != s[0].ipv6))
			break;
	}
	if (k == 4) {
		seal4(s);
		return 4;
	}
	for (i = 0; i < k; i++)
		seal_one(&s[i]);
	return k;
}

void
droce_hdr_tmpl_seal_burst(struct rte_mbuf *const *pkts, uint64_t which)
{
	/* A latency test's one or two frames do not ask the CPU. */
	bool wide = __builtin_popcountll(which) >= 4 && droce_crc32_masked4_wide();
	unsigned n;

	while (which != 0) {
		/* Fewer than four left, or a CPU that would make four calls
		 * anyway: one by one. */
		if (!wide || __builtin_popcountll(which) < 4) {
			droce_hdr_tmpl_seal(pkts[rte_bsf64(which)]);
			which &= which - 1;
			continue;
		}
		for (n = seal_run(pkts, which); n > 0; n--)
			which &= which - 1;
	}
}
