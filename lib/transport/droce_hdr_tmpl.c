/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_hdr_tmpl.h"

/* The ones that stand for the LRH, just before the IP header. */
#define LRH_LEN 8
/* The UDP and IP lengths of a frame with no L4 payload: UDP header and ICRC. */
#define UDP_LEN0 (sizeof(struct rte_udp_hdr) + DROCE_ICRC_LEN)

struct droce_hdr_tmpl *
droce_hdr_tmpl_get(struct droce_hdr_tmpl *t, const struct droce_l3_addr *l3, uint16_t udp_sport,
		   uint8_t tclass)
{
	struct droce_l3_addr a;
	uint8_t *ip;

	if (likely(t->valid && t->udp_sport == udp_sport && t->tclass == tclass &&
		   memcmp(&t->l3, l3, sizeof(*l3)) == 0))
		return t;
	memcpy(&t->l3, l3, sizeof(*l3));
	t->udp_sport = udp_sport;
	t->tclass = tclass;
	a = *l3;
	a.udp_sport = udp_sport;
	a.tclass = tclass;
	t->len = (uint8_t)droce_l3_hdr_write_buf(t->sent, &a, 0);
	t->l2_len = (uint8_t)(RTE_ETHER_HDR_LEN + (l3->vlan_tci ? sizeof(struct rte_vlan_hdr) : 0));
	ip = t->sent + t->l2_len;
	/* What the checksum sums, for the update per frame. */
	t->ip_sum = l3->ipv6 ? 0 : (uint16_t)~((struct rte_ipv4_hdr *)ip)->hdr_checksum;
	memcpy(t->masked, t->sent, t->len);
	droce_icrc_mask_l3(t->masked + t->l2_len, l3->ipv6,
			   t->len - t->l2_len - sizeof(struct rte_udp_hdr));
	t->valid = true;
	return t;
}

/* Copy @p hdr (the sent or masked headers) to @p p with the lengths of an
 * L4 payload of @p l4_len bytes. */
static void
tmpl_put(const struct droce_hdr_tmpl *t, const uint8_t *hdr, uint8_t *p, uint32_t l4_len)
{
	uint16_t udp_len = (uint16_t)(UDP_LEN0 + l4_len);
	uint8_t *ip = p + t->l2_len;

	memcpy(p, hdr, t->len);
	((struct rte_udp_hdr *)(p + t->len - sizeof(struct rte_udp_hdr)))->dgram_len =
		rte_cpu_to_be_16(udp_len);
	if (t->l3.ipv6)
		((struct rte_ipv6_hdr *)ip)->payload_len = rte_cpu_to_be_16(udp_len);
	else
		((struct rte_ipv4_hdr *)ip)->total_length =
			rte_cpu_to_be_16((uint16_t)(sizeof(struct rte_ipv4_hdr) + udp_len));
}

unsigned
droce_hdr_tmpl_start(const struct droce_hdr_tmpl *t, uint8_t *p, uint32_t l4_len)
{
	tmpl_put(t, t->masked, p, l4_len);
	return t->len;
}

/* The sent headers over the masked ones; the IPv4 checksum grows by the
 * L4 length the total length gained (ones' complement sums add in either
 * byte order, so the big-endian addend goes in as it lies). */
static void
tmpl_unmask(const struct droce_hdr_tmpl *t, uint8_t *p, uint32_t l4_len)
{
	uint32_t sum;

	tmpl_put(t, t->sent, p, l4_len);
	if (t->l3.ipv6)
		return;
	sum = (uint32_t)t->ip_sum + rte_cpu_to_be_16((uint16_t)l4_len);
	sum = (sum & 0xffff) + (sum >> 16);
	((struct rte_ipv4_hdr *)(p + t->l2_len))->hdr_checksum = (uint16_t)~sum;
}

int
droce_hdr_tmpl_finish(const struct droce_hdr_tmpl *t, struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t l4_len = rte_pktmbuf_pkt_len(m) - t->len;
	struct droce_bth *bth = (struct droce_bth *)(p + t->len);
	uint32_t start = t->l2_len - LRH_LEN, crc;
	uint8_t *icrc, resv8a;

	/* A chained frame (payload in other segments) takes the general path. */
	if (m->nb_segs > 1) {
		tmpl_unmask(t, p, l4_len);
		return droce_icrc_append(m, t->l2_len);
	}
	/* resv8a is masked too; a CNP carries its BECN bit there. */
	resv8a = bth->resv8a;
	bth->resv8a = 0xff;
	crc = rte_cpu_to_le_32(droce_crc32(p + start, rte_pktmbuf_data_len(m) - start));
	bth->resv8a = resv8a;
	tmpl_unmask(t, p, l4_len);
	icrc = (uint8_t *)rte_pktmbuf_append(m, DROCE_ICRC_LEN);
	if (icrc == NULL)
		return -ENOMEM;
	memcpy(icrc, &crc, DROCE_ICRC_LEN);
	return 0;
}
