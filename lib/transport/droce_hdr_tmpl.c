/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_hdr_tmpl.h"

/* The UDP and IP lengths of a frame with no L4 payload: UDP header and ICRC. */
#define UDP_LEN0 (sizeof(struct rte_udp_hdr) + DROCE_ICRC_LEN)

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

/* The sent headers with the lengths of an L4 payload of @p l4_len bytes;
 * the IPv4 checksum grows by the L4 length the total length gained
 * (ones' complement sums add in either byte order, so the big-endian
 * addend goes in as it lies). */
unsigned
droce_hdr_tmpl_start(const struct droce_hdr_tmpl *t, uint8_t *p, uint32_t l4_len)
{
	uint16_t udp_len = (uint16_t)(UDP_LEN0 + l4_len);
	uint8_t *ip = p + t->l2_len;
	struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)ip;
	uint32_t sum;

	memcpy(p, t->sent, DROCE_HDR_TMPL_COPY);
	((struct rte_udp_hdr *)(p + t->len - sizeof(struct rte_udp_hdr)))->dgram_len =
		rte_cpu_to_be_16(udp_len);
	if (t->l3.ipv6) {
		((struct rte_ipv6_hdr *)ip)->payload_len = rte_cpu_to_be_16(udp_len);
		return t->len;
	}
	ip4->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(struct rte_ipv4_hdr) + udp_len));
	sum = (uint32_t)t->ip_sum + rte_cpu_to_be_16((uint16_t)l4_len);
	sum = (sum & 0xffff) + (sum >> 16);
	ip4->hdr_checksum = (uint16_t)~sum;
	return t->len;
}

int
droce_hdr_tmpl_finish_later(const struct droce_hdr_tmpl *t, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_data_len(m) - (t->l2_len - DROCE_ICRC_LRH_LEN);

	/* A chained frame (payload in other segments) or a long one takes
	 * the general path, which masks in place, now. */
	if (m->nb_segs > 1 || len >= DROCE_CRC_MASKED_MAX)
		return droce_icrc_append(m, t->l2_len);
	/* One segment: room for the ICRC at its end, without
	 * rte_pktmbuf_append()'s walk to the last segment. */
	if (unlikely(rte_pktmbuf_tailroom(m) < DROCE_ICRC_LEN))
		return -ENOMEM;
	m->data_len = (uint16_t)(m->data_len + DROCE_ICRC_LEN);
	m->pkt_len += DROCE_ICRC_LEN;
	return 1;
}

void
droce_hdr_tmpl_seal(struct rte_mbuf *m)
{
	uint32_t start = m->l2_len - DROCE_ICRC_LRH_LEN;
	uint8_t *p = rte_pktmbuf_mtod_offset(m, uint8_t *, start);
	uint32_t len = rte_pktmbuf_data_len(m) - DROCE_ICRC_LEN - start;
	uint32_t crc = rte_cpu_to_le_32(droce_crc32_masked(
		p, len, droce_icrc_mask(m->l3_len == sizeof(struct rte_ipv6_hdr))));

	memcpy(p + len, &crc, DROCE_ICRC_LEN);
}
